"""bio_gazetteer: dictionary tags (B-/I- x type, longest match) in token.tag_ for the NER's
tok2vec, saved and loaded with the pipeline, built from configs/ner_bc5cdr_gazetteer.cfg."""
import gzip
from pathlib import Path

import pytest
import spacy
from spacy.util import load_config, load_model_from_config, registry

from spacy_biolink.errors import BioLinkError
from spacy_biolink.ner.gazetteer import Gazetteer, gazetteer_terms

ROOT = Path(__file__).parent.parent
MESH_TSV = Path(__file__).parent / "data" / "mesh" / "tsv"
TOKENIZER = {"@tokenizers": "spacy-biolink.BioTokenizer.v1"}
TERMS = {"Chemical": ["Naloxone", "naloxone hydrochloride", "lithium", "Ca(2+)", "NO"],
         "Disease": ["lithium toxicity", "Hypotension", "lithium"]}


def gazetteer_nlp(terms=TERMS):
    nlp = spacy.blank("en", config={"nlp": {"tokenizer": TOKENIZER}})
    nlp.add_pipe("bio_gazetteer").initialize(nlp=nlp, terms=terms)
    return nlp


def tags(doc):
    return [(t.text, t.tag_) for t in doc if t.tag_ != "O"]


def test_longest_match_sets_begin_inside_and_type():
    doc = gazetteer_nlp()("Naloxone hydrochloride reversed hypotension, not naloxone alone.")
    assert tags(doc) == [("Naloxone", "B-Chemical"), ("hydrochloride", "I-Chemical"),
                         ("hypotension", "B-Disease"), ("naloxone", "B-Chemical")]
    assert [t.tag_ for t in doc].count("O") == len(doc) - 4


def test_longer_name_wins_and_a_name_of_two_types_gets_both():
    doc = gazetteer_nlp()("Lithium toxicity after lithium.")
    assert tags(doc) == [("Lithium", "B-Disease"), ("toxicity", "I-Disease"),
                         ("lithium", "B-Chemical|Disease")]


def test_names_split_by_the_pipeline_tokenizer_and_short_names_left_out():
    nlp = gazetteer_nlp()
    # "Ca(2+)" alone is 5 BioTokenizer tokens ("2", "+"), 4 inside "Ca(2+)-induced" ("2+"):
    # the spelling matches where the tokens end; "NO" is under min_chars
    assert [t.text for t in nlp.make_doc("Ca(2+)")] == ["Ca", "(", "2", "+", ")"]
    doc = nlp("Ca(2+)-induced NO release.")
    assert tags(doc) == [("Ca", "B-Chemical"), ("(", "I-Chemical"), ("2+", "I-Chemical"),
                         (")", "I-Chemical")]
    # a name must start and end where tokens do
    assert tags(nlp("Lithiumx and naloxonehydrochloride")) == []
    assert len(nlp.get_pipe("bio_gazetteer")) == 6
    assert nlp.make_doc("").to_array(["TAG"]).shape == (0,)
    assert len(nlp("")) == 0


def test_the_tags_reach_the_tok2vec_as_the_TAG_attribute():
    nlp = gazetteer_nlp()
    doc = nlp("lithium toxicity")
    assert list(doc.to_array(["TAG"])) == [nlp.vocab.strings["B-Disease"],
                                          nlp.vocab.strings["I-Disease"]]


def test_save_and_load_round_trip(tmp_path):
    nlp = gazetteer_nlp()
    text = "Naloxone hydrochloride and lithium toxicity; lithium."
    before = tags(nlp(text))
    nlp.to_disk(tmp_path / "gaz")
    terms_file = tmp_path / "gaz" / "bio_gazetteer" / "terms.tsv.gz"
    lines = gzip.decompress(terms_file.read_bytes()).decode("utf8").splitlines()
    assert sorted(lines) == sorted(["Chemical\tnaloxone", "Chemical\tnaloxone hydrochloride",
                                    "Chemical|Disease\tlithium", "Chemical\tca ( 2 + )",
                                    "Disease\tlithium toxicity", "Disease\thypotension"])
    loaded = spacy.load(tmp_path / "gaz")
    assert tags(loaded(text)) == before
    assert loaded.get_pipe("bio_gazetteer").terms == nlp.get_pipe("bio_gazetteer").terms


def test_bad_terms_file_and_bad_type_are_errors(tmp_path):
    nlp = gazetteer_nlp()
    nlp.to_disk(tmp_path / "gaz")
    (tmp_path / "gaz" / "bio_gazetteer" / "terms.tsv.gz").write_bytes(
        gzip.compress(b"Chemical\tnaloxone\nno tab here\n"))
    with pytest.raises(BioLinkError, match=r"E766.*terms.tsv.gz:2"):
        spacy.load(tmp_path / "gaz")
    with pytest.raises(BioLinkError, match="E765"):
        Gazetteer(nlp).add("Chemical|Disease", ["x"])


# The test MeSH files hold a supplementary record mapped to a missing descriptor (W954)
@pytest.mark.filterwarnings("ignore:.*W954")
def test_terms_from_dictionaries(tmp_path):
    medic = tmp_path / "medic.tsv"
    medic.write_text("MESH:D007022||Hypotension|Low Blood Pressure\n", encoding="utf8")
    terms = gazetteer_terms({"Disease": {"path": str(medic), "format": "medic"},
                             "Chemical": {"path": str(MESH_TSV), "format": "mesh-tsv",
                                          "mesh_branches": ["D"]}})
    assert sorted(terms["Disease"]) == ["Hypotension", "Low Blood Pressure"]
    assert "Insulin" in terms["Chemical"] and "neutral insulin" in terms["Chemical"]
    assert "Diabetes Mellitus" not in terms["Chemical"]


def test_chemistry_forms_tag_what_running_text_writes_for_a_chemical_name(tmp_path):
    # MeSH names "Quetiapine Fumarate", never "quetiapine" or "Zn(2+)"; the chemical
    # linker folds them, the gazetteer has to hold them as written
    mesh = tmp_path / "mesh.tsv"
    mesh.write_text("D000069348\tQuetiapine Fumarate\t\tD02.886\t\n"
                    "D015032\tZinc\t\tD01.268\t\n", encoding="utf8")
    source = {"path": str(mesh), "format": "mesh-tsv", "mesh_branches": ["D"]}
    text = "Quetiapine and Zn(2+) with quetiapine fumarate"
    plain = gazetteer_nlp(gazetteer_terms({"Chemical": source}))(text)
    assert tags(plain) == [("quetiapine", "B-Chemical"), ("fumarate", "I-Chemical")]
    terms = gazetteer_terms({"Chemical": {**source, "chemistry_forms": True}})
    assert "Quetiapine" in terms["Chemical"] and "Zn(2+)" in terms["Chemical"]
    doc = gazetteer_nlp(terms)(text)
    assert [t.text for t in doc if t.tag_.startswith("B-")] == ["Quetiapine", "Zn", "quetiapine"]
    with pytest.raises(BioLinkError, match="E772"):
        gazetteer_terms({"Chemical": {**source, "chemistry_forms": "yes"}})


@pytest.mark.filterwarnings("ignore:.*W954")
def test_several_dictionaries_tag_one_type_through_label(tmp_path):
    # MEDIC 2012 and MeSH 2024's diseases both tag Disease: a source named otherwise
    # says which type it tags with `label`.
    medic = tmp_path / "medic.tsv"
    medic.write_text("MESH:D007022||Hypotension|Low Blood Pressure\n", encoding="utf8")
    terms = gazetteer_terms({"Disease": {"path": str(medic), "format": "medic"},
                             "Disease_mesh": {"label": "Disease", "path": str(MESH_TSV),
                                              "format": "mesh-tsv", "mesh_branches": ["C"]}})
    assert list(terms) == ["Disease"]
    assert "Hypotension" in terms["Disease"] and "Diabetes Mellitus" in terms["Disease"]
    doc = gazetteer_nlp(terms)("Low blood pressure and diabetes mellitus.")
    assert tags(doc) == [("Low", "B-Disease"), ("blood", "I-Disease"),
                         ("pressure", "I-Disease"), ("diabetes", "B-Disease"),
                         ("mellitus", "I-Disease")]
    with pytest.raises(BioLinkError, match="E765"):
        gazetteer_nlp(gazetteer_terms({"Disease_mesh": {"label": 3, "path": str(medic),
                                                        "format": "medic"}}))
    with pytest.raises(BioLinkError, match="E765"):
        gazetteer_nlp(gazetteer_terms({"Disease_mesh": {"label": "Disease|Chemical",
                                                        "path": str(medic),
                                                        "format": "medic"}}))


@pytest.mark.filterwarnings("ignore:.*W954")
def test_the_gazetteer_config_builds_and_initializes_its_terms(tmp_path):
    config = load_config(ROOT / "configs" / "ner_bc5cdr_gazetteer.cfg")
    nlp = load_model_from_config(config, auto_fill=True, validate=True)
    assert nlp.pipe_names == ["bio_gazetteer", "tok2vec", "ner"]
    embed = nlp.config["components"]["tok2vec"]["model"]["embed"]
    assert embed["attrs"][-1] == "TAG" and len(embed["rows"]) == len(embed["attrs"])
    assert nlp.config["training"]["annotating_components"] == ["bio_gazetteer"]
    medic = tmp_path / "medic.tsv"
    medic.write_text("MESH:D007022||Hypotension\n", encoding="utf8")
    init = nlp.config.interpolate()["initialize"]["components"]["bio_gazetteer"]
    init["terms"]["sources"]["Disease"]["path"] = str(medic)
    init["terms"]["sources"]["Chemical"]["path"] = str(MESH_TSV)
    init["terms"]["sources"]["Disease_mesh"]["path"] = str(MESH_TSV)
    terms = registry.resolve(init)["terms"]
    nlp.get_pipe("bio_gazetteer").initialize(nlp=nlp, terms=terms)
    doc = nlp.get_pipe("bio_gazetteer")(nlp.make_doc("Insulin-induced hypotension"))
    assert tags(doc) == [("Insulin", "B-Chemical"), ("hypotension", "B-Disease")]
    # Disease also from MeSH's C and F03 branches, not from its D (chemical) branch
    doc = nlp.get_pipe("bio_gazetteer")(nlp.make_doc("Melancholia and diabetes, not calcimycin"))
    assert tags(doc) == [("Melancholia", "B-Disease"), ("diabetes", "B-Disease"),
                         ("calcimycin", "B-Chemical")]
