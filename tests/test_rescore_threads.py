"""kernels.rescore_rows split over threads: each query row's scores against its
candidates are those of one thread bit for bit, and equal the rows' products."""
import numpy
import pytest
from scipy import sparse

from spacy_biolink.index.kernels import prepare_postings, rescore_rows


@pytest.mark.parametrize("n_threads", [2, 3])
def test_threads_give_one_threads_scores(n_threads):
    rng = numpy.random.default_rng(3)
    names = sparse.random(500, 60, density=0.1, random_state=rng, format="csr",
                          dtype=numpy.float32)
    names.sort_indices()
    queries = sparse.random(150, 60, density=0.2, random_state=rng, format="csr",
                            dtype=numpy.float32)
    queries.sort_indices()
    candidates = rng.integers(-1, 500, size=(150, 40))
    rows = prepare_postings(names.indptr, names.indices, names.data, 60)
    args = (queries.indptr, queries.indices, queries.data, rows, 60, candidates)
    one = rescore_rows(*args)
    several = rescore_rows(*args, n_threads=n_threads)
    numpy.testing.assert_array_equal(several, one)
    dense = (queries @ names.T).toarray()
    want = numpy.where(candidates >= 0, numpy.take_along_axis(
        dense, numpy.maximum(candidates, 0), axis=1), 0)
    numpy.testing.assert_allclose(several, want, rtol=1e-5, atol=1e-6)
    assert (several > 0).mean() > 0.3
