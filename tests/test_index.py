import numpy
import pytest
from scipy import sparse

from spacy_biolink.errors import BioLinkError
from spacy_biolink.index import FaissIndex, SparseIndex, top_k


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
    rng = numpy.random.default_rng(1)
    names = sparse.random(300, 50, density=0.1, format="csr", random_state=2, dtype="f")
    queries = sparse.random(37, 50, density=0.2, format="csr", random_state=3, dtype="f")
    dense_scores = (queries @ names.T).toarray()
    expected = brute_force(dense_scores, 7, 0.0)
    for chunk in (1, 5, 256):
        index = SparseIndex(chunk_size=chunk)
        index.build(names)
        _, ids = index.search(queries, 7)
        assert [[j for j in row if j >= 0] for row in ids.tolist()] == expected
    restored = SparseIndex().from_bytes(index.to_bytes())
    assert (restored.search(queries, 7)[1] == ids).all()
    assert rng is not None


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
