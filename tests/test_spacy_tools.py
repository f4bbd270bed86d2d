"""bio_linker as spaCy's own command line tools see it."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from spacy.tokens import DocBin

ROOT = Path(__file__).resolve().parents[1]


def test_spacy_evaluate_writes_the_linking_scores_where_the_readme_says(tiny_dictionary,
                                                                         tmp_path):
    # An entity ruler stands in for a trained NER: spaCy evaluates on raw text.
    nlp = spacy.blank("en")
    nlp.add_pipe("entity_ruler").add_patterns([
        {"label": "Disease", "pattern": "NIDDM"},
        {"label": "Disease", "pattern": [{"LOWER": "breast"}, {"LOWER": "cancer"}]}])
    nlp.add_pipe("bio_linker")
    with pytest.warns(UserWarning, match="W001"):  # "HD" names two concepts
        nlp.get_pipe("bio_linker").initialize(dictionary=tiny_dictionary)
    nlp.to_disk(tmp_path / "model")
    gold = nlp.make_doc("NIDDM and breast cancer were seen.")
    gold.ents = [gold.char_span(0, 5, "Disease", kb_id="D003924"),
                 gold.char_span(10, 23, "Disease", kb_id="D006816")]  # wrong on purpose
    DocBin(docs=[gold]).to_disk(tmp_path / "gold.spacy")

    result = subprocess.run([sys.executable, "-m", "spacy", "evaluate", str(tmp_path / "model"),
                             str(tmp_path / "gold.spacy"), "--output", str(tmp_path / "m.json")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    scores = json.loads((tmp_path / "m.json").read_text())
    assert scores["bio_linker_acc"] == 0.5
    assert scores["bio_linker_micro_p"] == scores["bio_linker_micro_r"] == 0.5

    # The documentation (docs/cli.md) names the keys and the option that writes them.
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf8")
    paragraph = next(p for p in page.split("\n\n") if p.startswith("`spacy evaluate`"))
    assert "--output" in paragraph
    named = set(re.findall(r"bio_linker_\w+", paragraph))
    assert {"bio_linker_acc", "bio_linker_micro_p"} <= named
    assert named <= set(scores), named - set(scores)


def test_a_linker_without_entities_before_it_says_so_once(linker_nlp):
    # spaCy's own analysis names what the linker reads.
    assert linker_nlp.analyze_pipes()["problems"]["bio_linker"] == ["doc.ents"]
    with pytest.warns(UserWarning, match=r"W900.*doc\.ents") as caught:
        docs = list(linker_nlp.pipe(["Patients with NIDDM.", "Huntington disease."]))
        linker_nlp("And breast cancer.")
    assert not any(doc.ents for doc in docs)
    assert sum("W900" in str(w.message) for w in caught) == 1


def test_no_warning_when_a_component_before_the_linker_sets_entities(tiny_dictionary):
    import warnings

    nlp = spacy.blank("en")
    nlp.add_pipe("entity_ruler").add_patterns([{"label": "Disease", "pattern": "NIDDM"}])
    nlp.add_pipe("bio_linker")
    with pytest.warns(UserWarning, match="W001"):
        nlp.get_pipe("bio_linker").initialize(dictionary=tiny_dictionary)
    assert not nlp.analyze_pipes()["problems"]["bio_linker"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # The second text has no entity: the ruler found none, which is not a set-up fault.
        docs = list(nlp.pipe(["Patients with NIDDM.", "Nothing here."]))
    assert docs[0].ents[0].kb_id_ == "D003924" and not docs[1].ents


def test_docs_that_bring_their_entities_raise_no_warning(linker_nlp):
    import warnings

    from .conftest import doc_with_ents

    doc = doc_with_ents(linker_nlp, "Patients with NIDDM.", ["NIDDM"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert linker_nlp(doc).ents[0].kb_id_ == "D003924"
