"""Compiled (numba) kernel for SparseIndex: exact top-k sparse inner products.

Imported lazily by `SparseIndex.search`, so `import spacy_biolink` / `spacy.load` never
pay for importing numba. The kernel reproduces scipy's `csr_matmat` arithmetic exactly:
float32 products summed in float32 in the order of the query row's stored features, and a
name whose sum is exactly 0 is no candidate (scipy drops zeros from the product). Scores
are therefore bit-identical to `queries @ names_t`, and ranking is that of `index.top_k`
(score descending, ties to the lower id). Inputs must be finite (SparseIndex checks).
"""
import threading
import warnings

import numpy
from numba import njit, types

from .threads import MIN_ROWS_PER_THREAD, map_row_ranges  # noqa: F401 (the tests read it here)

# Inputs are passed as read-only views (index arrays loaded from bytes are read-only), so
# one signature serves both; offsets and indices as unsigned views, which spares numba's
# negative-index wraparound on every posting (~1/3 of the scatter-add time).
_RO_U64 = types.Array(types.uint64, 1, "C", readonly=True)
_RO_U32 = types.Array(types.uint32, 1, "C", readonly=True)
_RO_F32 = types.Array(types.float32, 1, "C", readonly=True)

# Dense selection: maxima of 8-name blocks (a vectorized pass), and maxima of groups of 8
# blocks (blocks j, j + n_groups, ...: an elementwise max over rows, also vectorized) let
# the top-k selection read only the few blocks that can hold a top-k name.
BLOCK = 8
# A query with fewer postings than n_names / SPARSE_RATIO tracks the names it touches
# instead of scanning the whole accumulator.
SPARSE_RATIO = 16


def _jit(signature):
    """njit with one explicit signature: a single specialization per function keeps the
    compile short, and callers' arguments are converted to it."""

    def wrap(func):
        # The cache lives next to this file, else in NUMBA_CACHE_DIR or the user's cache
        # dir; with none writable numba raises at decoration time: compile per process.
        try:
            return njit(signature, cache=True, nogil=True)(func)
        except RuntimeError as err:  # "cannot cache function ...: no locator available"
            if "cache" not in str(err):
                raise
            _warn_no_cache(err)
            return njit(signature, cache=False, nogil=True)(func)

    return wrap


_WARNED = []


def _warn_no_cache(err) -> None:
    if not _WARNED:
        _WARNED.append(True)
        warnings.warn(f"spacy_biolink: numba cannot cache the sparse search kernel ({err}); "
                      "it is compiled in each process. Set NUMBA_CACHE_DIR to a writable "
                      "directory to cache it.", RuntimeWarning)


@_jit("boolean(float32, int64, float32, int64)")
def _worse(s1, i1, s2, i2):
    return s1 < s2 or (s1 == s2 and i1 > i2)


@_jit("void(float32[::1], int64[::1], int64, float32, int64)")
def _sift_up(heap_s, heap_i, pos, s, i):
    """Add (s, i) at position pos (the old size) of a heap whose root is the worst."""
    while pos > 0:
        parent = (pos - 1) >> 1
        if not _worse(s, i, heap_s[parent], heap_i[parent]):
            break
        heap_s[pos] = heap_s[parent]
        heap_i[pos] = heap_i[parent]
        pos = parent
    heap_s[pos] = s
    heap_i[pos] = i


@_jit("void(float32[::1], int64[::1], int64, float32, int64)")
def _sift_down(heap_s, heap_i, size, s, i):
    """Replace the root with (s, i) in a heap of `size` entries."""
    pos = 0
    while True:
        child = 2 * pos + 1
        if child >= size:
            break
        right = child + 1
        if right < size and _worse(heap_s[right], heap_i[right], heap_s[child], heap_i[child]):
            child = right
        if not _worse(heap_s[child], heap_i[child], s, i):
            break
        heap_s[pos] = heap_s[child]
        heap_i[pos] = heap_i[child]
        pos = child
    heap_s[pos] = s
    heap_i[pos] = i


@_jit("int64(float32[::1], int64[::1], int64, int64, float32, int64)")
def _offer(heap_s, heap_i, size, k, s, i):
    """Offer candidate (s, i) to the top-k heap; returns the new size."""
    if size < k:
        _sift_up(heap_s, heap_i, size, s, i)
        return size + 1
    if s > heap_s[0] or (s == heap_s[0] and i < heap_i[0]):
        _sift_down(heap_s, heap_i, size, s, i)
    return size


@_jit("float32(float32[::1], int64, float32[::1])")
def _kth_largest(values, k, scratch):
    """The k-th largest of values (k >= 1, finite values), by quickselect on a copy."""
    n = values.shape[0]
    for i in range(n):
        scratch[i] = values[i]
    target = k - 1  # position in descending order
    lo = 0
    hi = n - 1
    while lo < hi:
        pivot = scratch[(lo + hi) >> 1]
        i = lo
        j = hi
        while i <= j:
            while scratch[i] > pivot:
                i += 1
            while scratch[j] < pivot:
                j -= 1
            if i <= j:
                tmp = scratch[i]
                scratch[i] = scratch[j]
                scratch[j] = tmp
                i += 1
                j -= 1
        if target <= j:
            hi = j
        elif target >= i:
            lo = i
        else:
            break
    return scratch[target]


@_jit(types.void(_RO_U64, _RO_U32, _RO_F32, _RO_U64, _RO_U32, _RO_F32, types.int64,
                types.float32[:, ::1], types.int64[:, ::1], types.float32[::1],
                types.float32[::1], types.float32[::1], types.float32[::1],
                types.boolean[::1], types.int64[::1], types.float32[::1], types.int64[::1]))
def _search_rows(q_indptr, q_indices, q_data, t_indptr, t_indices, t_data, n_names,
                 out_scores, out_ids, acc, block_max, group_max, scratch, seen, touched,
                 heap_s, heap_i):
    """Top-k names of each query row into out_scores/out_ids (n_rows x k, prefilled with
    0 / -1). acc (BLOCK * BLOCK * n_groups) and seen (n_names) are all zero on entry and
    exit."""
    n_rows = q_indptr.shape[0] - 1
    k = out_ids.shape[1]
    n_groups = group_max.shape[0]
    n_blocks = block_max.shape[0]
    for row in range(n_rows):
        lo = q_indptr[row]
        hi = q_indptr[row + 1]
        n_postings = 0
        for qj in range(lo, hi):
            feature = q_indices[qj]
            n_postings += numpy.int64(t_indptr[feature + 1] - t_indptr[feature])
        size = 0
        if n_postings * SPARSE_RATIO < n_names:
            # Few postings: remember the names touched, select among them.
            n_touched = 0
            for qj in range(lo, hi):
                feature = q_indices[qj]
                w = q_data[qj]
                for p in range(t_indptr[feature], t_indptr[feature + 1]):
                    name = t_indices[p]
                    if not seen[name]:
                        seen[name] = True
                        touched[n_touched] = name
                        n_touched += 1
                    acc[name] += w * t_data[p]
            for t in range(n_touched):
                name = touched[t]
                s = acc[name]
                acc[name] = 0
                seen[name] = False
                if s != 0:
                    size = _offer(heap_s, heap_i, size, k, s, name)
        else:
            # Many postings: plain scatter-add, then a blocked scan of the accumulator.
            for qj in range(lo, hi):
                feature = q_indices[qj]
                w = q_data[qj]
                for p in range(t_indptr[feature], t_indptr[feature + 1]):
                    acc[t_indices[p]] += w * t_data[p]
            for j in range(n_blocks):
                b = BLOCK * j
                m0 = max(acc[b], acc[b + 1])
                m1 = max(acc[b + 2], acc[b + 3])
                m2 = max(acc[b + 4], acc[b + 5])
                m3 = max(acc[b + 6], acc[b + 7])
                block_max[j] = max(max(m0, m1), max(m2, m3))
            for g in range(n_groups):
                group_max[g] = block_max[g]
            for r in range(1, BLOCK):
                base = r * n_groups
                for g in range(n_groups):
                    group_max[g] = max(group_max[g], block_max[base + g])
            # The k-th largest group max is a lower bound on the k-th best score: each of
            # those k groups holds a name scoring at least that. Only valid if positive
            # (zeros are no candidates, and negatives may be needed to fill k).
            floor = -numpy.inf
            if k <= n_groups:
                floor = _kth_largest(group_max, k, scratch)
                if not floor > 0:
                    floor = -numpy.inf
            for g in range(n_groups):
                # Skip what is below the floor or the k-th best so far (equal to it can
                # still win on id). Zeros are never candidates.
                if group_max[g] < floor or (size == k and group_max[g] < heap_s[0]):
                    continue
                for r in range(BLOCK):
                    j = r * n_groups + g
                    if block_max[j] < floor or (size == k and block_max[j] < heap_s[0]):
                        continue
                    for name in range(BLOCK * j, BLOCK * j + BLOCK):
                        s = acc[name]
                        if s >= floor and s != 0:
                            size = _offer(heap_s, heap_i, size, k, s, name)
            for name in range(acc.shape[0]):
                acc[name] = 0
        # Pop worst first, filling from the back.
        for pos in range(size - 1, -1, -1):
            out_scores[row, pos] = heap_s[0]
            out_ids[row, pos] = heap_i[0]
            if pos > 0:
                _sift_down(heap_s, heap_i, pos, heap_s[pos], heap_i[pos])


def prepare_postings(indptr, indices, data, n_names):
    """A features x names CSR matrix's arrays as the kernel takes them: read-only views,
    offsets and indices unsigned. Checked here (once per index) as the kernel does not
    bound-check."""
    indptr = _readonly(indptr, numpy.int64)
    indices = _readonly(indices, numpy.int32)
    data = _readonly(data, numpy.float32)
    nnz = indptr[-1] if len(indptr) else -1
    if nnz < 0 or indptr[0] != 0 or (numpy.diff(indptr) < 0).any() or nnz > len(indices) \
            or nnz > len(data):
        raise ValueError("malformed CSR offsets")
    indices, data = indices[:nnz], data[:nnz]
    if nnz and (indices.min() < 0 or indices.max() >= n_names):
        raise ValueError("CSR index out of range")
    return indptr.view(numpy.uint64), indices.view(numpy.uint32), data


def search_rows(q_indptr, q_indices, q_data, postings, n_names, k, n_threads=1):
    """(scores float32, ids int64), each n_rows x k: best first, ties to the lower id,
    padded with 0 / -1. The queries are CSR arrays (indptr, indices, data) over the
    features of `postings` (from `prepare_postings`).
    With n_threads > 1, rows are split over threads (the kernel releases the GIL)."""
    t_indptr, t_indices, t_data = postings
    q_indptr, q_indices, q_data = prepare_postings(q_indptr, q_indices, q_data,
                                                   len(t_indptr) - 1)
    n_rows = len(q_indptr) - 1
    scores = numpy.zeros((n_rows, k), dtype=numpy.float32)
    ids = numpy.full((n_rows, k), -1, dtype=numpy.int64)
    if n_rows == 0 or k == 0 or n_names == 0:
        return scores, ids
    heap = min(k, n_names)

    def run(start, stop):
        # Each thread has its own scratch; a row's result does not depend on the split.
        acc, block_max, group_max, scratch, seen, touched = _scratch(n_names)
        _search_rows(q_indptr[start:stop + 1], q_indices, q_data, t_indptr, t_indices, t_data,
                     n_names, scores[start:stop], ids[start:stop], acc, block_max, group_max,
                     scratch, seen, touched, numpy.empty(heap, dtype=numpy.float32),
                     numpy.empty(heap, dtype=numpy.int64))

    map_row_ranges(run, n_rows, n_threads)
    return scores, ids


_LOCAL = threading.local()


def _scratch(n_names):
    """This thread's buffers for an index of n_names (the kernel leaves acc and seen all
    zero): kept between calls, as fresh zeroed pages cost more than a small search."""
    buffers = getattr(_LOCAL, "buffers", None)
    if buffers is None or len(buffers[4]) != n_names:
        n_groups = -(-n_names // (BLOCK * BLOCK))
        buffers = _LOCAL.buffers = (
            numpy.zeros(BLOCK * BLOCK * n_groups, dtype=numpy.float32),
            numpy.empty(BLOCK * n_groups, dtype=numpy.float32),
            numpy.empty(n_groups, dtype=numpy.float32),
            numpy.empty(n_groups, dtype=numpy.float32),
            numpy.zeros(n_names, dtype=numpy.bool_),
            numpy.empty(n_names, dtype=numpy.int64))
    return buffers


def _readonly(array, dtype):
    view = numpy.ascontiguousarray(array, dtype=dtype).view()
    view.flags.writeable = False
    return view





@_jit(types.void(_RO_U64, _RO_U32, _RO_F32, _RO_U64, _RO_U32, _RO_F32, types.int64[:, ::1],
                types.float32[:, ::1], types.float32[::1]))
def _rescore_rows(q_indptr, q_indices, q_data, f_indptr, f_indices, f_data, candidates,
                  out_scores, qbuf):
    """Exact scores of each query row against its candidate names (-1: none), through the
    names' own rows (names x features, ascending features), summed as the kernel above
    sums them (float32, ascending feature order): for queries with sorted features the
    scores are bit-identical to the exact search's. qbuf (n_features) is zero on entry and
    exit."""
    for row in range(q_indptr.shape[0] - 1):
        lo = q_indptr[row]
        hi = q_indptr[row + 1]
        for qj in range(lo, hi):
            qbuf[q_indices[qj]] = q_data[qj]
        for c in range(candidates.shape[1]):
            name = candidates[row, c]
            s = numpy.float32(0)
            if name >= 0:
                for fp in range(f_indptr[name], f_indptr[name + 1]):
                    w = qbuf[f_indices[fp]]
                    if w != 0:
                        s += w * f_data[fp]
            out_scores[row, c] = s
        for qj in range(lo, hi):
            qbuf[q_indices[qj]] = 0


def rescore_rows(q_indptr, q_indices, q_data, rows, n_features, candidates, *,
                 n_threads=1):
    """Float32 scores (n_queries x n_candidates) of each query row (CSR arrays over
    n_features) against its candidate names (int64, -1: none, scored 0); `rows` is the
    names x features matrix as `prepare_postings` gives it. The query rows are split over
    `n_threads` threads (each row's scores are its own: the same whatever the split)."""
    from .threads import map_row_ranges

    f_indptr, f_indices, f_data = rows
    q_indptr, q_indices, q_data = prepare_postings(q_indptr, q_indices, q_data, n_features)
    candidates = numpy.ascontiguousarray(candidates, dtype=numpy.int64)
    scores = numpy.zeros(candidates.shape, dtype=numpy.float32)
    if not candidates.size:
        return scores

    def run(lo, hi):
        # A row range's CSR arrays keep the batch's offsets: indptr[lo:hi + 1] points
        # into the whole indices and data.
        _rescore_rows(_readonly(q_indptr[lo:hi + 1], numpy.uint64), q_indices, q_data,
                      f_indptr, f_indices, f_data, candidates[lo:hi], scores[lo:hi],
                      numpy.zeros(n_features, dtype=numpy.float32))

    map_row_ranges(run, candidates.shape[0], n_threads)
    return scores
