"""The word kernels' output grows without redoing rows (word_kernels._fill_growing): when
a batch keeps more words than the first guess of room, the kernel resumes at the row that
did not fit, after the entries already written, and the arrays equal those of one call
with room enough for all (bit for bit), for the three word searches and over threads."""
import numpy
import pytest
from scipy import sparse

from spacy_biolink.index import word_kernels
from spacy_biolink.index.word_kernels import (_fill_growing, rare_gram_index, word_cosines,
                                              word_cosines_pruned, word_cosines_rare)

N_WORDS = 3000
N_FEATURES = 40
N_QUERIES = 70


def unit_rows(matrix):
    norms = numpy.sqrt(numpy.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
    return sparse.csr_matrix(sparse.diags(1 / numpy.maximum(norms, 1e-30)) @ matrix,
                             dtype=numpy.float32)


@pytest.fixture(scope="module")
def data():
    # Few n-grams over many words: each query shares n-grams with most words, so a low
    # threshold keeps thousands per query, far past the first guess of room.
    rng = numpy.random.default_rng(7)
    words = unit_rows(sparse.random(N_WORDS, N_FEATURES, density=0.15, random_state=rng,
                                    format="csr", dtype=numpy.float64) + sparse.csr_matrix(
        (numpy.ones(N_WORDS), (numpy.arange(N_WORDS), rng.integers(0, N_FEATURES, N_WORDS))),
        shape=(N_WORDS, N_FEATURES)))
    queries = unit_rows(sparse.random(N_QUERIES, N_FEATURES, density=0.3, random_state=rng,
                                      format="csr", dtype=numpy.float64))
    queries.sort_indices()
    grams = sparse.csr_matrix(words.T)
    grams.sort_indices()
    q = (queries.indptr.astype(numpy.int64), queries.indices.astype(numpy.int32),
         queries.data.astype(numpy.float32))
    return q, grams


def one_fill(kernel_call, n_rows):
    """The arrays of one kernel call from row 0 with room for every word of every row."""
    out_indptr = numpy.zeros(n_rows + 1, dtype=numpy.int64)
    out_indices = numpy.empty(N_WORDS * n_rows, dtype=numpy.int32)
    out_data = numpy.empty(N_WORDS * n_rows, dtype=numpy.float32)
    size = kernel_call(0, out_indptr, out_indices, out_data)
    assert size >= 0
    return out_indptr, out_indices[:size], out_data[:size]


def assert_same(got, want):
    for a, b in zip(got, want):
        numpy.testing.assert_array_equal(a, b)


def test_the_batch_outgrows_the_first_guess(data):
    q, grams = data
    indptr, _, _ = word_cosines(*q, grams.indptr.astype(numpy.int64), grams.indices,
                                grams.data, N_WORDS, numpy.float32(0.01))
    assert indptr[-1] > 16 * max(1024, 64 * N_QUERIES)


def test_full_word_search_grown_equals_one_call(data):
    q, grams = data
    g_indptr = grams.indptr.astype(numpy.int64)
    got = word_cosines(*q, g_indptr, grams.indices, grams.data, N_WORDS, numpy.float32(0.01))
    acc = numpy.zeros(N_WORDS, dtype=numpy.float32)
    touched = numpy.empty(N_WORDS, dtype=numpy.int32)
    want = one_fill(lambda row, *out: word_kernels._word_cosines(
        row, *q, g_indptr, grams.indices, grams.data, numpy.float32(0.01), acc, touched, *out),
        N_QUERIES)
    assert_same(got, want)


@pytest.mark.parametrize("n_threads", [1, 2])
def test_pruned_word_search_grown_equals_one_call(data, n_threads):
    q, grams = data
    g_indptr = grams.indptr.astype(numpy.int64)
    got = word_cosines_pruned(*q, g_indptr, grams.indices, grams.data, N_WORDS,
                              numpy.float32(0.01), 0.8, n_threads=n_threads)
    acc = numpy.zeros(N_WORDS, dtype=numpy.float32)
    touched = numpy.empty(N_WORDS, dtype=numpy.int32)
    order = numpy.empty(N_FEATURES, dtype=numpy.int64)
    want = one_fill(lambda row, *out: word_kernels._word_cosines_pruned(
        row, *q, g_indptr, grams.indices, grams.data, numpy.float32(0.8), numpy.float32(0.01),
        acc, touched, *out, order, numpy.zeros(N_FEATURES, dtype=numpy.uint8)), N_QUERIES)
    assert_same(got, want)


@pytest.mark.parametrize("n_threads", [1, 2])
def test_rare_gram_word_search_grown_equals_one_call(data, n_threads):
    q, grams = data
    rare = rare_gram_index(grams.indptr, grams.indices, grams.data, N_FEATURES, N_WORDS, 3)
    got = word_cosines_rare(*q, rare, N_FEATURES, N_WORDS, numpy.float32(0.01), min_hits=2,
                            n_threads=n_threads)
    buffers = (numpy.zeros(N_FEATURES, dtype=numpy.float32),
               numpy.zeros(N_WORDS, dtype=numpy.uint8), numpy.zeros(N_WORDS, dtype=numpy.float32),
               numpy.empty(N_WORDS, dtype=numpy.int32), numpy.empty(N_WORDS, dtype=numpy.int32),
               numpy.empty(N_WORDS, dtype=numpy.int64), numpy.empty(N_WORDS, dtype=numpy.float32))
    want = one_fill(lambda row, *out: word_kernels._word_cosines_rare(
        row, *q, *rare, 2, numpy.float32(0.01), *buffers, *out), N_QUERIES)
    assert want[0][-1] > 4 * max(1024, 64 * N_QUERIES)
    assert_same(got, want)


def test_growth_resumes_where_the_room_ran_out():
    # A stand-in kernel writing 500 entries per row: the rows written before the room
    # ran out are not written again, and their entries survive the growth.
    n_rows, per_row = 40, 500
    starts = []

    def fill(first_row, out_indptr, out_indices, out_data):
        starts.append(first_row)
        size = int(out_indptr[first_row])
        for row in range(first_row, n_rows):
            if size + per_row > len(out_indices):
                return -(row + 1)
            out_indices[size:size + per_row] = row
            out_data[size:size + per_row] = row / 2
            size += per_row
            out_indptr[row + 1] = size
        return size

    indptr, indices, data = _fill_growing(n_rows, fill)
    assert starts == [0, 5, 20]
    numpy.testing.assert_array_equal(indptr, numpy.arange(n_rows + 1) * per_row)
    numpy.testing.assert_array_equal(indices, numpy.repeat(numpy.arange(n_rows), per_row))
    numpy.testing.assert_array_equal(data, numpy.repeat(numpy.arange(n_rows) / 2, per_row))
