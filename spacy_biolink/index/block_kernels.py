"""Compiled (numba) candidate kernel for the pruned sparse search at large dictionary sizes.

`kernels.search_rows` adds a query's postings into one accumulator over all names: past a
few million names that accumulator no longer fits the CPU caches, and the rare n-grams'
postings (which are what a pruned query reads) land on a different cache line each time.
Here names are taken in blocks of 2**shift (an accumulator of 64 kB-256 kB, in the L2
cache): a query adds its postings that fall in a block (each n-gram's postings are sorted
by name, so a cursor per query n-gram walks each list once over all blocks: no per-block
offsets are stored), and the names whose partial score crosses the query's running
threshold are kept in a buffer. The threshold is the C-th best score kept so far, so after
the first blocks few names cross it. A query goes through its blocks before the next query
starts, skipping the blocks and the n-grams (or words) with no postings in them.

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
from .threads import map_row_ranges

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


@_jit(types.UniTuple(types.int64, 2)(
    types.int64[::1], types.int64, types.int64[::1], types.int64[::1], types.int64[::1],
    types.uint32[::1], _RO_F32, _RO_U32, _RO_F32, types.float32[::1], types.uint32[::1],
    types.uint32, types.uint32, types.float32))
def _add_block(entries, n_entries, cursor, seg_start, ends, next_name, q_data, t_indices,
               t_data, acc, marks, base, limit, thr):
    """Add the postings of names base..limit-1 of `entries` (in entry order) into acc,
    advancing their cursors; marks the names whose partial score crossed thr. Returns
    (names marked, postings read)."""
    n_marked = 0
    n_postings = 0
    for a in range(n_entries):
        qj = entries[a]
        p = cursor[qj]
        seg_start[qj] = p
        if next_name[qj] >= limit:
            continue
        w = q_data[qj]
        end = ends[qj]
        while p < end:
            name = t_indices[p]
            if name >= limit:
                next_name[qj] = name
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
    return n_marked, n_postings


@_jit(types.Tuple((types.int64, types.float32))(
    types.uint32[::1], types.int64, types.float32[::1], types.float32, types.int64,
    types.float32[::1], types.int64[::1], types.int64, types.float32[::1], types.uint32))
def _keep_marked(marks, n_marked, acc, thr, size, buf_s, buf_i, c, scratch, base):
    """Put the marked names still at or above thr into the buffer, keeping its best c when
    it fills (which raises thr). Returns (buffer size, thr)."""
    cap = buf_s.shape[0]
    for m in range(n_marked):
        j = marks[m]
        s = acc[j]
        if s < thr:
            continue
        if size == cap:
            size = _keep_best(buf_s, buf_i, size, c, scratch)
            thr = buf_s[0]
            for t in range(1, size):
                thr = min(thr, buf_s[t])
            if s < thr:
                continue
        buf_s[size] = s
        buf_i[size] = numpy.int64(base) + numpy.int64(j)
        size += 1
    return size, thr


@_jit(types.void(types.int64[::1], types.int64, types.int64[::1], types.int64[::1], _RO_U32,
                 types.uint32, types.float32[::1], types.int64))
def _zero_block(entries, n_entries, seg_start, cursor, t_indices, base, acc, n_postings):
    """Zero what _add_block added: along the postings when they are few, else all of acc."""
    if n_postings * 8 < acc.shape[0]:
        for a in range(n_entries):
            qj = entries[a]
            for p in range(seg_start[qj], cursor[qj]):
                acc[t_indices[p] - base] = 0
    else:
        acc[:] = 0


@_jit(types.void(_RO_U64, _RO_U32, _RO_F32, _RO_U64, _RO_U32, _RO_F32, types.int64,
                 types.int64, types.int64[:, ::1], types.float32[::1], types.uint32[::1],
                 types.int64[::1], types.int64[::1], types.int64[::1], types.uint32[::1],
                 types.int64[::1], types.float32[::1], types.int64[::1], types.float32[::1]))
def _blocked_candidates(q_indptr, q_indices, q_data, t_indptr, t_indices, t_data, n_names,
                        shift, out_ids, acc, marks, cursor, seg_start, ends, next_name,
                        active, buf_s, buf_i, scratch):
    """The best C = out_ids.shape[1] names of each query row by partial score (the module
    docstring), into out_ids (prefilled with -1). acc (2**shift) is zero on entry and exit;
    marks as long as acc; cursor, seg_start, ends, next_name and active one per query
    entry; buf_* BUFFER_FACTOR * C; scratch as long as buf_s.

    A row at a time, its blocks in name order: a row's buffer, threshold and cursors are
    its own, so this is the block-by-block walk of every row at once, row by row. Each
    block visits only the row's entries whose postings are not used up (`active`, in the
    row's entry order, so a name's partial score is summed in the same order), and the
    next block read is the one holding the smallest name still to come (`next_name`):
    a real vocabulary's rare words have a few postings each, and visiting every word of a
    query in every block (reading its offsets and next posting from memory) cost more
    than its postings."""
    n_rows = q_indptr.shape[0] - 1
    c = out_ids.shape[1]
    for row in range(n_rows):
        lo = q_indptr[row]
        hi = q_indptr[row + 1]
        n_active = 0
        first = numpy.uint32(0xFFFFFFFF)
        for qj in range(lo, hi):
            f = q_indices[qj]
            p = numpy.int64(t_indptr[f])
            end = numpy.int64(t_indptr[f + 1])
            if p < end:
                cursor[qj] = p
                ends[qj] = end
                name = t_indices[p]
                next_name[qj] = name
                first = min(first, name)
                active[n_active] = qj
                n_active += 1
        size = 0
        thr = _MIN_NORMAL
        while n_active > 0:
            b = numpy.int64(first) >> shift
            base = numpy.uint32(b << shift)
            limit = numpy.uint32(min((b + 1) << shift, n_names))
            n_marked, n_postings = _add_block(active, n_active, cursor, seg_start, ends,
                                              next_name, q_data, t_indices, t_data, acc,
                                              marks, base, limit, thr)
            size, thr = _keep_marked(marks, n_marked, acc, thr, size, buf_s, buf_i, c,
                                     scratch, base)
            _zero_block(active, n_active, seg_start, cursor, t_indices, base, acc, n_postings)
            # Drop the entries used up, keeping the others in entry order.
            kept = 0
            first = numpy.uint32(0xFFFFFFFF)
            for a in range(n_active):
                qj = active[a]
                if cursor[qj] < ends[qj]:
                    active[kept] = qj
                    kept += 1
                    first = min(first, next_name[qj])
            n_active = kept
        size = _keep_best(buf_s, buf_i, size, c, scratch)
        for t in range(size):
            out_ids[row, t] = buf_i[t]


@_jit(types.void(_RO_U64, _RO_U32, _RO_F32, _RO_U64, _RO_U32, _RO_F32, types.int64,
                 types.int64, types.int64[:, ::1], types.float32[::1], types.uint32[::1],
                 types.int64[::1], types.int64[::1], types.int64[::1], types.uint32[::1],
                 types.int64[::1], types.int64[::1], types.int64[::1], types.int64[::1],
                 types.float32[::1], types.int64[::1], types.float32[::1]))
def _bucketed_candidates(q_indptr, q_indices, q_data, t_indptr, t_indices, t_data, n_names,
                         shift, out_ids, acc, marks, cursor, seg_start, ends, next_name,
                         link, head, tail, current, buf_s, buf_i, scratch):
    """_blocked_candidates' result, bit for bit, for queries of many entries with few
    postings each (the word step's words): there a block holds postings of a small share
    of a row's entries, and visiting every entry not used up at every block (three loops
    over them per block) cost several times the postings. Here each entry waits in the
    bucket of the block of its next name (head, tail: one per block; link: one per
    entry), and a block visits only its bucket's entries, in entry order as there (so a
    name's partial score is summed in the same order). current is one per entry."""
    n_rows = q_indptr.shape[0] - 1
    c = out_ids.shape[1]
    n_blocks = head.shape[0]
    for row in range(n_rows):
        lo = q_indptr[row]
        hi = q_indptr[row + 1]
        first_block = n_blocks
        for qj in range(lo, hi):
            f = q_indices[qj]
            p = numpy.int64(t_indptr[f])
            end = numpy.int64(t_indptr[f + 1])
            if p < end:
                cursor[qj] = p
                ends[qj] = end
                name = t_indices[p]
                next_name[qj] = name
                b = numpy.int64(name) >> shift
                first_block = min(first_block, b)
                # Entries come in entry order, so each bucket starts sorted.
                link[qj] = -1
                if head[b] < 0:
                    head[b] = qj
                else:
                    link[tail[b]] = qj
                tail[b] = qj
        size = 0
        thr = _MIN_NORMAL
        for b in range(first_block, n_blocks):
            if head[b] < 0:
                continue
            # The bucket's entries, in entry order (entries moved here from different
            # blocks interleave: an insertion sort of a nearly sorted list).
            n_current = 0
            qj = head[b]
            while qj >= 0:
                t = n_current
                while t > 0 and current[t - 1] > qj:
                    current[t] = current[t - 1]
                    t -= 1
                current[t] = qj
                n_current += 1
                qj = link[qj]
            head[b] = -1
            base = numpy.uint32(b << shift)
            limit = numpy.uint32(min((b + 1) << shift, n_names))
            # Every entry of this bucket has its next name in this block.
            n_marked, n_postings = _add_block(current, n_current, cursor, seg_start, ends,
                                              next_name, q_data, t_indices, t_data, acc,
                                              marks, base, limit, thr)
            size, thr = _keep_marked(marks, n_marked, acc, thr, size, buf_s, buf_i, c,
                                     scratch, base)
            _zero_block(current, n_current, seg_start, cursor, t_indices, base, acc,
                        n_postings)
            # The entries not used up wait in the bucket of their next name's block.
            for a in range(n_current):
                qj = current[a]
                if cursor[qj] < ends[qj]:
                    nb = numpy.int64(next_name[qj]) >> shift
                    link[qj] = -1
                    if head[nb] < 0:
                        head[nb] = qj
                    else:
                        link[tail[nb]] = qj
                    tail[nb] = qj
        size = _keep_best(buf_s, buf_i, size, c, scratch)
        for t in range(size):
            out_ids[row, t] = buf_i[t]


def blocked_candidates(q_indptr, q_indices, q_data, postings, n_names, c, *, n_threads=1,
                       chunk_size=256, shift=BLOCK_SHIFT, bucketed=False):
    """Candidate name ids (n_rows x c, int64, -1 padded, unordered) of each query row: its
    best c names by the inner product with the row, as the module docstring says. The
    queries are CSR arrays with non-negative values, `postings` from
    `kernels.prepare_postings` over non-negative values with each feature's names sorted
    (`postings_sorted`). Rows go `chunk_size` at a time (the cursors grow with the rows)
    and are split over `n_threads` threads (the kernel releases the GIL). `bucketed`: the
    same result by _bucketed_candidates, for rows of many entries with few postings each
    (the word step's words)."""
    from .kernels import prepare_postings

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
        buf_s = numpy.empty(cap, dtype=numpy.float32)
        buf_i = numpy.empty(cap, dtype=numpy.int64)
        # Empty buckets, one per block; left empty by each row.
        head = numpy.full(-(-n_names // width), -1, dtype=numpy.int64)
        for lo in range(start, stop, chunk_size):
            hi = min(lo + chunk_size, stop)
            indptr = numpy.ascontiguousarray(q_indptr[lo:hi + 1])
            n_entries = int(indptr[-1] - indptr[0])
            first = int(indptr[0])
            if bucketed:
                _bucketed_candidates(_readonly(indptr - indptr[0], numpy.uint64),
                                     q_indices[first:first + n_entries],
                                     q_data[first:first + n_entries], t_indptr, t_indices,
                                     t_data, n_names, shift, ids[lo:hi], acc, marks,
                                     numpy.empty(n_entries, dtype=numpy.int64),
                                     numpy.empty(n_entries, dtype=numpy.int64),
                                     numpy.empty(n_entries, dtype=numpy.int64),
                                     numpy.empty(n_entries, dtype=numpy.uint32),
                                     numpy.empty(n_entries, dtype=numpy.int64), head,
                                     numpy.empty(len(head), dtype=numpy.int64),
                                     numpy.empty(n_entries, dtype=numpy.int64),
                                     buf_s, buf_i, scratch)
                continue
            _blocked_candidates(_readonly(indptr - indptr[0], numpy.uint64),
                                q_indices[first:first + n_entries],
                                q_data[first:first + n_entries], t_indptr, t_indices, t_data,
                                n_names, shift, ids[lo:hi], acc, marks,
                                numpy.empty(n_entries, dtype=numpy.int64),
                                numpy.empty(n_entries, dtype=numpy.int64),
                                numpy.empty(n_entries, dtype=numpy.int64),
                                numpy.empty(n_entries, dtype=numpy.uint32),
                                numpy.empty(n_entries, dtype=numpy.int64), buf_s, buf_i, scratch)

    map_row_ranges(run, n_rows, n_threads)
    return ids


@_jit(types.boolean(_RO_U64, _RO_U32))
def postings_sorted(t_indptr, t_indices):
    """Whether each feature's names are strictly ascending (what the cursors assume)."""
    for f in range(t_indptr.shape[0] - 1):
        for p in range(t_indptr[f] + 1, t_indptr[f + 1]):
            if t_indices[p] <= t_indices[p - 1]:
                return False
    return True
