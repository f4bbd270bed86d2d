"""Compiled (numba) kernel of the learned reranker's lexical features.

Imported lazily by the learned reranker, so `import spacy_biolink` never pays for numba.
Each (query key, concept) pair is compared with every name of the concept: exact folded
match, then the name of highest character-trigram Jaccard (the first of equal ones) gives
the token Jaccard, the trigram Jaccard and the length ratio. Sets are unique int64 ids
(trigrams and tokens of a vocabulary); a ratio is the
same float64 division of the same two integers as Python's `len(a & b) / (len(a | b) or 1)`,
so the features are bit-identical to the set arithmetic they replace.
"""
import numpy

from ...index.kernels import _jit
from ...index.threads import search_threads

# Fewer rows than this per thread are not worth a thread.
MIN_ROWS_PER_THREAD = 2048


def in_threads(n_rows: int, run) -> None:
    """run(start, end) over [0, n_rows) split over one thread per core (one in a child
    process: threads.search_threads), each part at least MIN_ROWS_PER_THREAD rows; the
    kernels release the GIL, and a row's result does not depend on the split."""
    n_threads = max(1, min(search_threads(0), n_rows // MIN_ROWS_PER_THREAD))
    if n_threads == 1:
        run(0, n_rows)
        return
    from concurrent.futures import ThreadPoolExecutor

    bounds = numpy.linspace(0, n_rows, n_threads + 1).astype(int).tolist()
    with ThreadPoolExecutor(n_threads) as pool:
        for done in [pool.submit(run, a, b) for a, b in zip(bounds[:-1], bounds[1:])]:
            done.result()


@_jit("int64(int64[::1], int64, int64, int64[::1], int64, int64)")
def _common(a, a0, a1, b, b0, b1):
    """How many values two sorted unique slices share."""
    i, j, n = a0, b0, 0
    while i < a1 and j < b1:
        x, y = a[i], b[j]
        if x == y:
            n += 1
            i += 1
            j += 1
        elif x < y:
            i += 1
        else:
            j += 1
    return n


@_jit("void(int64[::1], int64[::1], int64[::1], int64[::1], int64[::1], int64[::1], int64[::1], "
      "int64[::1], int64[::1], int64[::1], int64[::1], int64[::1], int64[::1], int64[::1], "
      "int64[::1], int64[::1], boolean[::1], float64[:, ::1])")
def lexical_features(pair_key, pair_concept, key_gram_ptr, key_grams, key_token_ptr, key_tokens,
                     key_fold, key_length, concept_start, concept_count, name_gram_ptr, name_grams,
                     name_token_ptr, name_tokens, name_fold, name_length, mark, out):
    """out[p] = exact_name, token_jaccard, trigram_jaccard, length_ratio of query key
    pair_key[p] against the names of concept pair_concept[p] (a concept without names:
    0, 0, 0, 0). Grams are ids into `mark` (all False, and left so), a key's unknown
    grams -1; pairs come grouped by key."""
    current = -1
    for p in range(pair_key.shape[0]):
        g = pair_key[p]
        c = pair_concept[p]
        g0, g1 = key_gram_ptr[g], key_gram_ptr[g + 1]
        if g != current:
            if current >= 0:
                for i in range(key_gram_ptr[current], key_gram_ptr[current + 1]):
                    if key_grams[i] >= 0:
                        mark[key_grams[i]] = False
            for i in range(g0, g1):
                if key_grams[i] >= 0:
                    mark[key_grams[i]] = True
            current = g
        la = g1 - g0
        exact = 0.0
        best = -1.0
        best_name = -1
        first = concept_start[c]
        for n in range(first, first + concept_count[c]):
            if name_fold[n] == key_fold[g]:
                exact = 1.0
            n0, n1 = name_gram_ptr[n], name_gram_ptr[n + 1]
            # |a & b| / |a | b| <= min(|a|, |b|) / max(|a|, |b|), and division rounds
            # monotonically: a name whose bound is not above the best cannot replace it.
            lb = n1 - n0
            if best >= (la if la < lb else lb) / (la if la > lb else lb):
                continue
            shared = 0
            for i in range(n0, n1):
                if mark[name_grams[i]]:
                    shared += 1
            union = la + lb - shared
            jaccard = shared / (union if union > 0 else 1)
            if jaccard > best:
                best = jaccard
                best_name = n
        out[p, 0] = exact
        if best_name < 0:
            out[p, 1] = 0.0
            out[p, 2] = 0.0
            out[p, 3] = 0.0
            continue
        t0, t1 = key_token_ptr[g], key_token_ptr[g + 1]
        u0, u1 = name_token_ptr[best_name], name_token_ptr[best_name + 1]
        shared = _common(key_tokens, t0, t1, name_tokens, u0, u1)
        union = (t1 - t0) + (u1 - u0) - shared
        out[p, 1] = shared / (union if union > 0 else 1)
        out[p, 2] = best
        a, b = key_length[g], name_length[best_name]
        longest = a if a > b else b
        out[p, 3] = (a if a < b else b) / (longest if longest > 0 else 1)
    if current >= 0:
        for i in range(key_gram_ptr[current], key_gram_ptr[current + 1]):
            if key_grams[i] >= 0:
                mark[key_grams[i]] = False


def warm_up() -> None:
    """Compile (or load from numba's cache) the kernel on a one-pair input."""
    one = numpy.zeros(1, numpy.int64)
    ptr = numpy.array([0, 1], numpy.int64)
    lexical_features(one, one, ptr, one, ptr, one, one, one, one, numpy.ones(1, numpy.int64),
                     ptr, one, ptr, one, one, one, numpy.zeros(1, bool), numpy.zeros((1, 4)))


# LightGBM's kZeroThreshold (a float32 1e-35): "zero" for missing_type Zero.
_ZERO = numpy.float64(numpy.float32(1e-35))


@_jit("void(float64[:, ::1], int64[::1], int64[::1], float64[::1], int64[::1], int64[::1], "
      "int64[::1], int64[::1], float64[::1], float64[::1])")
def tree_scores(rows, roots, feature, threshold, missing, default_left, left, right, leaf_value,
                out):
    """out[r] = the sum over the trees (in order) of the leaf row r reaches: LightGBM's
    raw prediction for numerical splits (its NumericalDecision: NaN is 0 unless the
    split's missing type is NaN; a missing value, NaN or zero as that type says, goes
    the default way; else left where value <= threshold). A child < 0 is leaf ~child."""
    for r in range(rows.shape[0]):
        total = 0.0
        for t in range(roots.shape[0]):
            node = roots[t]
            while node >= 0:
                value = rows[r, feature[node]]
                kind = missing[node]
                if numpy.isnan(value) and kind != 2:
                    value = 0.0
                if (kind == 1 and -_ZERO <= value <= _ZERO) or (kind == 2 and numpy.isnan(value)):
                    node = left[node] if default_left[node] else right[node]
                elif value <= threshold[node]:
                    node = left[node]
                else:
                    node = right[node]
            total += leaf_value[~node]
        out[r] = total
