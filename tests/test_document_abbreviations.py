"""Document-level abbreviations on full text: a definition in one passage of a BioC
document reaches the short forms of every other passage, because the passages are one Doc."""
import json

import pytest
import spacy

from spacy_biolink.corpora.bioc import read_bioc
from spacy_biolink.runners.local import link_file
from spacy_biolink.text.abbreviations import AbbreviationResolver

from .conftest import make_linker_nlp

# A full-text article's passages: the definition in the abstract (passage 1), the short
# form alone in passage 5, sections apart.
PASSAGES = [
    ("title", "Outcomes in older adults"),
    ("abstract", "Type 2 diabetes (T2D) is common in the elderly."),
    ("section_title", "Methods"),
    ("paragraph", "We followed 300 adults for ten years."),
    ("section_title", "Results"),
    ("paragraph", "Most patients with T2D were treated with metformin."),
]


def write_article(path):
    passages, offset = [], 0
    for kind, text in PASSAGES:
        passages.append({"offset": offset, "infons": {"type": kind}, "text": text,
                         "annotations": []})
        offset += len(text) + 1
    path.write_text(json.dumps({"source": "test", "date": "", "key": "", "documents": [
        {"id": "PMC1", "passages": passages}]}), encoding="utf8")
    return path


def short_form_offset():
    start = sum(len(text) + 1 for _, text in PASSAGES[:5])
    return start + PASSAGES[5][1].index("T2D")


@pytest.fixture
def short_form_tagger(tiny_dictionary, tmp_path):
    """An NER stand-in that tags only the short form; the linker must spell it out."""
    nlp = make_linker_nlp(tiny_dictionary, threshold=0.5)
    nlp.add_pipe("entity_ruler", before="bio_linker").add_patterns(
        [{"label": "Disease", "pattern": "T2D"}])
    return nlp


def test_the_definition_of_passage_one_is_known_in_passage_five(tmp_path):
    document, = read_bioc(write_article(tmp_path / "a.json"))
    doc = spacy.blank("en")(document.text)
    assert AbbreviationResolver(doc.vocab).long_forms(doc) == {"T2D": "Type 2 diabetes"}


def test_linking_a_bioc_document_resolves_a_short_form_passages_later(short_form_tagger,
                                                                        tmp_path):
    article = write_article(tmp_path / "a.json")
    link_file(short_form_tagger, article, tmp_path / "out.bioc.json", progress=False)
    out = json.loads((tmp_path / "out.bioc.json").read_text(encoding="utf8"))
    passages = out["documents"][0]["passages"]
    annotation, = passages[5]["annotations"]
    assert annotation["infons"]["identifier"] == "D003924"
    assert annotation["locations"] == [{"offset": short_form_offset(), "length": 3}]
    # The passage alone, as a linker of one passage at a time sees it, has no definition.
    alone = short_form_tagger(PASSAGES[5][1])
    assert alone.ents[0].kb_id_ != "D003924"


def test_bio_propagate_carries_the_long_forms_label_to_passage_five(tiny_dictionary, tmp_path):
    nlp = make_linker_nlp(tiny_dictionary, threshold=0.5)
    nlp.add_pipe("entity_ruler", before="bio_linker").add_patterns(
        [{"label": "Disease", "pattern": "Type 2 diabetes"}])
    nlp.add_pipe("bio_propagate", before="bio_linker")
    article = write_article(tmp_path / "a.json")
    link_file(nlp, article, tmp_path / "out.jsonl", progress=False)
    record = json.loads((tmp_path / "out.jsonl").read_text(encoding="utf8"))
    found = {(e["start"], e["text"], e["kb_id"]) for e in record["entities"]}
    assert (short_form_offset(), "T2D", "D003924") in found


def test_a_short_form_defined_in_one_number_is_known_in_the_other():
    doc = spacy.blank("en")(
        "Gastroenteropancreatic neuroendocrine tumors (GEP-NETs) are rare; each GEP-NET "
        "differs. A single nucleotide polymorphism (SNP) was typed with other SNPs. "
        "Acquired immunodeficiency syndrome (AIDS). Antiepileptic drug (AED) use. "
        "Automated external defibrillators (AEDs) were placed.")
    resolver = AbbreviationResolver(doc.vocab)
    assert "GEP-NET" not in resolver.long_forms(doc)  # the definitions alone
    found = resolver.long_forms(doc, other_numbers=True)
    assert found["GEP-NET"] == found["GEP-NETs"] == "Gastroenteropancreatic neuroendocrine tumors"
    assert found["SNPs"] == found["SNP"] == "single nucleotide polymorphism"
    # a short form ending in a capital S is taken to have no plural
    assert "AIDSs" not in found and "AID" not in found
    # two short forms the text defines keep their own long forms
    assert found["AED"] == "Antiepileptic drug" and found["AEDs"] == \
        "Automated external defibrillators"


def test_the_singular_of_a_plural_short_form_is_linked_and_propagated(tiny_dictionary):
    text = "Breast tumors (BTs) were seen in 12 women. One BT was large."
    nlp = make_linker_nlp(tiny_dictionary, threshold=0.5)
    nlp.add_pipe("entity_ruler", before="bio_linker").add_patterns(
        [{"label": "Disease", "pattern": "Breast tumors"}])
    nlp.add_pipe("bio_propagate", before="bio_linker")
    doc = nlp(text)
    assert [(e.text, e.kb_id_) for e in doc.ents] == [
        ("Breast tumors", "D001943"), ("BTs", "D001943"), ("BT", "D001943")]
