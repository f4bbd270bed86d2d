import numpy
import pytest
from scipy import sparse

from spacy_biolink.errors import BioLinkError
from spacy_biolink.index import FaissIndex, SparseIndex, top_k

from .conftest import record_kernel_threads


def brute_force(scores, k, min_score=-numpy.inf):
    out = []
    for row in scores:
        order = sorted(range(len(row)), key=lambda j: (-row[j], j))
        out.append([j for j in order if row[j] > min_score][:k])
    return out


def test_top_k_breaks_ties_to_lower_ids():
    values = numpy.array([0.5, 0.9, 0.5, 0.5, 0.1], dtype="f")
    s, ids = top_k(values, numpy.arange(5), 3)
    assert ids.tolist() == [1, 0, 2]
    assert s.tolist() == pytest.approx([0.9, 0.5, 0.5])
    # ids need not arrive sorted (sparse products do not sort them)
    s, ids = top_k(values[::-1].copy(), numpy.arange(5)[::-1].copy(), 3)
    assert ids.tolist() == [1, 0, 2]


def test_top_k_matches_brute_force_with_many_ties():
    rng = numpy.random.default_rng(0)
    scores = rng.integers(0, 4, size=(50, 40)).astype("f") / 4
    for k in (1, 5, 39, 60):
        got = []
        for row in scores:
            positive = numpy.flatnonzero(row > 0)
            got.append(top_k(row[positive], positive, k)[1].tolist())
        assert got == brute_force(scores, k, 0.0)


def test_sparse_index_exact_and_chunk_independent():
    names = sparse.random(300, 50, density=0.1, format="csr", random_state=2, dtype="f")
    queries = sparse.random(37, 50, density=0.2, format="csr", random_state=3, dtype="f")
    dense_scores = (queries @ names.T).toarray()
    expected = brute_force(dense_scores, 7, 0.0)
    for chunk in (1, 5, 256):
        index = SparseIndex(chunk_size=chunk)
        index.build(names)
        scores, ids = index.search(queries, 7)
        assert [[j for j in row if j >= 0] for row in ids.tolist()] == expected
        found = ids >= 0
        numpy.testing.assert_allclose(
            scores[found], dense_scores[numpy.nonzero(found)[0], ids[found]], rtol=1e-6)
        assert (scores[~found] == 0).all()
    restored = SparseIndex().from_bytes(index.to_bytes())
    assert restored.n_vectors == 300
    restored_scores, restored_ids = restored.search(queries, 7)
    numpy.testing.assert_array_equal(restored_ids, ids)
    numpy.testing.assert_array_equal(restored_scores, scores)


@pytest.mark.parametrize("kind", ["flat", "hnsw", "ivf"])
def test_faiss_index_finds_exact_neighbours_on_small_data(kind, tmp_path):
    rng = numpy.random.default_rng(4)
    names = rng.normal(size=(500, 16)).astype("f")
    names /= numpy.linalg.norm(names, axis=1, keepdims=True)
    index = FaissIndex(kind=kind, nlist=8, nprobe=8, ef_search=256)
    index.build(names)
    scores, ids = index.search(names[:20], 3)
    assert ids[:, 0].tolist() == list(range(20))
    assert numpy.allclose(scores[:, 0], 1.0, atol=1e-4)
    index.to_disk(tmp_path / "index")
    loaded = FaissIndex(kind=kind, nlist=8, nprobe=8, ef_search=256).from_disk(tmp_path / "index")
    assert (loaded.search(names[:20], 3)[1] == ids).all()


def test_faiss_index_pads_when_k_exceeds_size_and_grows_with_add():
    index = FaissIndex()
    index.build(numpy.eye(3, dtype="f"))
    scores, ids = index.search(numpy.eye(3, dtype="f")[:1], 5)
    assert ids[0].tolist()[:3] == [0, 1, 2] and ids[0].tolist()[3:] == [-1, -1]
    index.add(numpy.array([[1, 0, 0]], dtype="f"))
    assert index.n_vectors == 4
    assert index.search(numpy.eye(3, dtype="f")[:1], 2)[1][0].tolist() == [0, 3]


def test_wrong_vector_kind_and_unbuilt_index_are_clear_errors():
    with pytest.raises(BioLinkError, match="E206"):
        SparseIndex().build(numpy.zeros((2, 3), dtype="f"))
    with pytest.raises(BioLinkError, match="E206"):
        FaissIndex().build(sparse.csr_matrix((2, 3), dtype="f"))
    with pytest.raises(BioLinkError, match="E207"):
        SparseIndex().search(sparse.csr_matrix((1, 3), dtype="f"), 2)
    with pytest.raises(BioLinkError, match="E204"):
        FaissIndex(kind="lsh")


def _scipy_reference(index, queries, k):
    return index._search_scipy(sparse.csr_matrix(queries, dtype=numpy.float32), k)


def _random_csr(rng, n_rows, n_cols, density, signed=False, levels=0):
    """Random CSR; levels > 0 quantizes values (many exact ties)."""
    m = sparse.random(n_rows, n_cols, density=density, format="csr", dtype="f",
                      random_state=rng.integers(2 ** 31))
    if levels:
        m.data = (numpy.ceil(m.data * levels) / levels).astype("f")
    if signed:
        m.data *= rng.choice(numpy.array([-1, 1], dtype="f"), size=m.nnz)
    return m


@pytest.mark.parametrize("signed,levels", [(False, 0), (False, 3), (True, 0), (True, 2)])
def test_sparse_kernel_is_bit_identical_to_scipy_product(signed, levels):
    rng = numpy.random.default_rng(7)
    names = _random_csr(rng, 700, 60, 0.08, signed, levels)
    # Rows from very sparse (the kernel's touched-names path) to dense (its blocked scan).
    queries = sparse.vstack([_random_csr(rng, 40, 60, d, signed, levels)
                             for d in (0.01, 0.05, 0.3, 0.9)], format="csr")
    index = SparseIndex()
    index.build(names)
    for k in (1, 5, 40, 699, 700, 750):
        scores, ids = index.search(queries, k)
        expected_scores, expected_ids = _scipy_reference(index, queries, k)
        assert scores.dtype == numpy.float32 and ids.dtype == numpy.int64
        assert (ids == expected_ids).all()
        assert (scores.view(numpy.int32) == expected_scores.view(numpy.int32)).all()
    dense_scores = (queries @ index.names_t).toarray()
    _, ids = index.search(queries, 9)
    expected = [[j for j in row if dense_scores[i, j] != 0]
                for i, row in enumerate(brute_force(dense_scores, 700))]
    assert [[j for j in row if j >= 0] for row in ids.tolist()] == [e[:9] for e in expected]


def test_sparse_kernel_ties_go_to_the_lower_id():
    names = sparse.csr_matrix(numpy.array([[0, 1], [1, 0], [0, 1], [1, 1], [0, 1], [1, 0]],
                                          dtype="f"))
    index = SparseIndex()
    index.build(names)
    scores, ids = index.search(sparse.csr_matrix(numpy.array([[0, 1], [1, 0]], dtype="f")), 3)
    assert ids.tolist() == [[0, 2, 3], [1, 3, 5]]
    assert scores.tolist() == [[1, 1, 1], [1, 1, 1]]
    # More names than blocks of the kernel's dense scan, all tied.
    many = sparse.csr_matrix(numpy.ones((5000, 3), dtype="f"))
    index.build(many)
    scores, ids = index.search(sparse.csr_matrix(numpy.ones((2, 3), dtype="f")), 70)
    assert ids.tolist() == [list(range(70))] * 2


def test_sparse_kernel_empty_rows_padding_and_large_k():
    rng = numpy.random.default_rng(8)
    names = _random_csr(rng, 30, 20, 0.2).toarray()
    names[3] = 0  # a name with no n-gram never matches
    index = SparseIndex()
    index.build(sparse.csr_matrix(names))
    queries = numpy.zeros((3, 20), dtype="f")
    queries[1, 5] = 1.0
    queries[2] = 1.0
    queries = sparse.csr_matrix(queries)
    scores, ids = index.search(queries, 50)
    assert ids.shape == (3, 50) and scores.shape == (3, 50)
    assert (ids[0] == -1).all() and (scores[0] == 0).all()  # empty query: no candidate
    n_matching = (numpy.asarray((queries[2] @ index.names_t).todense()) != 0).sum()
    assert (ids[2, :n_matching] >= 0).all() and (ids[2, n_matching:] == -1).all()
    assert 3 not in ids[2].tolist() and (scores[2, n_matching:] == 0).all()
    for k in (0, 1, 30, 50):
        got, expected = index.search(queries, k), _scipy_reference(index, queries, k)
        assert (got[1] == expected[1]).all() and (got[0] == expected[0]).all()
    assert index.search(queries[:0], 5)[1].shape == (0, 5)


def test_sparse_kernel_is_batch_chunk_and_thread_independent(monkeypatch):
    from spacy_biolink.index import kernels

    rng = numpy.random.default_rng(9)
    names = _random_csr(rng, 2000, 80, 0.05, levels=4)
    queries = _random_csr(rng, 600, 80, 0.1, levels=4)
    index = SparseIndex(chunk_size=256)
    index.build(names)
    expected = _scipy_reference(index, queries, 12)
    for n_threads in (1, 3):
        index.n_threads = n_threads
        threads = record_kernel_threads(monkeypatch, kernels, "_search_rows", n_threads)
        scores, ids = index.search(queries, 12)
        monkeypatch.undo()
        assert len(threads) == n_threads
        assert (ids == expected[1]).all() and (scores == expected[0]).all()
    index.n_threads = 1
    one_by_one = [index.search(queries[i:i + 1], 12)[1][0] for i in (0, 255, 256, 599)]
    assert (numpy.array(one_by_one) == expected[1][[0, 255, 256, 599]]).all()


def test_sparse_index_falls_back_to_scipy_for_non_float32_or_non_finite():
    rng = numpy.random.default_rng(10)
    names = _random_csr(rng, 50, 10, 0.3)
    queries = _random_csr(rng, 5, 10, 0.5)
    index = SparseIndex()
    index.build(names)
    expected = index.search(queries, 4)
    index.names_t = index.names_t.astype(numpy.float64)  # e.g. set by hand
    assert (index.search(queries, 4)[1] == expected[1]).all()
    index.build(names)
    bad = queries.copy()
    bad.data[0] = numpy.nan
    assert (index.search(bad, 4)[1] == _scipy_reference(index, bad, 4)[1]).all()


def test_sparse_kernel_works_where_numba_cannot_cache(tmp_path):
    """A read-only install with no writable cache dir: numba finds no cache locator, and the
    kernel must still compile (per process) and search, with a warning."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    code = """
import warnings
import numba.core.caching as caching
impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl
impl._locator_classes = []  # as if no directory were writable
import numpy
from scipy import sparse
from spacy_biolink.index import SparseIndex
names = sparse.random(40, 12, density=0.3, format="csr", dtype="f", random_state=0)
queries = sparse.random(5, 12, density=0.4, format="csr", dtype="f", random_state=1)
index = SparseIndex()
index.build(names)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    got = index.search(queries, 4)
assert any("cannot cache" in str(w.message) for w in caught), caught
expected = index._search_scipy(queries, 4)
assert (got[0] == expected[0]).all() and (got[1] == expected[1]).all()
print("ok")
"""
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("ok")


def test_auto_faiss_index_is_exact_below_its_threshold_and_ivf_sq8_above(tmp_path):
    import faiss  # noqa: F401 - the dense extra
    import spacy
    from thinc.api import Config

    from spacy_biolink.index import AutoFaissIndex, FaissIndex

    rng = numpy.random.default_rng(0)
    vectors = rng.normal(size=(3000, 16)).astype(numpy.float32)
    vectors /= numpy.linalg.norm(vectors, axis=1, keepdims=True)
    queries = vectors[:50] + 0.05 * rng.normal(size=(50, 16)).astype(numpy.float32)
    flat = FaissIndex("flat")
    flat.build(vectors)
    expected = flat.search(queries, 10)

    small = AutoFaissIndex(min_names=len(vectors) + 1)
    small.build(vectors)
    assert small.kind == "flat"
    got = small.search(queries, 10)
    assert (got[1] == expected[1]).all() and (got[0] == expected[0]).all()

    # Every list scanned: IVF-SQ8 finds the exact top 10 (8-bit codes only blur scores).
    large = AutoFaissIndex(min_names=len(vectors), nlist=16, nprobe=16)
    large.build(vectors)
    assert large.kind == "ivfsq"
    scores, ids = large.search(queries, 10)
    # Measured: recall@10 0.984, largest score error 0.0217.
    assert numpy.mean([len(set(a) & set(b)) / 10 for a, b in zip(ids, expected[1])]) == \
        pytest.approx(0.984, abs=0.005)
    assert numpy.abs(scores - expected[0]).max() == pytest.approx(0.0217, abs=0.005)
    # Saved and loaded through the registered name: the kind chosen at build comes back.
    large.to_disk(tmp_path / "index")
    block = {"@misc": "spacy-biolink.AutoFaissIndex.v1", "min_names": 10 ** 9, "nprobe": 16}
    loaded = spacy.util.registry.resolve(Config({"index": block}))["index"]
    loaded.from_disk(tmp_path / "index")
    assert loaded.kind == "ivfsq" and loaded.n_vectors == len(vectors)
    assert (loaded.search(queries, 10)[1] == ids).all()
    with pytest.raises(BioLinkError, match="E180"):
        AutoFaissIndex(nprobe=0)


def test_no_index_module_names_a_registered_index():
    """Versions are index/registry.py's builder functions: the rest of index/ holds plain
    classes that do not know the names they are registered under (not in code, meta or
    messages)."""
    from pathlib import Path

    import spacy_biolink.index

    root = Path(spacy_biolink.index.__file__).parent
    naming = [p.name for p in sorted(root.glob("*.py"))
              if p.name != "registry.py" and "spacy-biolink." in p.read_text(encoding="utf8")]
    assert naming == []


@pytest.mark.parametrize("name,blocked,words,n_threads", [
    ("spacy-biolink.AutoSparseIndex.v1", False, False, 1),
    ("spacy-biolink.AutoSparseIndex.v2", True, False, 1),
    ("spacy-biolink.AutoSparseIndex.v3", True, True, 0),
    ("spacy-biolink.AutoSparseIndex.v4", True, True, 0),
    ("spacy-biolink.AutoSparseIndex.v5", True, True, 0),
    ("spacy-biolink.AutoSparseIndex.v6", True, True, 0),
])
def test_auto_builders_compose_an_exact_and_an_approximate_search(name, blocked, words,
                                                                  n_threads):
    """Each AutoSparseIndex version is the same class over different parts: v1 n-gram
    candidates by the exact kernel, v2 block by block, v3 to v6 word candidates (falling
    back to v2's); v3 to v6 alone split batches over every core (n_threads 0), in both
    searches."""
    from spacy.util import registry

    from spacy_biolink.index import (AutoSparseIndex, NgramCandidates, PrunedSparseIndex,
                                     SparseIndex, WordCandidates)
    from spacy_biolink.index.threads import search_threads

    index = registry.misc.get(name)(min_names=7)
    assert type(index) is AutoSparseIndex and index.min_names == 7
    assert type(index.exact) is SparseIndex and type(index.approximate) is PrunedSparseIndex
    source = index.approximate.source
    assert isinstance(source, WordCandidates) is words
    ngrams = source.fallback if words else source
    assert type(ngrams) is NgramCandidates and ngrams.blocked is blocked
    assert index.exact.n_threads == index.approximate.n_threads == search_threads(n_threads)
