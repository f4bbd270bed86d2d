"""Triplet-Search's search strategies: which names are indexed (index_sources O, D, OD)
and the sieve (D names first, the main index for the rest)."""
import warnings

import numpy
import pytest
import spacy
import srsly

from spacy_biolink.kb.dictionary import SOURCE_DATA, SOURCE_ONTOLOGY, Concept, ConceptDictionary
from spacy_biolink.errors import BioLinkError

from .conftest import doc_with_ents

# Qwxz Syndrome's ontology name shares no character 3-gram with "sugar disease", the
# training mention that names it: only the D name can reach it.
ONTOLOGY = [Concept(["D001"], ["Huntington Disease", "Huntington's chorea"]),
            Concept(["D002"], ["Breast Neoplasms", "breast cancer"]),
            Concept(["D003"], ["Qwxz"])]

CORPUS = ("1|t|Sugar disease and breast cancer.\n"
          "1|a|Chorea was seen.\n"
          "1\t0\t13\tSugar disease\tDisease\tD003\n"
          "1\t18\t31\tbreast cancer\tDisease\tD002\n"
          "1\t33\t39\tChorea\tDisease\tD001\n"
          "\n")

TEXT = "sugar; sugar disease; breast cancer; huntington; chorea."
MENTIONS = ["sugar", "sugar disease", "breast cancer", "huntington", "chorea"]


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text(CORPUS, encoding="utf8")
    return path


def make_nlp(corpus, **config):
    nlp = spacy.blank("en")
    nlp.add_pipe("bio_linker", config=config)
    nlp.get_pipe("bio_linker").initialize(
        nlp=nlp, dictionary=ConceptDictionary.from_concepts(ONTOLOGY), augment=[corpus])
    return nlp


def links(nlp):
    """kb_ents of each mention of TEXT."""
    doc = nlp(doc_with_ents(nlp, TEXT, MENTIONS))
    return {ent.text: ent._.kb_ents for ent in doc.ents}


def concepts(kb_ents):
    return {concept_id for concept_id, _ in kb_ents}


def test_augmentation_marks_where_each_pair_came_from(corpus):
    d = make_nlp(corpus).get_pipe("bio_linker").dictionary
    sources = {}
    for n, name in enumerate(d.names):
        for pos in range(d.name_concepts_indptr[n], d.name_concepts_indptr[n + 1]):
            sources[(name, d.primary_id(int(d.name_concepts[pos])))] = int(d.name_concept_sources[pos])
    # A training mention that is also an ontology name is both.
    assert sources[("breast cancer", "D002")] == SOURCE_ONTOLOGY | SOURCE_DATA
    assert sources[("Sugar disease", "D003")] == SOURCE_DATA
    assert sources[("Chorea", "D001")] == SOURCE_DATA
    assert sources[("Qwxz", "D003")] == SOURCE_ONTOLOGY
    # Saved without the array (older dictionaries): every pair is ontology.
    meta, arrays = d.to_state()
    del arrays["name_concept_sources"]
    old = ConceptDictionary.from_state(meta, arrays)
    assert (old.name_concept_sources == SOURCE_ONTOLOGY).all()
    assert ConceptDictionary.from_bytes(d.to_bytes()).name_concept_sources.tolist() == \
        d.name_concept_sources.tolist()


def test_index_sources_o_never_reaches_a_concept_only_a_d_name_names(corpus):
    ontology = links(make_nlp(corpus, index_sources="O"))
    assert all("D003" not in concepts(kb_ents) for kb_ents in ontology.values())
    assert ontology["breast cancer"][0] == ("D002", 1.0)
    assert ontology["huntington"][0][0] == "D001"
    both = links(make_nlp(corpus, index_sources="OD"))
    assert both["sugar disease"][0] == ("D003", 1.0)


def test_index_sources_d_only_reaches_d_names(corpus):
    nlp = make_nlp(corpus, index_sources="D")
    linker = nlp.get_pipe("bio_linker")
    assert linker.index.n_vectors == 3  # the three training mentions
    found = links(nlp)
    assert found["sugar disease"][0] == ("D003", 1.0)
    assert found["chorea"][0] == ("D001", 1.0)
    # "huntington" shares n-grams only with the ontology's Huntington names.
    assert found["huntington"] == []
    for kb_ents in found.values():
        assert concepts(kb_ents) <= {"D001", "D002", "D003"}
    # The same with one row per concept (Triplet-Search's D-C): only concepts with D names.
    concept_level = make_nlp(corpus, index_sources="D", index_level="concept")
    assert concept_level.get_pipe("bio_linker").index.n_vectors == 3
    assert links(concept_level)["sugar disease"][0] == ("D003", 1.0)


def test_index_sources_d_without_d_names_says_what_to_do():
    nlp = spacy.blank("en")
    nlp.add_pipe("bio_linker", config={"index_sources": "D"})
    with pytest.raises(BioLinkError, match="E108.*--augment"):
        nlp.get_pipe("bio_linker").initialize(dictionary=ConceptDictionary.from_concepts(ONTOLOGY))


def test_sieve_answers_from_d_and_falls_back_to_the_main_index(corpus):
    ontology = links(make_nlp(corpus, index_sources="O"))
    data = links(make_nlp(corpus, index_sources="D"))
    sieved = links(make_nlp(corpus, index_sources="O", sieve_threshold=0.95))
    # Equal to a training mention: answered from D (the main O index cannot reach D003).
    assert sieved["sugar disease"] == data["sugar disease"]
    assert sieved["sugar disease"][0] == ("D003", 1.0)
    assert sieved["chorea"] == data["chorea"]
    # Best D score below the threshold: the main index answers.
    assert data["sugar"] and data["sugar"][0][1] < 0.95 and data["sugar"] != ontology["sugar"]
    assert sieved["sugar"] == ontology["sugar"]
    assert sieved["huntington"] == ontology["huntington"] != []


def test_sieve_searches_once_per_batch(corpus):
    nlp = make_nlp(corpus, index_sources="O", sieve_threshold=0.95)
    linker = nlp.get_pipe("bio_linker")
    calls = {"sieve": [], "main": []}
    for name, index in (("sieve", linker.linker.sieve.index), ("main", linker.index)):
        def counted(queries, k, _search=index.search, _name=name):
            calls[_name].append(queries.shape[0])
            return _search(queries, k)
        index.search = counted
    docs = [doc_with_ents(nlp, TEXT, MENTIONS) for _ in range(3)]
    list(nlp.pipe(docs, batch_size=8))
    # Five distinct texts, all in one D search; "sugar" and "huntington", below the
    # threshold, in one main search (the other three are training mentions).
    assert calls == {"sieve": [5], "main": [2]}


@pytest.mark.parametrize("config", [{"index_sources": "O", "sieve_threshold": 0.95},
                                    {"index_sources": "D", "index_level": "concept"},
                                    {"index_sources": "OD", "sieve_threshold": 0.9}])
def test_round_trips_give_identical_kb_ents(corpus, tmp_path, config):
    nlp = make_nlp(corpus, **config)
    expected = links(nlp)
    nlp.to_disk(tmp_path / "nlp")
    if config.get("sieve_threshold") is not None:
        assert (tmp_path / "nlp" / "bio_linker" / "sieve").is_dir()
    assert links(spacy.load(tmp_path / "nlp")) == expected
    saved = srsly.msgpack_loads(nlp.get_pipe("bio_linker").to_bytes())
    assert ("sieve" in saved) == (config.get("sieve_threshold") is not None)
    fresh = spacy.blank("en")
    fresh.add_pipe("bio_linker", config=config)
    assert links(fresh.from_bytes(nlp.to_bytes())) == expected


def test_add_names_reach_the_sieve(corpus, tmp_path):
    nlp = make_nlp(corpus, index_sources="O", sieve_threshold=0.95)
    linker = nlp.get_pipe("bio_linker")

    def link(pipeline):
        doc = doc_with_ents(pipeline, "A huntington sugar case.", ["huntington sugar"])
        return pipeline(doc).ents[0]._.kb_ents

    assert link(nlp)[0][0] == "D001"  # from the O index: no D name is close enough
    # (Its n-grams are all known to the TF-IDF: add_names does not refit it.)
    assert linker.add_names([("huntington sugar", "D003")]) == 1
    # An added name is D: the O index does not hold it, the sieve does.
    assert linker.index.n_vectors == 5
    assert linker.linker.sieve.names.n_names == 4
    assert link(nlp) == [("D003", 1.0)]
    nlp.to_disk(tmp_path / "nlp")
    assert link(spacy.load(tmp_path / "nlp")) == [("D003", 1.0)]


def test_sieve_is_rebuilt_when_a_saved_pipeline_has_none(corpus):
    nlp = make_nlp(corpus, index_sources="O", sieve_threshold=0.95)
    expected = links(nlp)
    fresh = spacy.blank("en")
    fresh.add_pipe("bio_linker", config={"index_sources": "O", "sieve_threshold": 0.95})
    fresh.get_pipe("bio_linker").from_bytes(nlp.get_pipe("bio_linker").to_bytes(exclude=["sieve"]))
    assert fresh.get_pipe("bio_linker").linker.sieve.active
    assert links(fresh) == expected


def test_sieve_without_d_names_warns():
    nlp = spacy.blank("en")
    nlp.add_pipe("bio_linker", config={"sieve_threshold": 0.95})
    with pytest.warns(UserWarning, match="W003"):
        nlp.get_pipe("bio_linker").initialize(dictionary=ConceptDictionary.from_concepts(ONTOLOGY))


def test_sieve_over_scores_that_are_not_cosines_warns(corpus):
    """The threshold is a cosine: an encoder that declares inner-product scores (BioSyn,
    an unnormalized transformer) makes it meaningless, and initialize says so."""
    nlp = spacy.blank("en")
    nlp.add_pipe("bio_linker", config={"sieve_threshold": 0.95})
    linker = nlp.get_pipe("bio_linker")
    linker.model.attrs["similarity"] = "inner_product"
    with pytest.warns(UserWarning, match="W004.*by inner_product"):
        linker.initialize(dictionary=ConceptDictionary.from_concepts(ONTOLOGY),
                          augment=[str(corpus)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make_nlp(corpus, sieve_threshold=0.95)  # TF-IDF scores are cosines: no warning


@pytest.mark.parametrize("key,value", [("index_sources", "X"), ("index_sources", "DO"),
                                       ("sieve_threshold", 2.0), ("sieve_threshold", -1.5)])
def test_bad_config_values_raise_a_clear_error(key, value):
    nlp = spacy.blank("en")
    with pytest.raises(BioLinkError, match=f"E102.*`{key}` must be.*got {value!r}"):
        nlp.add_pipe("bio_linker", config={key: value})


def test_select_names_keeps_concepts_and_drops_corpus_counts_for_o():
    d = ConceptDictionary.from_concepts(ONTOLOGY)
    augmented, _ = d.with_names([("Sugar disease", "D003"), ("breast cancer", "D002")])
    ontology, rows = augmented.select_names(SOURCE_ONTOLOGY)
    assert list(ontology.names) == list(d.names)
    assert [augmented.names[int(r)] for r in rows] == list(d.names)
    assert ontology.concept_ids is augmented.concept_ids
    assert not ontology.name_concept_counts.any()
    data, rows = augmented.select_names(SOURCE_DATA)
    assert list(data.names) == ["breast cancer", "Sugar disease"]
    assert data.name_concept_counts.tolist() == [1, 1]
    assert [data.primary_id(int(c)) for c in data.name_concepts] == ["D002", "D003"]
    both, rows = augmented.select_names(SOURCE_ONTOLOGY | SOURCE_DATA)
    assert both is augmented
    assert numpy.array_equal(rows, numpy.arange(augmented.n_names))
