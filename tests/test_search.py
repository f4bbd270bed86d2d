import numpy
import pytest
from scipy import sparse

from spacy_biolink.kb.dictionary import Concept, ConceptDictionary
from spacy_biolink.index import SparseIndex
from spacy_biolink.index.concepts import names_to_concepts, search_concepts


def one_hot_index(n_names, n_features):
    index = SparseIndex()
    index.build(sparse.identity(n_names, dtype="f", format="csr")[:, :n_features])
    return index


def test_concept_scores_are_their_best_name_and_shared_names_give_both():
    d = ConceptDictionary.from_concepts([Concept(["A"], ["x", "y"]), Concept(["B"], ["y", "z"]),
                                         Concept(["C"], ["w"])])
    # names: x(0)->A, y(1)->A,B, z(2)->B, w(3)->C
    scores = numpy.array([0.9, 0.7, 0.3, 0.0], dtype="f")
    name_ids = numpy.array([1, 0, 3, -1])
    result = names_to_concepts(d, scores, name_ids)
    assert [c for c, _ in result] == [0, 1, 2]
    assert [s for _, s in result] == pytest.approx([0.9, 0.9, 0.3])


def test_search_deepens_until_k_distinct_concepts():
    # Concept A has 30 synonyms that all outscore concept B's single name.
    names_a = [f"a{i}" for i in range(30)]
    d = ConceptDictionary.from_concepts([Concept(["A"], names_a), Concept(["B"], ["b"])])
    features = d.n_names
    index = SparseIndex()
    rows = sparse.lil_matrix((d.n_names, features), dtype="f")
    for n in range(d.n_names):
        rows[n, n] = 1.0
    index.build(rows.tocsr())
    query = sparse.lil_matrix((1, features), dtype="f")
    for n in range(30):
        query[0, n] = 0.9
    query[0, 30] = 0.1
    results = search_concepts(d, index, query.tocsr(), k=2, names_per_concept=1)
    assert [c for c, _ in results[0]] == [0, 1]
    assert results[0][1][1] == numpy.float32(0.1)


def test_concept_level_index_searches_concept_means(tiny_dictionary):
    """Triplet-Search's C strategy: one vector per concept, the mean of its names'."""
    import numpy
    from scipy import sparse

    from spacy_biolink.index.concepts import concept_vectors

    from .conftest import doc_with_ents, make_linker_nlp

    d = tiny_dictionary
    names = numpy.eye(d.n_names, dtype="f")  # each name its own direction
    means = concept_vectors(d, names)
    assert means.shape == (d.n_concepts, d.n_names)
    assert numpy.allclose(numpy.linalg.norm(means, axis=1), 1.0)
    c = d.concept_index("D003924")
    own = [d.names.index(n) for n in d.names_of(c)]
    assert numpy.allclose(means[c, own], 1 / numpy.sqrt(len(own)))
    assert sparse.issparse(concept_vectors(d, sparse.csr_matrix(names)))

    # threshold 0: "NIDDM" against a concept mean is a weak match, still the best one.
    nlp = make_linker_nlp(d, index_level="concept", threshold=0.0)
    linker = nlp.get_pipe("bio_linker")
    assert linker.index.n_vectors == d.n_concepts
    ent = nlp(doc_with_ents(nlp, "Type 2 diabetes mellitus.", ["Type 2 diabetes mellitus"])).ents[0]
    assert ent.kb_id_ == "D003924"
    assert len({cid for cid, _ in ent._.kb_ents}) == len(ent._.kb_ents)  # one row per concept
    loaded = nlp.from_bytes(nlp.to_bytes())
    assert loaded.get_pipe("bio_linker").cfg["index_level"] == "concept"
    assert loaded(doc_with_ents(loaded, "NIDDM.", ["NIDDM"])).ents[0].kb_id_ == "D003924"
