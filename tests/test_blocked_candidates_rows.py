"""block_kernels._blocked_candidates walks a row at a time and visits, in each block, only
the row's entries whose postings are not used up. It must return the arrays of the earlier
block-by-block walk (every row of a chunk in each block, every entry visited), kept here as
the reference, bit for bit: the same candidates in the same order, on word postings as the
word search reads them, on n-gram postings, and on generated inputs (hypothesis). So must
_bucketed_candidates (blocked_candidates(bucketed=True)), which visits in each block only
the entries with postings there."""
import numba
import numpy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import sparse

from spacy_biolink.index import block_kernels, kernels
from spacy_biolink.index.block_kernels import BUFFER_FACTOR, _MIN_NORMAL, _keep_best
from spacy_biolink.index.kernels import _readonly
from spacy_biolink.index.pruned import prune_queries

from .test_pruned_index import tfidf_rows
from .test_word_index import names_and_queries, word_index


@numba.njit(cache=False)
def _by_block(q_indptr, q_indices, q_data, t_indptr, t_indices, t_data, n_names, shift,
              out_ids, acc, marks, cursor, seg_start, buf_s, buf_i, scratch):
    # The kernel as it was before the row-at-a-time walk (git history), unchanged.
    n_rows = q_indptr.shape[0] - 1
    c = out_ids.shape[1]
    width = numpy.int64(1) << shift
    n_blocks = (n_names + width - 1) >> shift
    cap = buf_s.shape[1]
    sizes = numpy.zeros(n_rows, dtype=numpy.int64)
    thresholds = numpy.full(n_rows, _MIN_NORMAL, dtype=numpy.float32)
    for qj in range(q_indices.shape[0]):
        cursor[qj] = numpy.int64(t_indptr[q_indices[qj]])
    for b in range(n_blocks):
        base = numpy.uint32(b << shift)
        limit = numpy.uint32(min((b + 1) << shift, n_names))
        for row in range(n_rows):
            lo = q_indptr[row]
            hi = q_indptr[row + 1]
            thr = thresholds[row]
            n_marked = 0
            n_postings = 0
            for qj in range(lo, hi):
                w = q_data[qj]
                p = cursor[qj]
                end = numpy.int64(t_indptr[q_indices[qj] + 1])
                seg_start[qj] = p
                while p < end:
                    name = t_indices[p]
                    if name >= limit:
                        break
                    j = name - base
                    old = acc[j]
                    v = old + w * t_data[p]
                    acc[j] = v
                    if v >= thr and old < thr:
                        marks[n_marked] = j
                        n_marked += 1
                    p += 1
                n_postings += p - seg_start[qj]
                cursor[qj] = p
            if n_postings == 0:
                continue
            size = sizes[row]
            row_s = buf_s[row]
            row_i = buf_i[row]
            for m in range(n_marked):
                j = marks[m]
                s = acc[j]
                if s < thr:
                    continue
                if size == cap:
                    size = _keep_best(row_s, row_i, size, c, scratch)
                    thr = row_s[0]
                    for t in range(1, size):
                        thr = min(thr, row_s[t])
                    if s < thr:
                        continue
                row_s[size] = s
                row_i[size] = numpy.int64(base) + numpy.int64(j)
                size += 1
            sizes[row] = size
            thresholds[row] = thr
            if n_postings * 8 < width:
                for qj in range(lo, hi):
                    for p in range(seg_start[qj], cursor[qj]):
                        acc[t_indices[p] - base] = 0
            else:
                acc[:] = 0
    for row in range(n_rows):
        size = _keep_best(buf_s[row], buf_i[row], sizes[row], c, scratch)
        for t in range(size):
            out_ids[row, t] = buf_i[row, t]


def by_block(q_indptr, q_indices, q_data, postings, n_names, c, *, chunk_size=256,
             shift=block_kernels.BLOCK_SHIFT):
    """The earlier blocked_candidates, one thread."""
    t_indptr, t_indices, t_data = postings
    q_indptr, q_indices, q_data = kernels.prepare_postings(q_indptr, q_indices, q_data,
                                                           len(t_indptr) - 1)
    n_rows = len(q_indptr) - 1
    ids = numpy.full((n_rows, c), -1, dtype=numpy.int64)
    if n_rows == 0 or c == 0 or n_names == 0:
        return ids
    shift = int(min(shift, max(1, int(n_names - 1).bit_length())))
    width = 1 << shift
    acc = numpy.zeros(width, dtype=numpy.float32)
    marks = numpy.empty(width, dtype=numpy.uint32)
    cap = BUFFER_FACTOR * c
    scratch = numpy.empty(cap, dtype=numpy.float32)
    for lo in range(0, n_rows, chunk_size):
        hi = min(lo + chunk_size, n_rows)
        indptr = numpy.ascontiguousarray(q_indptr[lo:hi + 1])
        n_entries = int(indptr[-1] - indptr[0])
        first = int(indptr[0])
        _by_block(_readonly(indptr - indptr[0], numpy.uint64),
                  q_indices[first:first + n_entries], q_data[first:first + n_entries],
                  t_indptr, t_indices, t_data, n_names, shift, ids[lo:hi], acc, marks,
                  numpy.empty(n_entries, dtype=numpy.int64),
                  numpy.empty(n_entries, dtype=numpy.int64),
                  numpy.empty((hi - lo, cap), dtype=numpy.float32),
                  numpy.empty((hi - lo, cap), dtype=numpy.int64), scratch)
    return ids


def _same(queries, postings, n_names, c, **options):
    want = by_block(queries.indptr, queries.indices, queries.data, postings, n_names, c,
                    **options)
    for bucketed in (False, True):
        got = block_kernels.blocked_candidates(queries.indptr, queries.indices, queries.data,
                                               postings, n_names, c, bucketed=bucketed,
                                               **options)
        numpy.testing.assert_array_equal(got, want, err_msg=f"bucketed={bucketed}")
    return got


@pytest.fixture(scope="module")
def words():
    data = names_and_queries(n_names=3000, n_queries=120)
    index = word_index(data)
    return index.words, data[3], index.n_vectors


@pytest.mark.parametrize("threshold,coverage", [(0.3, None), (0.2, 0.8), (0.05, 0.8)])
@pytest.mark.parametrize("shift,c,chunk_size", [
    (3, 5, 256),  # 8-name blocks: most entries idle in most blocks, buffers cut back often
    (7, 40, 7),
    (16, 256, 256),  # one block
])
def test_word_candidates_are_the_block_by_block_walks_bit_for_bit(words, threshold, coverage,
                                                                  shift, c, chunk_size):
    postings_words, queries, n_names = words
    word_queries = postings_words.word_queries(queries, threshold, coverage=coverage)
    t = postings_words.postings
    postings = kernels.prepare_postings(t.indptr, t.indices, t.data, t.shape[1])
    got = _same(word_queries, postings, n_names, c, shift=shift, chunk_size=chunk_size)
    # Not a vacuous comparison: rows find candidates, and some rows fill their c.
    assert (got >= 0).any(axis=1).all() and (got[:, -1] >= 0).any()


@pytest.mark.parametrize("shift,c", [(3, 5), (6, 40), (9, 200)])
def test_ngram_candidates_are_the_block_by_block_walks_bit_for_bit(shift, c):
    names, queries = tfidf_rows()
    names = sparse.vstack([names, names[:300]], format="csr")  # tied scores
    pruned = prune_queries(queries, 0.6)
    names_t = sparse.csr_matrix(names, dtype=numpy.float32).T.tocsr()
    postings = kernels.prepare_postings(names_t.indptr, names_t.indices, names_t.data,
                                        names.shape[0])
    _same(pruned, postings, names.shape[0], c, shift=shift)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(seed=st.integers(0, 2**32 - 1), n_names=st.integers(1, 300),
       n_features=st.integers(1, 40), n_queries=st.integers(1, 12), c=st.integers(1, 30),
       shift=st.integers(1, 8), levels=st.integers(1, 6))
def test_generated_postings_give_the_block_by_block_walks_arrays(seed, n_names, n_features,
                                                                 n_queries, c, shift, levels):
    rng = numpy.random.default_rng(seed)
    # Few distinct values, so partial scores tie, at the c-th place too.
    names = sparse.random(n_names, n_features, density=0.15, random_state=rng,
                          data_rvs=lambda n: rng.integers(1, levels + 1, n) / levels,
                          format="csr", dtype=numpy.float32)
    queries = sparse.random(n_queries, n_features, density=0.3, random_state=rng,
                            data_rvs=lambda n: rng.integers(1, levels + 1, n) / levels,
                            format="csr", dtype=numpy.float32)
    names_t = names.T.tocsr()
    names_t.sort_indices()
    queries.sort_indices()
    postings = kernels.prepare_postings(names_t.indptr, names_t.indices, names_t.data,
                                        n_names)
    _same(queries, postings, n_names, c, shift=shift, chunk_size=int(rng.integers(1, 5)))
