"""Word postings: a char_wb TF-IDF score split over the words of each name, so that a
search can find its candidates among the names holding words like the query's.

Why this is exact: char_wb n-grams never cross words, so (without sublinear tf) a name's
unnormalised TF-IDF vector is the sum of its words' vectors w_u (n-gram counts x idf).
For a unit query q and a name n with words u (each counted cnt_u times),

    q . n / |n| = sum_u cos(q, w_u) * c(u, n),   c(u, n) = cnt_u |w_u| / |n|.

So the names x n-grams postings can be replaced by words x names postings holding c(u, n),
and a query by the cosines of the words it shares n-grams with: the same scores, from
about 3 postings per name instead of about 25 (fewer still: a word that is a small share
of a long name is not posted for it, MIN_SHARE). A name scoring well holds at least one
word close to the query (c(u, n) <= 1, and a name has few words), so reading only the
words whose cosine reaches a threshold finds the candidates from a few thousand postings
where the n-gram postings hold millions; the candidates are then rescored exactly.

Nothing here keeps a string: the word vocabulary is needed only while building.
"""
import logging
from array import array
from typing import Dict, Iterable, Optional

import numpy
from scipy import sparse

from ..io.util import release_memory

logger = logging.getLogger(__name__)

# Names whose rows are re-derived from their words when building, to check that the
# vectorizer really is additive over words for these vectors (else the structures are
# dropped and the search falls back on n-gram candidates).
CHECK_SAMPLE = 2_000
# A word carrying less than this share c(u, n) of a name's norm is not posted for it: such
# a name (a long one) is found through its other words. On NCBI-disease dev this kept
# recall@10 (0.9972 at 8M names, 0.9975 -> 0.9972 at 0.9M) and read 18% fewer postings
# (1.15x the search at 8M names); 0.35 and 0.4 lost recall (BENCHMARKS.md).
MIN_SHARE = 0.3
CHECK_TOLERANCE = 1e-4
# The saved arrays of rare_gram_postings (word_kernels.rare_gram_index's, in its order).
_RARE_KEYS = ("word_rare_indptr", "word_rare_indices", "word_rows_indptr",
              "word_rows_indices", "word_rows_data", "word_rare_len")
# Names (or words) per block of from_names' row-by-row steps: a block's temporaries are
# tens of MB, and the per-block overhead is small next to its work.
_BLOCK = 100_000


class WordPostings:
    """Words x names postings of c(u, n) and the unit TF-IDF rows of the words (stored
    n-grams x words, to score a query's words by walking its n-grams)."""

    def __init__(self, postings: sparse.csr_matrix, grams: sparse.csr_matrix):
        self.postings = postings  # words x names, c(u, n), names ascending per word
        self.grams = grams  # n-grams x words, unit word rows
        # rare_gram_postings' arrays: derived at build, saved and pickled with the rest.
        self._rare_cache: Optional[tuple] = None

    @property
    def n_words(self) -> int:
        """How many distinct words the names hold."""
        return self.postings.shape[0]

    @classmethod
    def from_names(cls, texts: Iterable[str], vectorizer, rows: sparse.csr_matrix, *,
                   min_share: float = MIN_SHARE, block: int = _BLOCK
                   ) -> Optional["WordPostings"]:
        """Build from the names' texts as the encoder saw them (one per row of `rows`, in
        order) and its fitted char_wb vectorizer. A word's posting in a name is kept where
        c(u, n) >= min_share, and each name keeps its largest one (see MIN_SHARE). Returns
        None, with a log line, when the rows are not what the words add up to (another
        encoder, other texts). `block` names (or words) are worked on at a time; the
        result does not depend on it."""
        word_ids: Dict[str, int] = {}
        # An array grows by an eighth, where a doubled numpy buffer would stay behind
        # the name x word matrix at up to twice its size.
        ids = array("i")
        indptr = numpy.empty(rows.shape[0] + 1, dtype=numpy.int64)
        indptr[0] = 0
        lowercase = vectorizer.lowercase
        n_texts = 0
        for n_texts, text in enumerate(texts, 1):
            if n_texts > rows.shape[0]:
                break
            for word in (text.lower() if lowercase else text).split():
                word_id = word_ids.get(word)
                if word_id is None:
                    word_id = word_ids[word] = len(word_ids)
                ids.append(word_id)
            indptr[n_texts] = len(ids)
        if n_texts != rows.shape[0]:
            logger.warning("word postings: %d texts for %d rows; not built", n_texts,
                           rows.shape[0])
            return None
        name_words = sparse.csr_matrix((numpy.ones(len(ids), dtype=numpy.float32),
                                        numpy.frombuffer(ids, dtype=numpy.int32), indptr),
                                       shape=(rows.shape[0], len(word_ids)))
        del ids, indptr
        name_words.sum_duplicates()
        # The words' strings (millions at 10M names) go before their matrix is built.
        features, ends = _word_features(word_ids, vectorizer)
        del word_ids
        release_memory(rows.shape[0])
        words = _word_rows(features, ends, vectorizer)
        del features, ends
        # Each step below is row by row, so it runs over blocks of names (or words): the
        # same values, bit for bit, without a vocabulary- or dictionary-sized temporary
        # (release_memory gives the blocks' heap back between the steps).
        release_memory(rows.shape[0])
        word_norms = _row_norms(words, block)
        name_norms = _row_norms(name_words, block, times=words)
        unit_words = _scale_rows(words, 1.0 / numpy.maximum(word_norms, 1e-30), block)
        del words
        if not _reproduces(rows, name_words, unit_words, word_norms, name_norms):
            logger.warning("word postings: the rows are not sums over words of this "
                           "vectorizer; searching by n-gram candidates instead")
            return None
        coefficient = _coefficients(name_words, word_norms, name_norms, min_share, block)
        del name_words
        release_memory(rows.shape[0])
        postings = coefficient.T.tocsr()
        del coefficient
        postings.sort_indices()
        # float32 before the transpose, which is then the only copy made.
        grams = unit_words.astype(numpy.float32)
        del unit_words
        grams = grams.T.tocsr()
        grams.sort_indices()
        release_memory(rows.shape[0])
        return cls(postings, grams)

    def word_queries(self, queries: sparse.csr_matrix, threshold: float, *,
                     coverage: Optional[float] = None, n_threads: int = 1,
                     rare_grams: Optional[int] = None, rare_hits: int = 1
                     ) -> sparse.csr_matrix:
        """Each query row's words with cosine >= threshold (where none reaches it, its
        closest), as rows over the words. With `coverage`, the cosines are read from
        each query's rarest n-grams holding that share of its squared weight
        (word_kernels.word_cosines_pruned, split over n_threads): partial cosines, from
        a fraction of the postings. With `rare_grams` instead, the exact cosines of the
        words posted under `rare_hits` of the query's n-grams among their own `rare_grams`
        rarest (word_kernels.word_cosines_rare; the postings are derived once and kept)."""
        from .word_kernels import word_cosines, word_cosines_pruned, word_cosines_rare

        g = self.grams
        if rare_grams is not None:
            indptr, indices, data = word_cosines_rare(
                queries.indptr.astype(numpy.int64), queries.indices.astype(numpy.int32),
                queries.data.astype(numpy.float32), self.rare_gram_postings(rare_grams),
                g.shape[0], self.n_words, numpy.float32(threshold), min_hits=rare_hits,
                n_threads=n_threads)
            return sparse.csr_matrix((data, indices, indptr),
                                     shape=(queries.shape[0], self.n_words))
        args = (queries.indptr.astype(numpy.int64), queries.indices.astype(numpy.int32),
                queries.data.astype(numpy.float32), g.indptr.astype(numpy.int64, copy=False),
                g.indices, g.data, self.n_words, numpy.float32(threshold))
        if coverage is None:
            indptr, indices, data = word_cosines(*args)
        else:
            indptr, indices, data = word_cosines_pruned(*args, coverage, n_threads=n_threads)
        return sparse.csr_matrix((data, indices, indptr), shape=(queries.shape[0], self.n_words))

    def rare_gram_postings(self, k: int) -> tuple:
        """word_kernels.rare_gram_index's arrays for each word's `k` rarest n-grams:
        derived at build (WordCandidates.word_postings) and saved, or here from the
        n-grams x words rows on first use for an index saved without them, then kept."""
        cached = self._rare_cache
        if cached is None or cached[0] != k:
            from .word_kernels import rare_gram_index

            g = self.grams
            cached = self._rare_cache = (k, rare_gram_index(
                g.indptr, g.indices, g.data, g.shape[0], self.n_words, k))
        return cached[1]

    def to_arrays(self) -> Dict[str, numpy.ndarray]:
        """The arrays to save (all numeric), keyed as from_arrays reads them; with the
        rare-gram postings once derived (so that a loaded index need not derive them)."""
        p, g = self.postings, self.grams
        arrays = {"words_data": p.data, "words_indices": p.indices, "words_indptr": p.indptr,
                  "word_grams_data": g.data, "word_grams_indices": g.indices,
                  "word_grams_indptr": g.indptr}
        if self._rare_cache is not None:
            k, rare = self._rare_cache
            arrays["word_rare_grams"] = numpy.array([k], dtype=numpy.int64)
            arrays.update(zip(_RARE_KEYS, rare))
        return arrays

    @classmethod
    def from_arrays(cls, arrays: Dict[str, numpy.ndarray], n_names: int, n_features: int
                    ) -> Optional["WordPostings"]:
        """Inverse of to_arrays (the arrays may be memory-mapped); None when absent."""
        if "words_data" not in arrays:
            return None
        n_words = len(arrays["words_indptr"]) - 1
        postings = sparse.csr_matrix((arrays["words_data"], arrays["words_indices"],
                                      arrays["words_indptr"]), shape=(n_words, n_names))
        # The word kernel writes nothing but takes writable arrays only, and from_bytes
        # gives read-only ones: copied (n-grams x words, small; not memory-mapped anyway).
        grams = sparse.csr_matrix((numpy.array(arrays["word_grams_data"]),
                                   numpy.array(arrays["word_grams_indices"]),
                                   numpy.array(arrays["word_grams_indptr"])),
                                  shape=(n_features, n_words))
        words = cls(postings, grams)
        if "word_rare_grams" in arrays:
            words._rare_cache = (int(arrays["word_rare_grams"][0]), tuple(
                arrays[key] if arrays[key].flags.writeable else numpy.array(arrays[key])
                for key in _RARE_KEYS))
        return words


def _keep_shares(coefficient: sparse.csr_matrix, min_share: float) -> sparse.csr_matrix:
    """names x words c(u, n) without the entries below min_share, each name's largest kept
    (so that no name loses every posting)."""
    if min_share <= 0 or coefficient.nnz == 0:
        return coefficient
    lengths = numpy.diff(coefficient.indptr)
    largest = numpy.zeros(coefficient.shape[0], dtype=coefficient.dtype)
    filled = lengths > 0
    largest[filled] = numpy.maximum.reduceat(coefficient.data, coefficient.indptr[:-1][filled])
    keep = (coefficient.data >= min_share) | (coefficient.data == numpy.repeat(largest, lengths))
    rows = numpy.repeat(numpy.arange(coefficient.shape[0]), lengths)[keep]
    return sparse.csr_matrix((coefficient.data[keep], (rows, coefficient.indices[keep])),
                             shape=coefficient.shape, dtype=coefficient.dtype)


def _word_features(word_ids: Dict[str, int], vectorizer) -> tuple:
    """Each word's n-gram ids in the vocabulary, in word id order, as compact arrays (not
    lists of Python ints: millions of words hold tens of millions of n-grams): the ids,
    and where each word's end (a 0 first)."""
    vocab = vectorizer.vocab
    ends, features = array("q", [0]), array("i")
    # word_ids lists the words in id order (ids are given as words come).
    for word in word_ids:
        features.extend(feature for feature in map(vocab.get, vectorizer._word_ngrams(word))
                        if feature is not None)
        ends.append(len(features))
    return features, ends


def _word_rows(features: array, ends: array, vectorizer) -> sparse.csr_matrix:
    """words x n-grams: each word's n-gram counts times idf (not normalised), from
    _word_features' arrays."""
    counts = sparse.csr_matrix((numpy.ones(len(features), dtype=numpy.float64),
                                numpy.frombuffer(features, dtype=numpy.int32),
                                numpy.frombuffer(ends, dtype=numpy.int64)),
                               shape=(len(ends) - 1, len(vectorizer.vocab)))
    counts.sum_duplicates()
    return sparse.csr_matrix(counts @ sparse.diags(vectorizer.idf.astype(numpy.float64)))


def _scale_rows(matrix: sparse.csr_matrix, scale: numpy.ndarray, block: int
                ) -> sparse.csr_matrix:
    """diags(scale) @ matrix, in place (`matrix` is returned): each value times its row's
    scale, as the product computes it, `block` rows at a time."""
    indptr, data = matrix.indptr, matrix.data
    for lo in range(0, matrix.shape[0], block):
        hi = min(lo + block, matrix.shape[0])
        data[indptr[lo]:indptr[hi]] *= numpy.repeat(scale[lo:hi], numpy.diff(indptr[lo:hi + 1]))
    return matrix


def _row_norms(matrix: sparse.csr_matrix, block: int,
               times: Optional[sparse.csr_matrix] = None) -> numpy.ndarray:
    """The L2 norm of each row of `matrix` (of `matrix @ times`, with `times`), `block`
    rows at a time."""
    norms = numpy.empty(matrix.shape[0], dtype=numpy.float64)
    for lo in range(0, matrix.shape[0], block):
        part = matrix[lo:lo + block]
        if times is not None:
            part = part @ times
        norms[lo:lo + block] = numpy.sqrt(numpy.asarray(part.multiply(part).sum(axis=1)).ravel())
    return norms


def _coefficients(name_words: sparse.csr_matrix, word_norms: numpy.ndarray,
                  name_norms: numpy.ndarray, min_share: float, block: int) -> sparse.csr_matrix:
    """names x words c(u, n) = cnt_u |w_u| / |n| (float32), kept as _keep_shares says,
    `block` names at a time."""
    scale = word_norms[None, :].astype(numpy.float32)
    inverse = (1.0 / numpy.maximum(name_norms, 1e-30)).astype(numpy.float32)
    parts = []
    for lo in range(0, name_words.shape[0], block):
        part = name_words[lo:lo + block].multiply(scale)
        part = sparse.csr_matrix(sparse.diags(inverse[lo:lo + block]) @ part,
                                 dtype=numpy.float32)
        parts.append(_keep_shares(part, min_share))
    if not parts:
        return sparse.csr_matrix(name_words.shape, dtype=numpy.float32)
    return sparse.vstack(parts, format="csr") if len(parts) > 1 else parts[0]


def _reproduces(rows, name_words, unit_words, word_norms, name_norms) -> bool:
    """Whether a sample of the rows equals sum_u c(u, n) * unit word row u."""
    n = rows.shape[0]
    if n == 0:
        return True
    sample = numpy.random.default_rng(0).choice(n, size=min(n, CHECK_SAMPLE), replace=False)
    sample.sort()
    coefficient = (sparse.diags(1.0 / numpy.maximum(name_norms[sample], 1e-30))
                   @ name_words[sample] @ sparse.diags(word_norms))
    rebuilt = sparse.csr_matrix(coefficient @ unit_words)
    given = sparse.csr_matrix(rows[sample], dtype=numpy.float64)
    if rebuilt.shape != given.shape:
        return False
    difference = abs(rebuilt - given)
    return bool(difference.nnz == 0 or difference.max() <= CHECK_TOLERANCE)


