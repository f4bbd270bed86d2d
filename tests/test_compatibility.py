"""Pipelines saved by earlier versions load and link as they did when they were saved.

`tests/data/linker_saved_0_1` was written by `init-linker` (TF-IDF over 209 MEDIC
concepts) before the linker became a composition of stages and the package was split
into concept folders; `linker_saved_0_1.links.json` holds what that code linked. Its index
searched exactly (below AutoSparseIndex.v3's min_names).

`tests/data/linker_saved_words_0_1` was written by `init-linker` (TF-IDF over 185 MEDIC
concepts, `--components.bio_linker.index.min_names 1 --components.bio_linker.index.candidates 4
--components.bio_linker.threshold 0`) before the index kinds became builder functions over
plain classes: its AutoSparseIndex.v3 state holds word postings and searches through word
candidates, and with 4 candidates and no threshold its recorded kb_ents differ from the exact
search's, so a load that fell back to exact search (or to n-gram candidates) would fail here.
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


@pytest.mark.parametrize("saved", ["linker_saved_0_1", "linker_saved_words_0_1"])
def test_a_pipeline_saved_by_an_earlier_version_links_as_it_did(saved):
    recorded = json.loads((DATA / f"{saved}.links.json").read_text(encoding="utf8"))
    nlp = spacy.load(DATA / saved)
    linked = [_link(nlp, text, offsets) for text, offsets in recorded["texts"]]
    assert linked == recorded["links"]


def test_the_saved_word_candidate_index_links_differently_from_the_exact_search():
    """Guards the fixture itself: were its recorded links those of the exact search, the test
    above could not tell a word-candidate index from an exact one."""
    recorded = json.loads((DATA / "linker_saved_words_0_1.links.json").read_text(encoding="utf8"))
    exact = spacy.load(DATA / "linker_saved_words_0_1", config={
        "components": {"bio_linker": {"index": {"@misc": "spacy-biolink.SparseIndex.v1"}}}})
    linked = [_link(exact, text, offsets) for text, offsets in recorded["texts"]]
    assert linked != recorded["links"]
