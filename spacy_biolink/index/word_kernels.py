"""Compiled (numba) kernel of word_postings.py: the cosine of a query with every word that
shares an n-gram with it, keeping the words at or above a threshold."""
import numpy

from .kernels import _jit


@_jit("int64(int64[::1], int32[::1], float32[::1], int64[::1], int32[::1], float32[::1], "
      "float32, float32[::1], int32[::1], int64[::1], int32[::1], float32[::1])")
def _word_cosines(q_indptr, q_indices, q_data, g_indptr, g_indices, g_data, threshold, acc,
                  touched, out_indptr, out_indices, out_data):
    """Fill out_* with each query's words (ascending) of cosine >= threshold; returns the
    number written, or -1 when out_indices is too small (acc must be all zero on entry
    and is left so)."""
    size = 0
    cap = out_indices.shape[0]
    out_indptr[0] = 0
    for row in range(q_indptr.shape[0] - 1):
        n_touched = 0
        for p in range(q_indptr[row], q_indptr[row + 1]):
            feature = q_indices[p]
            weight = q_data[p]
            for w in range(g_indptr[feature], g_indptr[feature + 1]):
                word = g_indices[w]
                if acc[word] == 0:
                    touched[n_touched] = word
                    n_touched += 1
                acc[word] += weight * g_data[w]
        kept_start = size
        # A query none of whose words reaches the threshold keeps its closest one, so
        # that it still gets candidates (most likely NIL, but scored).
        best = numpy.float32(0)
        for t in range(n_touched):
            best = max(best, acc[touched[t]])
        cut = min(threshold, best) if best > 0 else threshold
        for t in range(n_touched):
            word = touched[t]
            if acc[word] >= cut:
                if size == cap:
                    for u in range(n_touched):
                        acc[touched[u]] = 0
                    return -1
                out_indices[size] = word
                out_data[size] = acc[word]
                size += 1
            acc[word] = 0
        # Words ascending within a row, as CSR consumers expect.
        order = numpy.argsort(out_indices[kept_start:size])
        out_indices[kept_start:size] = out_indices[kept_start:size][order]
        out_data[kept_start:size] = out_data[kept_start:size][order]
        out_indptr[row + 1] = size
    return size


def word_cosines(q_indptr, q_indices, q_data, g_indptr, g_indices, g_data, n_words, threshold):
    """CSR arrays (indptr, indices, data) of the words of cosine >= threshold with each
    query row (non-negative unit rows; g: n-grams x words, unit word rows)."""
    acc = numpy.zeros(n_words, dtype=numpy.float32)
    touched = numpy.empty(n_words, dtype=numpy.int32)
    n_rows = len(q_indptr) - 1
    out_indptr = numpy.zeros(n_rows + 1, dtype=numpy.int64)
    cap = max(1024, 64 * n_rows)
    while True:
        out_indices = numpy.empty(cap, dtype=numpy.int32)
        out_data = numpy.empty(cap, dtype=numpy.float32)
        size = _word_cosines(q_indptr, q_indices, q_data, g_indptr,
                             numpy.ascontiguousarray(g_indices, dtype=numpy.int32),
                             numpy.ascontiguousarray(g_data, dtype=numpy.float32),
                             numpy.float32(threshold), acc, touched, out_indptr, out_indices,
                             out_data)
        if size >= 0:
            return out_indptr, out_indices[:size], out_data[:size]
        cap *= 4
