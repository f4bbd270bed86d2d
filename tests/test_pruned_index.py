"""PrunedSparseIndex.v1 and AutoSparseIndex.v1 (built by their registered functions):
results against the exact SparseIndex, state, memory-mapped loading, the size threshold,
and selection through spaCy's config."""
import numpy
import pytest
import spacy
from scipy import sparse

from spacy_biolink.encoders.tfidf import CharNgramTfidf
from spacy_biolink.errors import BioLinkError
from spacy_biolink.evaluation.search_recall import tie_aware_recall
from spacy_biolink.index import AutoSparseIndex, PrunedSparseIndex, SparseIndex
from spacy_biolink.legacy.index import build_auto_sparse_index as auto_v1
from spacy_biolink.legacy.index import build_pruned_sparse_index as pruned_v1
from spacy_biolink.index.registry import build_sparse_index

from .conftest import doc_with_ents, make_linker_nlp

WORDS = ("diabetes mellitus type insulin dependent breast cancer neoplasm tumor carcinoma "
         "huntington disease chorea tooth agenesis selective kidney polycystic autosomal "
         "dominant recessive syndrome deficiency anemia sickle cell heart failure "
         "congestive cardiomyopathy hypertrophic familial colorectal adenoma").split()


def tfidf_rows(n_names=1500, n_queries=60, seed=0):
    """TF-IDF char 3-gram rows of random names made of biomedical words, and of queries
    that are copies or one-word edits of some of them (as mentions are)."""
    rng = numpy.random.default_rng(seed)
    names = [" ".join(rng.choice(WORDS, size=rng.integers(1, 6))) for _ in range(n_names)]
    queries = []
    for i in rng.choice(n_names, size=n_queries, replace=False):
        words = names[i].split()
        if rng.random() < 0.5:
            words[rng.integers(len(words))] = str(rng.choice(WORDS))
        queries.append(" ".join(words))
    tfidf = CharNgramTfidf()
    tfidf.fit(names)
    return (sparse.csr_matrix(tfidf.transform(names), dtype=numpy.float32),
            sparse.csr_matrix(tfidf.transform(queries), dtype=numpy.float32))


@pytest.fixture(scope="module")
def rows():
    return tfidf_rows()


def exact(names):
    index = SparseIndex()
    index.build(names)
    return index


def test_reading_every_ngram_equals_exact_search_bit_for_bit(rows):
    names, queries = rows
    pruned = pruned_v1(coverage=0.999999, candidates=20)
    pruned.build(names)
    assert pruned.prunes
    scores, ids = pruned.search(queries, 10)
    exact_scores, exact_ids = exact(names).search(queries, 10)
    numpy.testing.assert_array_equal(scores, exact_scores)
    numpy.testing.assert_array_equal(ids, exact_ids)


def test_pruned_search_finds_the_exact_top_10_and_scores_exactly(rows):
    names, queries = rows
    # 235 distinct 3-grams only (35 words), so every name shares many with every query:
    # harder than a real dictionary, where 0.8 / 256 finds 99% at 1M names.
    pruned = pruned_v1(coverage=0.8, candidates=100)
    pruned.build(names)
    scores, ids = pruned.search(queries, 10)
    exact_scores, exact_ids = exact(names).search(queries, 10)
    # Measured: 0.9967 (2 of 600 exact top-10 names missed).
    assert tie_aware_recall(scores, exact_scores, exact_ids, 10) == \
        pytest.approx(0.9967, abs=0.005)
    # What is returned is scored as the exact search scores it, best first.
    full = (queries @ names.T).toarray()
    found = ids >= 0
    numpy.testing.assert_allclose(scores[found], full[numpy.nonzero(found)[0], ids[found]],
                                  rtol=1e-6)
    assert (numpy.diff(scores, axis=1) <= 0).all()
    # Pruning reads fewer n-grams than it is given.
    from spacy_biolink.index.pruned import prune_queries

    assert prune_queries(queries, 0.7).nnz < queries.nnz


def test_prune_queries_keeps_the_heaviest_weights_up_to_coverage():
    from spacy_biolink.index.pruned import prune_queries

    q = sparse.csr_matrix(numpy.array([[0.1, 0.7, 0.0, 0.7], [0.0, 0.0, 0.0, 0.0],
                                       [0.0, 0.0, 1.0, 0.0]], dtype=numpy.float32))
    pruned = prune_queries(q, 0.5).toarray()
    # row 0: 0.49 alone is short of 0.5 x 0.99, so the two 0.7s; never the 0.1
    numpy.testing.assert_allclose(pruned, [[0, 0.7, 0, 0.7], [0, 0, 0, 0], [0, 0, 1, 0]])


@pytest.mark.parametrize("how", ["disk", "bytes"])
def test_state_round_trip_gives_identical_results(rows, tmp_path, how):
    names, queries = rows
    index = pruned_v1(coverage=0.7, candidates=40)
    index.build(names)
    loaded = pruned_v1(coverage=0.7, candidates=40)
    if how == "disk":
        index.to_disk(tmp_path / "index")
        loaded.from_disk(tmp_path / "index")
    else:
        loaded.from_bytes(index.to_bytes())
    for a, b in zip(index.search(queries, 10), loaded.search(queries, 10)):
        numpy.testing.assert_array_equal(a, b)


def _backed_by_memmap(array) -> bool:
    while array is not None and not isinstance(array, numpy.memmap):
        array = getattr(array, "base", None)
    return isinstance(array, numpy.memmap)


@pytest.mark.parametrize("cls", [build_sparse_index, pruned_v1])
def test_from_disk_memory_maps_the_postings(rows, tmp_path, cls):
    names, queries = rows
    index = cls()
    index.build(names)
    index.to_disk(tmp_path / "index")
    loaded = cls().from_disk(tmp_path / "index")
    assert _backed_by_memmap(loaded.names_t.data) and _backed_by_memmap(loaded.names_t.indices)
    if cls is pruned_v1:
        assert _backed_by_memmap(loaded.rows.data) and _backed_by_memmap(loaded.rows.indices)
    numpy.testing.assert_array_equal(loaded.search(queries, 5)[1], index.search(queries, 5)[1])


def test_auto_index_is_exact_below_its_threshold_and_pruned_above(rows, tmp_path):
    names, queries = rows
    small = auto_v1(min_names=names.shape[0] + 1, coverage=0.5, candidates=20)
    small.build(names)
    assert not small.prunes and small.rows is None  # no second copy of the rows
    for a, b in zip(small.search(queries, 10), exact(names).search(queries, 10)):
        numpy.testing.assert_array_equal(a, b)
    large = auto_v1(min_names=names.shape[0], coverage=0.5, candidates=20)
    large.build(names)
    assert large.prunes and large.rows is not None
    # The choice is saved with the index: a loaded index searches as the built one.
    large.to_disk(tmp_path / "large")
    loaded = auto_v1(min_names=10 ** 9, coverage=0.5, candidates=20)
    loaded.from_disk(tmp_path / "large")
    assert loaded.prunes
    for a, b in zip(loaded.search(queries, 10), large.search(queries, 10)):
        numpy.testing.assert_array_equal(a, b)


def test_auto_index_starts_pruning_when_names_are_added_past_its_threshold(rows):
    names, queries = rows
    index = auto_v1(min_names=1000, coverage=0.999999, candidates=20)
    index.build(names[:900])
    assert not index.prunes
    index.add(names[900:])
    assert index.prunes and index.rows.shape == names.shape
    for a, b in zip(index.search(queries, 10), exact(names).search(queries, 10)):
        numpy.testing.assert_array_equal(a, b)


def test_bad_settings_and_negative_rows_are_clear_errors():
    with pytest.raises(BioLinkError, match="E220"):
        pruned_v1(coverage=0)
    with pytest.raises(BioLinkError, match="E220"):
        pruned_v1(candidates=0)
    with pytest.raises(BioLinkError, match="E221"):
        pruned_v1().build(sparse.csr_matrix(numpy.array([[0.5, -0.5]], "f")))


@pytest.mark.parametrize("name,cls", [
    ("spacy-biolink.AutoSparseIndex.v1", AutoSparseIndex),
    ("spacy-biolink.PrunedSparseIndex.v1", PrunedSparseIndex),
    ("spacy-biolink.SparseIndex.v1", SparseIndex),
])
def test_index_is_selected_in_config(name, cls):
    nlp = spacy.blank("en")
    config = {} if name is None else {"index": {"@misc": name}}
    linker = nlp.add_pipe("bio_linker", config=config)
    assert type(linker.index) is cls
    # v1 finds its candidates with the exact kernel, not block by block (v2).
    pruned = getattr(linker.index, "approximate", linker.index)
    assert getattr(pruned, "source", None) is None or not pruned.source.blocked


def test_linker_with_pruned_search_links_as_with_exact_search(tiny_dictionary, tmp_path):
    auto = make_linker_nlp(tiny_dictionary, index={
        "@misc": "spacy-biolink.AutoSparseIndex.v1", "min_names": 1, "coverage": 0.7,
        "candidates": 8})
    exact_nlp = make_linker_nlp(tiny_dictionary, index={"@misc": "spacy-biolink.SparseIndex.v1"})
    assert auto.get_pipe("bio_linker").index.prunes
    text, ents = ("Patients with type 2 diabetes and breast cancer were enrolled.",
                  ["type 2 diabetes", "breast cancer"])
    got = [e.kb_id_ for e in auto(doc_with_ents(auto, text, ents)).ents]
    assert got == [e.kb_id_ for e in exact_nlp(doc_with_ents(exact_nlp, text, ents)).ents]
    auto.to_disk(tmp_path / "nlp")
    loaded = spacy.load(tmp_path / "nlp")
    assert loaded.get_pipe("bio_linker").index.prunes
    assert [e.kb_id_ for e in loaded(doc_with_ents(loaded, text, ents)).ents] == got


def test_auto_index_searches_rows_with_negative_values_exactly(rows):
    names, queries = rows
    signed = sparse.csr_matrix(names.multiply(numpy.where(
        numpy.arange(names.shape[1]) % 2, 1, -1).astype(numpy.float32)), dtype=numpy.float32)
    index = auto_v1(min_names=1, coverage=0.5, candidates=10)
    index.build(signed)
    assert not index.prunes
    for a, b in zip(index.search(queries, 10), exact(signed).search(queries, 10)):
        numpy.testing.assert_array_equal(a, b)


def test_tie_aware_recall_counts_ties_at_the_last_place_and_never_empty_places():
    exact_scores = numpy.array([[0.9, 0.8, 0.5], [0.7, 0.6, 0.0]], dtype=numpy.float32)
    exact_ids = numpy.array([[3, 4, 5], [1, 2, -1]])
    # Query 0 found a different name tied with the exact 3rd; query 1 found 1 of its 2.
    scores = numpy.array([[0.9, 0.8, 0.5], [0.7, 0.1, 0.0]], dtype=numpy.float32)
    assert tie_aware_recall(scores, exact_scores, exact_ids, 3) == pytest.approx((1 + 0.5) / 2)
    # An empty place (-1) never counts, whatever score it carries.
    ids = numpy.array([[3, 4, -1], [1, 7, -1]])
    assert tie_aware_recall(scores, exact_scores, exact_ids, 3, ids=ids) == \
        pytest.approx((2 / 3 + 0.5) / 2)
    # Just below the exact 3rd counts only within the tolerance.
    below = numpy.array([[0.9, 0.8, 0.49999], [0.7, 0.6, 0.0]], dtype=numpy.float32)
    assert tie_aware_recall(below, exact_scores, exact_ids, 3) < 1
    assert tie_aware_recall(below, exact_scores, exact_ids, 3, tolerance=1e-4) == 1
