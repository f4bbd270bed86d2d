"""Pipelines saved by earlier versions load and link as they did when they were saved.

`tests/data/linker_saved_0_1` was written by `init-linker` (TF-IDF over 209 MEDIC
concepts) before the linker became a composition of stages and the package was split
into concept folders; `linker_saved_0_1.links.json` holds what that code linked.
"""
import json
from pathlib import Path

import pytest
import spacy

DATA = Path(__file__).parent / "data"


def _link(nlp, text, offsets):
    doc = nlp.make_doc(text)
    doc.ents = [doc.char_span(s, e, label="Disease", alignment_mode="expand")
                for s, e in offsets]
    doc = nlp(doc)
    return [[e.text, e.kb_id_, [[c, s] for c, s in e._.kb_ents]] for e in doc.ents]


@pytest.mark.parametrize("saved", ["linker_saved_0_1"])
def test_a_pipeline_saved_by_an_earlier_version_links_as_it_did(saved):
    recorded = json.loads((DATA / f"{saved}.links.json").read_text(encoding="utf8"))
    nlp = spacy.load(DATA / saved)
    linked = [_link(nlp, text, offsets) for text, offsets in recorded["texts"]]
    assert linked == recorded["links"]
