"""Compiled (numba) candidate kernel for the pruned sparse search at large dictionary sizes.

`kernels.search_rows` adds a query's postings into one accumulator over all names: past a
few million names that accumulator no longer fits the CPU caches, and the rare n-grams'
postings (which are what a pruned query reads) land on a different cache line each time.
Here names are taken in blocks of 2**shift (an accumulator of 64 kB-256 kB, in the L2
cache): for each block, every query of the batch adds its postings that fall in the block
(each n-gram's postings are sorted by name, so a cursor per query n-gram walks each list
once over all blocks: no per-block offsets are stored), and the names whose partial score
crosses the query's running threshold are kept in a buffer. The threshold is the C-th best
score kept so far, so after the first blocks few names cross it.

The result, for each query row, is the set of its C best names by (partial score
descending, name id ascending), names scoring 0 excluded: the candidates that
`kernels.search_rows(..., k=C)` returns, in an unspecified order. Scores are summed in
float32 in the order of the row's stored features, as there. One difference: a partial
score below float32's smallest normal number (1.2e-38) counts as 0 (a subnormal threshold
would vanish where denormals are flushed).
"""
import numpy
from numba import types

from .kernels import _RO_F32, _RO_U32, _RO_U64, _jit, _kth_largest, _readonly

# Names per block: 2**16 float32 = 256 kB of accumulator, within a core's L2 (512 kB on
# the machine measured; 2**14-2**16 measured alike, BENCHMARKS.md).
BLOCK_SHIFT = 16
# The candidate buffer holds this many times C before it is cut back to the best C.
BUFFER_FACTOR = 4
# Smallest normal float32: the threshold before a query has C candidates.
_MIN_NORMAL = numpy.float32(numpy.finfo(numpy.float32).tiny)


@_jit("int64(float32[::1], int64[::1], int64, int64, float32[::1])")
def _keep_best(buf_s, buf_i, size, c, scratch):
    """Reorder buf[:size] so that its first min(c, size) entries are the best c by (score
    descending, id ascending); returns how many are kept."""
    if size <= c:
        return size
    kth = _kth_largest(buf_s[:size], c, scratch)
    kept = 0
    for t in range(size):
        if buf_s[t] > kth:
            s = buf_s[t]
            i = buf_i[t]
            buf_s[t] = buf_s[kept]
            buf_i[t] = buf_i[kept]
            buf_s[kept] = s
            buf_i[kept] = i
            kept += 1
    # Names tied at the c-th score: the lowest ids win, as in the exact kernel.
    n_ties = 0
    for t in range(kept, size):
        if buf_s[t] == kth:
            buf_i[kept + n_ties] = buf_i[t]
            n_ties += 1
    ties = numpy.sort(buf_i[kept:kept + n_ties])
    for t in range(c - kept):
        buf_s[kept + t] = kth
        buf_i[kept + t] = ties[t]
    return c


@_jit(types.void(_RO_U64, _RO_U32, _RO_F32, _RO_U64, _RO_U32, _RO_F32, types.int64,
                 types.int64, types.int64[:, ::1], types.float32[::1], types.uint32[::1],
                 types.int64[::1], types.int64[::1], types.float32[:, ::1],
                 types.int64[:, ::1], types.float32[::1]))
def _blocked_candidates(q_indptr, q_indices, q_data, t_indptr, t_indices, t_data, n_names,
                        shift, out_ids, acc, marks, cursor, seg_start, buf_s, buf_i, scratch):
    """The best C = out_ids.shape[1] names of each query row by partial score (the module
    docstring), into out_ids (prefilled with -1). acc (2**shift) is zero on entry and exit;
    marks as long as acc; cursor and seg_start one per query entry; buf_* n_rows x
    (BUFFER_FACTOR * C); scratch as long as a buffer row."""
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
                    # Scores only grow (non-negative rows): each name crosses once.
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
            # Zero what was added: along the postings when they are few, else all of it.
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


def blocked_candidates(q_indptr, q_indices, q_data, postings, n_names, c, *, n_threads=1,
                       chunk_size=256, shift=BLOCK_SHIFT):
    """Candidate name ids (n_rows x c, int64, -1 padded, unordered) of each query row: its
    best c names by the inner product with the row, as the module docstring says. The
    queries are CSR arrays with non-negative values, `postings` from
    `kernels.prepare_postings` over non-negative values with each feature's names sorted
    (`postings_sorted`). Rows go `chunk_size` at a time (the buffers grow with the rows)
    and are split over `n_threads` threads (the kernel releases the GIL)."""
    from .kernels import MIN_ROWS_PER_THREAD, prepare_postings

    t_indptr, t_indices, t_data = postings
    q_indptr, q_indices, q_data = prepare_postings(q_indptr, q_indices, q_data,
                                                   len(t_indptr) - 1)
    n_rows = len(q_indptr) - 1
    ids = numpy.full((n_rows, c), -1, dtype=numpy.int64)
    if n_rows == 0 or c == 0 or n_names == 0:
        return ids
    shift = int(min(shift, max(1, int(n_names - 1).bit_length())))

    def run(start, stop):
        width = 1 << shift
        acc = numpy.zeros(width, dtype=numpy.float32)
        marks = numpy.empty(width, dtype=numpy.uint32)
        cap = BUFFER_FACTOR * c
        scratch = numpy.empty(cap, dtype=numpy.float32)
        for lo in range(start, stop, chunk_size):
            hi = min(lo + chunk_size, stop)
            indptr = numpy.ascontiguousarray(q_indptr[lo:hi + 1])
            n_entries = int(indptr[-1] - indptr[0])
            buf_s = numpy.empty((hi - lo, cap), dtype=numpy.float32)
            buf_i = numpy.empty((hi - lo, cap), dtype=numpy.int64)
            first = int(indptr[0])
            _blocked_candidates(_readonly(indptr - indptr[0], numpy.uint64),
                                q_indices[first:first + n_entries],
                                q_data[first:first + n_entries], t_indptr, t_indices, t_data,
                                n_names, shift, ids[lo:hi], acc, marks,
                                numpy.empty(n_entries, dtype=numpy.int64),
                                numpy.empty(n_entries, dtype=numpy.int64), buf_s, buf_i, scratch)

    n_threads = max(1, min(int(n_threads), n_rows // MIN_ROWS_PER_THREAD))
    if n_threads == 1:
        run(0, n_rows)
        return ids
    from concurrent.futures import ThreadPoolExecutor

    bounds = numpy.linspace(0, n_rows, n_threads + 1).astype(int)
    with ThreadPoolExecutor(n_threads) as pool:
        list(pool.map(run, bounds[:-1], bounds[1:]))
    return ids


@_jit(types.boolean(_RO_U64, _RO_U32))
def postings_sorted(t_indptr, t_indices):
    """Whether each feature's names are strictly ascending (what the cursors assume)."""
    for f in range(t_indptr.shape[0] - 1):
        for p in range(t_indptr[f] + 1, t_indptr[f + 1]):
            if t_indices[p] <= t_indices[p - 1]:
                return False
    return True
