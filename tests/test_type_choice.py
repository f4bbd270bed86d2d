"""Types a user can choose: the bio_types pipe, set at spacy.load or by `link --types`."""
import json
import warnings

import pytest
import spacy

from spacy_biolink.errors import BioLinkError
from spacy_biolink.ner.type_choice import TypeChoice
from spacy_biolink.runners.local import link_file

from .conftest import invoke_cli, make_linker_nlp

TEXT = "BRCA1 carriers with breast cancer took tamoxifen."
PATTERNS = [{"label": "Gene", "pattern": "BRCA1"},
            {"label": "Disease", "pattern": "breast cancer"},
            {"label": "Chemical", "pattern": "tamoxifen"}]


@pytest.fixture
def six_type_dir(tiny_dictionary, tmp_path):
    """A ruler tagging three types, bio_types keeping all by default, a disease linker."""
    nlp = make_linker_nlp(tiny_dictionary, threshold=0.5, labels=["Disease"])
    nlp.add_pipe("entity_ruler", before="bio_linker").add_patterns(PATTERNS)
    nlp.add_pipe("bio_types", before="bio_linker")
    path = tmp_path / "model"
    nlp.to_disk(path)
    return path


def labels(doc):
    return [(ent.text, ent.label_) for ent in doc.ents]


def test_spacy_load_config_keeps_the_chosen_types(six_type_dir):
    everything = spacy.load(six_type_dir)
    assert labels(everything(TEXT)) == [("BRCA1", "Gene"), ("breast cancer", "Disease"),
                                        ("tamoxifen", "Chemical")]
    chosen = spacy.load(six_type_dir, config={"components": {"bio_types": {
        "keep": ["Disease", "Chemical"]}}})
    doc = chosen(TEXT)
    assert labels(doc) == [("breast cancer", "Disease"), ("tamoxifen", "Chemical")]
    assert doc.ents[0].kb_id_ == "D001943"
    # A corpus's own type name stands for its six-type label.
    biored_names = spacy.load(six_type_dir, config={"components": {"bio_types": {
        "keep": ["GeneOrGeneProduct"]}}})
    assert labels(biored_names(TEXT)) == [("BRCA1", "Gene")]


def test_a_kept_name_no_pipe_predicts_is_warned_about(six_type_dir):
    nlp = spacy.load(six_type_dir, config={"components": {"bio_types": {"keep": ["Diseases"]}}})
    with pytest.warns(UserWarning, match="W360.*Diseases"):
        assert labels(nlp(TEXT)) == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nlp(TEXT)  # said once


def test_add_pipe_on_a_pipeline_without_it(tiny_dictionary):
    nlp = make_linker_nlp(tiny_dictionary, threshold=0.5)
    nlp.add_pipe("entity_ruler", before="bio_linker").add_patterns(PATTERNS)
    nlp.add_pipe("bio_types", before="bio_linker", config={"keep": ["Chemical"]})
    assert labels(nlp(TEXT)) == [("tamoxifen", "Chemical")]


def test_keep_must_be_a_list_of_labels():
    with pytest.raises(BioLinkError, match="E366"):
        TypeChoice(keep="Disease")
    with pytest.raises(BioLinkError, match="E366"):
        TypeChoice(keep=["Disease", ""])


def test_link_types_option(six_type_dir, tiny_dictionary, tmp_path):
    (tmp_path / "in.txt").write_text(TEXT + "\n", encoding="utf8")
    invoke_cli("link", tmp_path / "in.txt", "--model", six_type_dir, "--output",
               tmp_path / "out.jsonl", "--types", "Chemical,Gene")
    record = json.loads((tmp_path / "out.jsonl").read_text(encoding="utf8"))
    assert [e["label"] for e in record["entities"]] == ["Gene", "Chemical"]
    # A pipeline without bio_types gets one before its first linker.
    nlp = make_linker_nlp(tiny_dictionary, threshold=0.5)
    nlp.add_pipe("entity_ruler", before="bio_linker").add_patterns(PATTERNS)
    link_file(nlp, tmp_path / "in.txt", tmp_path / "out2.jsonl", keep_types=["Disease"],
              progress=False)
    record = json.loads((tmp_path / "out2.jsonl").read_text(encoding="utf8"))
    assert [(e["text"], e["kb_id"]) for e in record["entities"]] == [("breast cancer", "D001943")]
    assert nlp.pipe_names.index("bio_types") < nlp.pipe_names.index("bio_linker")
    bad = invoke_cli("link", tmp_path / "in.txt", "--model", six_type_dir, "--output",
                     tmp_path / "o", "--engine", "ray", "--types", "Gene", check=False)
    assert bad.returncode == 1 and "E367" in bad.stdout + bad.stderr
