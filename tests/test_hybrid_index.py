"""HybridIndex: each part's candidates, the union rescored by the full [dense | sparse] sum."""
import numpy
import pytest
from scipy import sparse
from spacy.util import registry

from spacy_biolink.errors import BioLinkError
from spacy_biolink.index import SparseIndex

DENSE_WIDTH = 16


def hybrid_rows(n: int, seed: int) -> sparse.csr_matrix:
    """[unit dense | unit sparse] rows, as a HybridEncoder makes them."""
    rng = numpy.random.default_rng(seed)
    dense = rng.normal(size=(n, DENSE_WIDTH)).astype("f")
    dense /= numpy.linalg.norm(dense, axis=1, keepdims=True)
    tfidf = sparse.random(n, 120, density=0.05, format="csr", random_state=seed, dtype="f")
    tfidf = sparse.csr_matrix(tfidf.multiply(1 / numpy.maximum(
        sparse.linalg.norm(tfidf, axis=1), 1e-9)[:, None]), dtype="f")
    return sparse.hstack([sparse.csr_matrix(dense), tfidf * numpy.float32(0.8)], format="csr")


def hybrid_index(candidates: int, kind: str = "flat"):
    return registry.resolve({"index": {
        "@misc": "spacy-biolink.HybridIndex.v1", "dense_width": DENSE_WIDTH,
        "candidates": candidates,
        "dense": {"@misc": "spacy-biolink.FaissIndex.v1", "kind": kind},
        "sparse": {"@misc": "spacy-biolink.SparseIndex.v1"}}})["index"]


def test_enough_candidates_is_the_exact_search():
    names = hybrid_rows(400, seed=0)
    queries = hybrid_rows(50, seed=1)
    exact = SparseIndex()
    exact.build(names)
    index = hybrid_index(candidates=400)
    index.build(names)
    want_scores, want_ids = exact.search(queries, 7)
    got_scores, got_ids = index.search(queries, 7)
    assert numpy.array_equal(got_ids, want_ids)
    assert numpy.allclose(got_scores, want_scores, atol=1e-5)


def test_the_union_is_rescored_by_the_full_sum():
    """C is second by each part alone and first by their sum: two candidates per part
    find it, one does not (the approximation `candidates` controls)."""
    c = [0.9, float(numpy.sqrt(1 - 0.81))]
    names = sparse.csr_matrix(numpy.array([
        # dense (2) | sparse (2)
        [1.0, 0.0, 0.0, 1.0],     # A: the best dense, no shared n-gram
        [0.0, 1.0, 1.0, 0.0],     # B: the best sparse, orthogonal dense
        c + c,                    # C: 0.9 by each part
        [-1.0, 0.0, 0.0, 1.0],    # fillers, far from the query in both parts
        [0.0, -1.0, 0.0, 1.0]], dtype="f"))
    query = sparse.csr_matrix(numpy.array([[1.0, 0.0, 1.0, 0.0]], dtype="f"))
    for candidates, best, score in ((2, 2, 1.8), (1, 0, 1.0)):
        index = registry.resolve({"index": {
            "@misc": "spacy-biolink.HybridIndex.v1", "dense_width": 2, "candidates": candidates,
            "dense": {"@misc": "spacy-biolink.FaissIndex.v1", "kind": "hnsw"},
            "sparse": {"@misc": "spacy-biolink.SparseIndex.v1"}}})["index"]
        index.build(names[:3])
        index.add(names[3:])
        scores, ids = index.search(query, 1)
        assert (ids[0, 0], round(float(scores[0, 0]), 4)) == (best, score)


def test_round_trip_and_padding(tmp_path):
    names = hybrid_rows(30, seed=3)
    index = hybrid_index(candidates=5)
    index.build(names)
    index.to_disk(tmp_path / "index")
    loaded = hybrid_index(candidates=5).from_disk(tmp_path / "index")
    queries = hybrid_rows(4, seed=4)
    for got, want in zip(loaded.search(queries, 40), index.search(queries, 40)):
        assert numpy.array_equal(got, want)
    scores, ids = loaded.search(queries, 40)
    # 40 > 30 names: every name once, then padding
    assert (ids[:, 30:] == -1).all() and sorted(ids[0, :30].tolist()) == list(range(30))


def test_bad_parts_and_rows_are_clear_errors():
    with pytest.raises(BioLinkError, match="dense index is ivf"):
        registry.resolve({"index": {
            "@misc": "spacy-biolink.HybridIndex.v1", "dense_width": 4,
            "dense": {"@misc": "spacy-biolink.FaissIndex.v1", "kind": "ivf"},
            "sparse": {"@misc": "spacy-biolink.SparseIndex.v1"}}})
    with pytest.raises(BioLinkError, match="dense_width = 0"):
        registry.resolve({"index": {
            "@misc": "spacy-biolink.HybridIndex.v1", "dense_width": 0,
            "dense": {"@misc": "spacy-biolink.FaissIndex.v1"},
            "sparse": {"@misc": "spacy-biolink.SparseIndex.v1"}}})
    index = hybrid_index(candidates=5)
    with pytest.raises(BioLinkError, match="not been built"):
        index.search(hybrid_rows(2, seed=5), 1)
    with pytest.raises(BioLinkError, match="not wider than its dense_width 16"):
        index.build(sparse.random(5, 16, density=0.5, format="csr", dtype="f"))
    with pytest.raises(BioLinkError, match="needs sparse"):
        index.build(numpy.ones((5, 40), dtype="f"))


def per_row_search(index, queries: sparse.csr_matrix, k: int):
    """The rescoring as HybridIndex did it before it was batched: per query row, the
    union's dense rows @ the query plus, for each query feature in stored order, its
    weight times the name's posting value; then top_k."""
    from spacy_biolink.index.sparse import top_k

    queries = sparse.csr_matrix(queries, dtype="f")
    dense_q = queries[:, :index.dense_width].toarray()
    sparse_q = queries[:, index.dense_width:].tocsr()
    take = max(k, index.candidates)
    _, dense_ids = index.dense.search(dense_q, take)
    _, sparse_ids = index.sparse.search(sparse_q, take)
    postings = index.sparse.names_t
    scores = numpy.zeros((queries.shape[0], k), dtype="f")
    ids = numpy.full((queries.shape[0], k), -1, dtype=numpy.int64)
    for row in range(queries.shape[0]):
        both = numpy.concatenate([dense_ids[row], sparse_ids[row]])
        names = numpy.unique(both[both >= 0])
        exact = index.dense.index.reconstruct_batch(names) @ dense_q[row]
        part = numpy.zeros(len(names), dtype="f")
        lo, hi = sparse_q.indptr[row], sparse_q.indptr[row + 1]
        for feature, weight in zip(sparse_q.indices[lo:hi], sparse_q.data[lo:hi]):
            holders = postings.indices[postings.indptr[feature]:postings.indptr[feature + 1]]
            values = postings.data[postings.indptr[feature]:postings.indptr[feature + 1]]
            for j, name in enumerate(names):
                hit = numpy.flatnonzero(holders == name)
                if len(hit):
                    part[j] += weight * values[hit[0]]
        found, found_ids = top_k(exact + part, names, k)
        scores[row, :len(found)], ids[row, :len(found)] = found, found_ids
    return scores, ids


@pytest.mark.parametrize("kind", ["flat", "hnsw"])
def test_batched_rescoring_keeps_every_bit_of_the_per_row_one(kind, monkeypatch):
    """The compiled rescoring of all rows at once gives the per-row sums bit for bit
    (links and scores unchanged), ties included; so does its fallback (no kernel)."""
    names = hybrid_rows(300, seed=6)
    # exact duplicates of names: equal scores, ordered by id
    names = sparse.vstack([names, names[:40]], format="csr")
    queries = sparse.vstack([hybrid_rows(60, seed=7), names[:10]], format="csr")
    index = hybrid_index(candidates=12, kind=kind)
    index.build(names)
    for k in (1, 5, 30, 400):
        want = per_row_search(index, queries, k)
        got = index.search(queries, k)
        assert numpy.array_equal(got[1], want[1]) and numpy.array_equal(got[0], want[0])
    assert index._name_rows() is not None  # the kernel path ran
    monkeypatch.setattr(type(index), "_name_rows", lambda self: None)
    got = index.search(queries, 5)
    want = per_row_search(index, queries, 5)
    assert numpy.array_equal(got[1], want[1]) and numpy.array_equal(got[0], want[0])


def test_threads_search_the_parts_side_by_side_with_the_same_results():
    names = hybrid_rows(300, seed=8)
    queries = hybrid_rows(40, seed=9)  # >= MIN_QUERIES_FOR_THREADS: the threaded path
    index = hybrid_index(candidates=10, kind="hnsw")
    index.build(names)
    index.n_threads = 1
    alone = index.search(queries, 6)
    index.n_threads = 2
    assert index.n_threads == 2
    together = index.search(queries, 6)
    assert numpy.array_equal(alone[0], together[0]) and numpy.array_equal(alone[1], together[1])
    for bad in (-1, 1.5, True):
        with pytest.raises(BioLinkError, match="n_threads"):
            index.n_threads = bad
