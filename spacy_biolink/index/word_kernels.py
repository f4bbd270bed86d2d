"""Compiled (numba) kernels of word_postings.py: the cosine of a query with every word that
shares an n-gram with it, keeping the words at or above a threshold (WordSparseIndex.v1),
and the same over each query's rarest n-grams only (word_cosines_pruned,
WordSparseIndex.v2), whose postings grow far slower with a vocabulary's words; and the
exact cosines of the words found through their own rarest n-grams only (word_cosines_rare,
WordSparseIndex.v3: a prefix filter), whose reading barely grows with the words."""
import numpy

from .kernels import _jit
from .threads import map_row_ranges


def _fill_growing(n_rows, fill):
    """(indptr, indices, data) of `fill(first_row, out_indptr, out_indices, out_data)`, a
    kernel that writes rows first_row.. after the out_indptr[first_row] entries already
    written and returns the entries written, or -(row + 1) when out_indices is too small
    for `row`: then the room grows fourfold and the kernel resumes at that row. A batch's
    words kept per query are many times the first guess at 10M words, and starting over
    at each growth did the first rows' work up to three times."""
    out_indptr = numpy.zeros(n_rows + 1, dtype=numpy.int64)
    cap = max(1024, 64 * n_rows)
    out_indices = numpy.empty(cap, dtype=numpy.int32)
    out_data = numpy.empty(cap, dtype=numpy.float32)
    row = 0
    while True:
        size = fill(row, out_indptr, out_indices, out_data)
        if size >= 0:
            return out_indptr, out_indices[:size], out_data[:size]
        row = -size - 1
        done = int(out_indptr[row])
        cap *= 4
        grown_indices = numpy.empty(cap, dtype=numpy.int32)
        grown_data = numpy.empty(cap, dtype=numpy.float32)
        grown_indices[:done] = out_indices[:done]
        grown_data[:done] = out_data[:done]
        out_indices, out_data = grown_indices, grown_data


def _join_rows(parts):
    """One CSR (indptr, indices, data) of consecutive row ranges' CSR parts."""
    if len(parts) == 1:
        return parts[0]
    indptr = [numpy.zeros(1, dtype=numpy.int64)]
    offset = 0
    for part in parts:
        indptr.append(part[0][1:] + offset)
        offset += int(part[0][-1])
    return (numpy.concatenate(indptr), numpy.concatenate([p[1] for p in parts]),
            numpy.concatenate([p[2] for p in parts]))


@_jit("int64(float32[::1], int32[::1], int64, float32, int32[::1], float32[::1], int64)")
def _emit_row(acc, touched, n_touched, threshold, out_indices, out_data, size):
    """Write one query row's words whose accumulated cosine reaches `threshold` (words
    ascending, as CSR consumers expect) after `size` entries, and zero `acc` for the next
    row. Returns the new size, or -1 when out_indices is too small."""
    cap = out_indices.shape[0]
    kept_start = size
    # A query none of whose words reaches the threshold keeps its closest one, so that it
    # still gets candidates (most likely NIL, but scored).
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
    order = numpy.argsort(out_indices[kept_start:size])
    out_indices[kept_start:size] = out_indices[kept_start:size][order]
    out_data[kept_start:size] = out_data[kept_start:size][order]
    return size


@_jit("int64(int64, int64[::1], int32[::1], float32[::1], int64[::1], int32[::1], float32[::1], "
      "float32, float32[::1], int32[::1], int64[::1], int32[::1], float32[::1])")
def _word_cosines(first_row, q_indptr, q_indices, q_data, g_indptr, g_indices, g_data,
                  threshold, acc, touched, out_indptr, out_indices, out_data):
    """Fill out_* with each query's words (ascending) of cosine >= threshold; returns the
    number written, or -(row + 1) when out_indices is too small for `row` (_fill_growing
    resumes there; acc must be all zero
    on entry and is left so)."""
    size = out_indptr[first_row]
    for row in range(first_row, q_indptr.shape[0] - 1):
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
        size = _emit_row(acc, touched, n_touched, threshold, out_indices, out_data, size)
        if size < 0:
            return -(row + 1)
        out_indptr[row + 1] = size
    return size


def word_cosines(q_indptr, q_indices, q_data, g_indptr, g_indices, g_data, n_words, threshold):
    """CSR arrays (indptr, indices, data) of the words of cosine >= threshold with each
    query row (non-negative unit rows; g: n-grams x words, unit word rows)."""
    acc = numpy.zeros(n_words, dtype=numpy.float32)
    touched = numpy.empty(n_words, dtype=numpy.int32)
    g_indices = numpy.ascontiguousarray(g_indices, dtype=numpy.int32)
    g_data = numpy.ascontiguousarray(g_data, dtype=numpy.float32)
    return _fill_growing(len(q_indptr) - 1, lambda first_row, out_indptr, out_indices, out_data:
                         _word_cosines(first_row, q_indptr, q_indices, q_data, g_indptr,
                                       g_indices, g_data, numpy.float32(threshold), acc,
                                       touched, out_indptr, out_indices, out_data))


@_jit("int64(int64, int64[::1], int32[::1], float32[::1], int64[::1], int32[::1], float32[::1], "
      "float32, float32, float32[::1], int32[::1], int64[::1], int32[::1], float32[::1], "
      "int64[::1], uint8[::1])")
def _word_cosines_pruned(first_row, q_indptr, q_indices, q_data, g_indptr, g_indices,
                         g_data, coverage, threshold, acc, touched, out_indptr, out_indices,
                         out_data, order, chosen):
    """_word_cosines over each query's rarest n-grams only: those (fewest words first)
    that first reach `coverage` of its squared weight, at least one. The common n-grams
    hold most postings and little of a query's weight, so the partial cosines find the
    close words from a fraction of the postings; the values are lower bounds of the
    cosines, and the names they lead to are rescored exactly. Returns the number
    written, or -(row + 1) when out_indices is too small for `row`."""
    size = out_indptr[first_row]
    for row in range(first_row, q_indptr.shape[0] - 1):
        start = q_indptr[row]
        stop = q_indptr[row + 1]
        n_q = stop - start
        total = 0.0
        # The query's n-grams, fewest words first (insertion sort: a query has few).
        for i in range(n_q):
            p = start + i
            total += q_data[p] * q_data[p]
            df = g_indptr[q_indices[p] + 1] - g_indptr[q_indices[p]]
            j = i - 1
            while j >= 0 and (g_indptr[q_indices[order[j]] + 1]
                              - g_indptr[q_indices[order[j]]]) > df:
                order[j + 1] = order[j]
                j -= 1
            order[j + 1] = p
        read = 0.0
        for i in range(n_q):
            chosen[order[i] - start] = 0
        for i in range(n_q):
            if i > 0 and read >= coverage * total:
                break
            read += q_data[order[i]] * q_data[order[i]]
            chosen[order[i] - start] = 1
        # The chosen n-grams in the query's (ascending) order, as the full kernel adds
        # them: with every n-gram chosen, its values bit for bit.
        n_touched = 0
        for p in range(start, stop):
            if chosen[p - start] == 0:
                continue
            feature = q_indices[p]
            weight = q_data[p]
            for w in range(g_indptr[feature], g_indptr[feature + 1]):
                word = g_indices[w]
                if acc[word] == 0:
                    touched[n_touched] = word
                    n_touched += 1
                acc[word] += weight * g_data[w]
        size = _emit_row(acc, touched, n_touched, threshold, out_indices, out_data, size)
        if size < 0:
            return -(row + 1)
        out_indptr[row + 1] = size
    return size


def word_cosines_pruned(q_indptr, q_indices, q_data, g_indptr, g_indices, g_data, n_words,
                        threshold, coverage, *, n_threads=1):
    """word_cosines' arrays from each query's rarest n-grams holding `coverage` of its
    squared weight (see _word_cosines_pruned): partial cosines >= threshold (or the
    closest word). coverage 1 reads every n-gram: word_cosines' output. Rows split over
    n_threads threads."""
    n_rows = len(q_indptr) - 1
    g_indptr = numpy.ascontiguousarray(g_indptr, dtype=numpy.int64)
    g_indices = numpy.ascontiguousarray(g_indices, dtype=numpy.int32)
    g_data = numpy.ascontiguousarray(g_data, dtype=numpy.float32)

    def run(lo, hi):
        acc = numpy.zeros(n_words, dtype=numpy.float32)
        touched = numpy.empty(n_words, dtype=numpy.int32)
        indptr = numpy.ascontiguousarray(q_indptr[lo:hi + 1] - q_indptr[lo], dtype=numpy.int64)
        first, last = int(q_indptr[lo]), int(q_indptr[hi])
        indices = numpy.ascontiguousarray(q_indices[first:last], dtype=numpy.int32)
        data = numpy.ascontiguousarray(q_data[first:last], dtype=numpy.float32)
        order = numpy.empty(max(1, int(numpy.diff(indptr).max(initial=0))), dtype=numpy.int64)
        return _fill_growing(hi - lo, lambda first_row, out_indptr, out_indices, out_data:
                             _word_cosines_pruned(first_row, indptr, indices, data, g_indptr,
                                                  g_indices, g_data, numpy.float32(coverage),
                                                  numpy.float32(threshold), acc, touched,
                                                  out_indptr, out_indices, out_data, order,
                                                  numpy.zeros(len(order), dtype=numpy.uint8)))

    return _join_rows(map_row_ranges(run, n_rows, n_threads))


@_jit("int64(int64[::1], int32[::1], int64[::1], int64, int32[::1], int32[::1])")
def _rarest_grams(w_indptr, w_indices, df, k, out_grams, out_words):
    """Each word's (row of w) `k` n-grams held by the fewest words (ties: lower n-gram
    id), as (n-gram, word) pairs; returns how many were written."""
    size = 0
    for word in range(w_indptr.shape[0] - 1):
        start = w_indptr[word]
        stop = w_indptr[word + 1]
        taken = 0
        last_df = -1
        last_gram = -1
        while taken < k:
            best = -1
            for p in range(start, stop):
                gram = w_indices[p]
                d = df[gram]
                if d < last_df or (d == last_df and gram <= last_gram):
                    continue
                if best < 0 or d < df[best] or (d == df[best] and gram < best):
                    best = gram
            if best < 0:
                break
            out_grams[size] = best
            out_words[size] = word
            size += 1
            taken += 1
            last_df = df[best]
            last_gram = best
    return size


@_jit("void(int32[::1], int32[::1], int64[::1], int32[::1])")
def _scatter_by_gram(grams, words, r_indptr, r_indices):
    """The (n-gram, word) pairs (words ascending) into n-gram rows: a counting sort that
    keeps each row's words ascending."""
    fill = r_indptr[:-1].copy()
    for i in range(grams.shape[0]):
        r_indices[fill[grams[i]]] = words[i]
        fill[grams[i]] += 1


def rare_gram_index(g_indptr, g_indices, g_data, n_features, n_words, k):
    """From the n-grams x words unit word rows (g): the n-grams x words postings of each
    word under its `k` rarest n-grams only, and the words x n-grams rows (the word's exact
    cosine with a query is read from its row), and each word's number of rare n-grams
    (min(k, its n-grams)): (r_indptr, r_indices, w_indptr, w_indices, w_data, rare_len)."""
    from scipy import sparse

    grams = sparse.csr_matrix((g_data, g_indices, g_indptr), shape=(n_features, n_words))
    rows = grams.T.tocsr()
    rows.sort_indices()
    df = numpy.diff(numpy.asarray(g_indptr, dtype=numpy.int64))
    w_indptr = numpy.ascontiguousarray(rows.indptr, dtype=numpy.int64)
    w_indices = numpy.ascontiguousarray(rows.indices, dtype=numpy.int32)
    out_grams = numpy.empty(k * n_words, dtype=numpy.int32)
    out_words = numpy.empty(k * n_words, dtype=numpy.int32)
    size = _rarest_grams(w_indptr, w_indices, df, int(k), out_grams, out_words)
    r_indptr = numpy.zeros(n_features + 1, dtype=numpy.int64)
    numpy.cumsum(numpy.bincount(out_grams[:size], minlength=n_features), out=r_indptr[1:])
    r_indices = numpy.empty(size, dtype=numpy.int32)
    _scatter_by_gram(out_grams[:size], out_words[:size], r_indptr, r_indices)
    rare_len = numpy.minimum(numpy.diff(w_indptr), k).astype(numpy.uint8)
    return (r_indptr, r_indices, w_indptr, w_indices,
            numpy.ascontiguousarray(rows.data, dtype=numpy.float32), rare_len)


@_jit("int64(int64, int64[::1], int32[::1], float32[::1], int64[::1], int32[::1], int64[::1], "
      "int32[::1], float32[::1], uint8[::1], int64, float32, float32[::1], uint8[::1], "
      "float32[::1], int32[::1], int32[::1], int64[::1], float32[::1], int64[::1], "
      "int32[::1], float32[::1])")
def _word_cosines_rare(first_row, q_indptr, q_indices, q_data, r_indptr, r_indices,
                       w_indptr, w_indices, w_data, rare_len, min_hits, threshold, weights,
                       hits, acc, seen, touched, starts, partial, out_indptr, out_indices,
                       out_data):
    """Each query's words of cosine >= threshold (where none reaches it, its closest)
    among those posted under at least min(min_hits, its rare n-grams) of the query's
    n-grams in the rare-gram postings (r), with their exact cosines read from their rows
    (w). `weights` (one per n-gram), `hits` and `acc` must be all zero on entry and are
    left so; `starts` and `partial` are scratch, one per word. Returns the number
    written, or -(row + 1) when out_indices is too small for `row`. Rows go from first_row
    on, after the out_indptr[first_row] entries written."""
    size = out_indptr[first_row]
    for row in range(first_row, q_indptr.shape[0] - 1):
        start = q_indptr[row]
        stop = q_indptr[row + 1]
        for p in range(start, stop):
            weights[q_indices[p]] = q_data[p]
        n_seen = 0
        for p in range(start, stop):
            feature = q_indices[p]
            for r in range(r_indptr[feature], r_indptr[feature + 1]):
                word = r_indices[r]
                if hits[word] == 0:
                    seen[n_seen] = word
                    n_seen += 1
                hits[word] += 1
        # Reading a word's row is a few cache misses where a posting is one: only the
        # words sharing enough of their rarest n-grams with the query are scored.
        n_touched = 0
        for s in range(n_seen):
            word = seen[s]
            if hits[word] >= min_hits or hits[word] >= rare_len[word]:
                touched[n_touched] = word
                n_touched += 1
            hits[word] = 0
        # The rows are scored in three passes over the words, each of independent reads
        # (the rows' offsets, their first entries, the rest), so that the cache misses of
        # many words overlap instead of one word's waiting on the last's. A row holds at
        # least the n-gram the word was posted under; 0 + its first product is that
        # product, so each sum is the one-pass sum bit for bit.
        for t in range(n_touched):
            starts[t] = w_indptr[touched[t]]
        for t in range(n_touched):
            partial[t] = weights[w_indices[starts[t]]] * w_data[starts[t]]
        for t in range(n_touched):
            word = touched[t]
            cosine = partial[t]
            for w in range(starts[t] + 1, w_indptr[word + 1]):
                cosine += weights[w_indices[w]] * w_data[w]
            # A word posted under a query n-gram shares it: its cosine is positive
            # (weights and rows are non-negative), so acc marks it as scored.
            acc[word] = max(cosine, numpy.float32(1e-30))
        for p in range(start, stop):
            weights[q_indices[p]] = 0
        size = _emit_row(acc, touched, n_touched, threshold, out_indices, out_data, size)
        if size < 0:
            return -(row + 1)
        out_indptr[row + 1] = size
    return size


def word_cosines_rare(q_indptr, q_indices, q_data, rare, n_features, n_words, threshold, *,
                      min_hits=1, n_threads=1):
    """word_cosines' arrays (exact cosines >= threshold, or the closest word) over the
    words posted under `min_hits` of each query's n-grams (or all their rare n-grams, if
    fewer) in `rare` (rare_gram_index's arrays):
    a word close to the query shares its rarest n-grams with it, and those postings hold
    few words each, where a common n-gram's full postings hold a large share of a
    vocabulary. Rows split over n_threads threads."""
    n_rows = len(q_indptr) - 1
    r_indptr, r_indices, w_indptr, w_indices, w_data, rare_len = rare

    def run(lo, hi):
        weights = numpy.zeros(n_features, dtype=numpy.float32)
        hits = numpy.zeros(n_words, dtype=numpy.uint8)
        acc = numpy.zeros(n_words, dtype=numpy.float32)
        seen = numpy.empty(n_words, dtype=numpy.int32)
        touched = numpy.empty(n_words, dtype=numpy.int32)
        starts = numpy.empty(n_words, dtype=numpy.int64)
        partial = numpy.empty(n_words, dtype=numpy.float32)
        indptr = numpy.ascontiguousarray(q_indptr[lo:hi + 1] - q_indptr[lo], dtype=numpy.int64)
        first, last = int(q_indptr[lo]), int(q_indptr[hi])
        indices = numpy.ascontiguousarray(q_indices[first:last], dtype=numpy.int32)
        data = numpy.ascontiguousarray(q_data[first:last], dtype=numpy.float32)
        return _fill_growing(hi - lo, lambda first_row, out_indptr, out_indices, out_data:
                             _word_cosines_rare(first_row, indptr, indices, data, r_indptr,
                                                r_indices, w_indptr, w_indices, w_data, rare_len,
                                                int(min_hits), numpy.float32(threshold),
                                                weights, hits, acc, seen, touched,
                                                starts, partial, out_indptr, out_indices,
                                                out_data))

    return _join_rows(map_row_ranges(run, n_rows, n_threads))
