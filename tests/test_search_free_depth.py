"""search_concepts over an index that rescores a fixed number of candidates per query
(PrunedSparseIndex.free_depth) searches that deep once and takes the deeper rounds as
slices: the concepts and scores are those of searching again round by round, bit for bit,
with fewer searches."""
import numpy
import pytest

from spacy_biolink.index import SparseIndex
from spacy_biolink.index.concepts import search_concepts
from spacy_biolink.kb.dictionary import Concept, ConceptDictionary
from spacy_biolink.index.registry import build_auto_sparse_index_v6 as auto_v6
from spacy_biolink.legacy.index import build_pruned_sparse_index as pruned_v1

from .test_pruned_index import tfidf_rows


@pytest.fixture(scope="module")
def data():
    names, queries = tfidf_rows(n_names=100, n_queries=60, seed=3)
    # Twelve names per concept, each its concept's row (tied, so ranked by id): a query's
    # best 20 names hold at most two concepts, so every query needs deeper rounds.
    names = names[numpy.repeat(numpy.arange(100), 12)]
    dictionary = ConceptDictionary.from_concepts([
        Concept([f"C{c}"], [f"n{c}_{i}" for i in range(12)]) for c in range(100)])
    return dictionary, names, queries


def counted(index):
    calls = []
    search = index.search

    def wrapped(queries, k):
        calls.append((queries.shape[0], k))
        return search(queries, k)

    index.search = wrapped
    return calls


@pytest.mark.parametrize("builder", [
    lambda: pruned_v1(candidates=256),
    lambda: auto_v6(min_names=1, candidates=256),
])
def test_deeper_rounds_are_slices_of_one_search(data, builder, monkeypatch):
    dictionary, names, queries = data
    index = builder()
    index.build(names)
    assert index.free_depth() == 256
    calls = counted(index)
    # four names per concept first, not the dictionary's twelve: rounds to slice
    got = search_concepts(dictionary, index, queries, k=5, names_per_concept=4)
    reused = list(calls)
    calls.clear()
    monkeypatch.setattr(index, "free_depth", lambda: 0)
    want = search_concepts(dictionary, index, queries, k=5, names_per_concept=4)
    assert got == want
    # Without reuse every query is searched 20 names deep, then 80; with it, once, 256
    # deep, and the rounds are slices of that.
    assert calls == [(queries.shape[0], 20), (queries.shape[0], 80)]
    assert reused == [(queries.shape[0], 256)]


def test_exact_index_has_no_free_depth(data):
    dictionary, names, queries = data
    auto = auto_v6()  # under min_names: exact
    auto.build(names)
    assert auto.free_depth() == 0
    assert not hasattr(SparseIndex(), "free_depth")
    calls = counted(auto)
    search_concepts(dictionary, auto, queries, k=5, names_per_concept=4)
    assert calls[0] == (queries.shape[0], 20)


def test_first_search_is_as_deep_as_the_dictionary_has_names_per_concept(data):
    """Twelve names per concept: k * 12 names deep first, where every query's k concepts
    are, so one search, with the concepts and scores the rounds from 4 per concept find."""
    dictionary, names, queries = data
    index = auto_v6()
    index.build(names)
    calls = counted(index)
    got = search_concepts(dictionary, index, queries, k=5)
    assert calls == [(queries.shape[0], 60)]
    calls.clear()
    assert got == search_concepts(dictionary, index, queries, k=5, names_per_concept=4)
    assert calls == [(queries.shape[0], 20), (queries.shape[0], 80)]
