"""PrunedSparseIndex.v2 / AutoSparseIndex.v2 (NgramCandidates(blocked=True), block_kernels.py): the
block-by-block candidates against the exact kernel's, results against v1 and the exact
search, memory-mapped loading, and selection through spaCy's config."""
import threading

import numpy
import pytest
import spacy
from scipy import sparse

from spacy_biolink.errors import BioLinkError
from spacy_biolink.index import AutoSparseIndex, PrunedSparseIndex, SparseIndex
from spacy_biolink.legacy.index import build_auto_sparse_index as auto_v1
from spacy_biolink.legacy.index import build_auto_sparse_index_v2 as auto_v2
from spacy_biolink.legacy.index import build_pruned_sparse_index as pruned_v1
from spacy_biolink.index.registry import build_pruned_sparse_index_v2 as pruned_v2
from spacy_biolink.index import block_kernels, kernels
from spacy_biolink.index.pruned import prune_queries

from .conftest import doc_with_ents, make_linker_nlp, record_kernel_threads
from .test_pruned_index import _backed_by_memmap, tfidf_rows


@pytest.fixture(scope="module")
def rows():
    names, queries = tfidf_rows()
    # Repeated names give tied scores, at the cut too: ties go to the lower id.
    names = sparse.vstack([names, names[:300]], format="csr")
    return names, queries


@pytest.fixture(scope="module")
def many_queries():
    """192 query rows over `rows`' features (the same seed gives the same names and
    vectorizer): enough for 4 threads, as a search gives each thread at least
    kernels.MIN_ROWS_PER_THREAD rows and runs fewer rows on one."""
    from spacy_biolink.index.kernels import MIN_ROWS_PER_THREAD

    queries = tfidf_rows(n_queries=192)[1]
    assert queries.shape[0] >= 4 * MIN_ROWS_PER_THREAD
    return queries


def _postings(names):
    names_t = sparse.csr_matrix(names, dtype=numpy.float32).T.tocsr()
    return kernels.prepare_postings(names_t.indptr, names_t.indices, names_t.data,
                                    names.shape[0])


@pytest.mark.parametrize("shift,c,chunk_size", [
    (3, 5, 256),  # 8-name blocks, buffers cut back many times
    (6, 40, 7),  # chunks of 7 queries
    (9, 200, 256),
    (16, 40, 256),  # one block holds every name
])
def test_candidates_are_the_exact_kernels_best_c(rows, shift, c, chunk_size):
    names, queries = rows
    pruned = prune_queries(queries, 0.6)
    postings = _postings(names)
    got = block_kernels.blocked_candidates(pruned.indptr, pruned.indices, pruned.data,
                                           postings, names.shape[0], c, chunk_size=chunk_size,
                                           shift=shift)
    _, want = kernels.search_rows(pruned.indptr, pruned.indices, pruned.data, postings,
                                  names.shape[0], c)
    assert got.shape == want.shape
    numpy.testing.assert_array_equal(numpy.sort(got, axis=1), numpy.sort(want, axis=1))
    # The cut falls inside groups of equal scores, so the tie rule is exercised.
    assert (numpy.diff(-kernels.search_rows(pruned.indptr, pruned.indices, pruned.data,
                                            postings, names.shape[0], c)[0], axis=1) == 0).any()


@pytest.mark.parametrize("chunk_size", [256, 7])
def test_candidates_split_over_threads_are_the_one_thread_candidates(
        rows, many_queries, monkeypatch, chunk_size):
    names, _ = rows
    pruned = prune_queries(many_queries, 0.6)
    postings = _postings(names)

    def candidates(n_threads):
        return block_kernels.blocked_candidates(
            pruned.indptr, pruned.indices, pruned.data, postings, names.shape[0], 200,
            n_threads=n_threads, chunk_size=chunk_size, shift=9)

    one = candidates(1)
    threads = record_kernel_threads(monkeypatch, block_kernels, "_blocked_candidates", 4)
    four = candidates(4)
    assert len(threads) == 4 and threading.get_ident() not in threads
    numpy.testing.assert_array_equal(four, one)
    _, want = kernels.search_rows(pruned.indptr, pruned.indices, pruned.data, postings,
                                  names.shape[0], 200)
    numpy.testing.assert_array_equal(numpy.sort(four, axis=1), numpy.sort(want, axis=1))


def test_a_query_touching_fewer_than_c_names_gets_them_all():
    names = sparse.csr_matrix(numpy.array([[1, 0, 0], [0, 1, 0], [0.6, 0, 0.8], [0, 0, 1]],
                                          dtype=numpy.float32))
    query = sparse.csr_matrix(numpy.array([[1, 0, 0]], dtype=numpy.float32))
    got = block_kernels.blocked_candidates(query.indptr, query.indices, query.data,
                                           _postings(names), 4, 3, shift=1)
    assert sorted(got[0].tolist()) == [-1, 0, 2]


@pytest.mark.parametrize("coverage,candidates", [(0.8, 100), (0.5, 20), (0.999999, 30)])
def test_v2_returns_what_v1_returns_bit_for_bit(rows, coverage, candidates):
    names, queries = rows
    v1 = pruned_v1(coverage=coverage, candidates=candidates)
    v1.build(names)
    v2 = pruned_v2(coverage=coverage, candidates=candidates)
    v2.build(names)
    for a, b in zip(v1.search(queries, 10), v2.search(queries, 10)):
        numpy.testing.assert_array_equal(a, b)


def test_reading_every_ngram_equals_exact_search(rows):
    names, queries = rows
    v2 = pruned_v2(coverage=0.999999, candidates=20)
    v2.build(names)
    assert v2.prunes
    for a, b in zip(v2.search(queries, 10), _exact(names).search(queries, 10)):
        numpy.testing.assert_array_equal(a, b)


def _exact(names):
    index = SparseIndex()
    index.build(names)
    return index


def test_v2_defaults_find_the_exact_top_10(rows):
    from spacy_biolink.evaluation.search_recall import tie_aware_recall

    names, queries = rows
    v2 = pruned_v2()
    assert (v2.coverage, v2.candidates) == (0.8, 512)
    v2.build(names)
    scores, _ = v2.search(queries, 10)
    exact_scores, exact_ids = _exact(names).search(queries, 10)
    # Measured: 1.0 (every exact top-10 name found).
    assert tie_aware_recall(scores, exact_scores, exact_ids, 10) == pytest.approx(1.0, abs=0.005)


def test_unsorted_postings_fall_back_to_the_v1_path(rows):
    names, queries = rows
    v2 = pruned_v2(coverage=0.7, candidates=40)
    v2.build(names)
    want = v2.search(queries, 10)
    # The same postings with each feature's names reversed: valid CSR, not sorted.
    m = v2.names_t
    order = numpy.concatenate([numpy.arange(m.indptr[f], m.indptr[f + 1])[::-1]
                               for f in range(m.shape[0])]).astype(numpy.int64)
    v2.names_t = sparse.csr_matrix((m.data[order], m.indices[order], m.indptr), shape=m.shape)
    assert not v2.source.postings_sorted(v2._postings())
    for a, b in zip(v2.search(queries, 10), want):
        numpy.testing.assert_array_equal(a, b)


def test_threads_do_not_change_results(rows, many_queries, monkeypatch):
    names, _ = rows
    one = pruned_v2(coverage=0.7, candidates=40)
    one.build(names)
    want = one.search(many_queries, 10)
    three = pruned_v2(coverage=0.7, candidates=40)
    three.build(names)
    three.n_threads = 3
    threads = record_kernel_threads(monkeypatch, block_kernels, "_blocked_candidates", 3)
    got = three.search(many_queries, 10)
    assert len(threads) == 3 and threading.get_ident() not in threads
    for a, b in zip(got, want):
        numpy.testing.assert_array_equal(a, b)


def test_saved_index_loads_memory_mapped_and_searches_the_same(rows, tmp_path):
    names, queries = rows
    index = auto_v2(min_names=1, coverage=0.7, candidates=40)
    index.build(names)
    assert index.prunes
    index.to_disk(tmp_path / "index")
    # The threshold and the pruning choice come from the save, not the constructor.
    loaded = auto_v2(min_names=10 ** 9, coverage=0.7, candidates=40)
    loaded.from_disk(tmp_path / "index")
    assert loaded.prunes
    for array in (loaded.names_t.data, loaded.names_t.indices, loaded.rows.data,
                  loaded.rows.indices):
        assert _backed_by_memmap(array)
    for a, b in zip(loaded.search(queries, 10), index.search(queries, 10)):
        numpy.testing.assert_array_equal(a, b)
    # v1 and v2 save the same state: a v1 save loads into v2 and searches as v1.
    v1 = auto_v1(min_names=1, coverage=0.7, candidates=40)
    v1.build(names)
    v1.to_disk(tmp_path / "v1")
    from_v1 = auto_v2(coverage=0.7, candidates=40).from_disk(tmp_path / "v1")
    for a, b in zip(from_v1.search(queries, 10), v1.search(queries, 10)):
        numpy.testing.assert_array_equal(a, b)


def test_auto_v2_is_exact_below_its_threshold(rows):
    names, queries = rows
    small = auto_v2(min_names=names.shape[0] + 1)
    small.build(names)
    assert not small.prunes and small.rows is None
    for a, b in zip(small.search(queries, 10), _exact(names).search(queries, 10)):
        numpy.testing.assert_array_equal(a, b)


def test_bad_settings_name_the_v2_index():
    with pytest.raises(BioLinkError, match=r"E220.*PrunedSparseIndex\.v2"):
        pruned_v2(coverage=1.5)
    with pytest.raises(BioLinkError, match=r"E221.*PrunedSparseIndex\.v2"):
        pruned_v2().build(sparse.csr_matrix(numpy.array([[0.5, -0.5]], "f")))


@pytest.mark.parametrize("name,cls", [
    ("spacy-biolink.AutoSparseIndex.v2", AutoSparseIndex),
    ("spacy-biolink.PrunedSparseIndex.v2", PrunedSparseIndex),
])
def test_v2_index_is_selected_in_config(name, cls):
    nlp = spacy.blank("en")
    config = {} if name is None else {"index": {"@misc": name, "candidates": 64}}
    linker = nlp.add_pipe("bio_linker", config=config)
    assert type(linker.index) is cls
    # v2 finds its candidates block by block.
    assert getattr(linker.index, "approximate", linker.index).source.blocked
    if name is not None:
        assert linker.index.candidates == 64


def test_linker_with_v2_links_as_with_exact_search_and_after_load(tiny_dictionary, tmp_path):
    auto = make_linker_nlp(tiny_dictionary, index={
        "@misc": "spacy-biolink.AutoSparseIndex.v2", "min_names": 1, "coverage": 0.7,
        "candidates": 8})
    exact_nlp = make_linker_nlp(tiny_dictionary, index={"@misc": "spacy-biolink.SparseIndex.v1"})
    assert auto.get_pipe("bio_linker").index.prunes
    text, ents = ("Patients with type 2 diabetes and breast cancer were enrolled.",
                  ["type 2 diabetes", "breast cancer"])
    got = [e.kb_id_ for e in auto(doc_with_ents(auto, text, ents)).ents]
    assert got == [e.kb_id_ for e in exact_nlp(doc_with_ents(exact_nlp, text, ents)).ents]
    auto.to_disk(tmp_path / "nlp")
    loaded = spacy.load(tmp_path / "nlp")
    assert type(loaded.get_pipe("bio_linker").index) is AutoSparseIndex
    assert loaded.get_pipe("bio_linker").index.approximate.source.blocked
    assert loaded.get_pipe("bio_linker").index.prunes
    assert [e.kb_id_ for e in loaded(doc_with_ents(loaded, text, ents)).ents] == got
