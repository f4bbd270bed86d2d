"""Sparse search whose candidates come from word postings (word_postings.py):
`spacy-biolink.WordSparseIndex.v1`, and `spacy-biolink.AutoSparseIndex.v3` (exact below
`min_names` names, word candidates above), bio_linker's default.

PrunedSparseIndex.v2 reads each query's rarest char 3-grams, but with ~10,000 3-grams
over all of a vocabulary's words even those are in 1-3% of the names: ~1.9M postings per
query at 8M names. A name's char_wb TF-IDF score splits exactly over its words, so here a
query reads the postings of the words whose cosine with it reaches `word_threshold`
(0.3: ~220k postings per query at 8M names), keeps the best `candidates` names by that
partial score and rescores them exactly, as the pruned search does. Word postings exist
only for a plain char_wb TF-IDF encoder (the default) at the name level; for any other
rows the search is PrunedSparseIndex.v2's. BENCHMARKS.md has the measured recall against
the exact search and the speed. Batches of queries are split over `n_threads` threads
(0, the default: one per core, or one in a child process such as
nlp.pipe(n_process=N)'s workers; the kernels release the GIL).
"""
import logging
import multiprocessing
import os
from typing import Iterable, Optional, Tuple

import numpy
from scipy import sparse

from ..errors import BioLinkError, Errors
from .blocked import V2_COVERAGE, BlockedAutoSparseIndex, BlockedPrunedSparseIndex
from .pruned import AUTO_MIN_NAMES
from .word_postings import WordPostings

logger = logging.getLogger(__name__)

WORD_THRESHOLD = 0.3
WORD_CANDIDATES = 256


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity where the OS tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


def search_threads(n_threads: int) -> int:
    """The threads a search splits its queries over for the config value `n_threads`:
    itself where > 0; for 0, one per core in a main process and 1 in a child process
    (`nlp.pipe(n_process=N)`, a multiprocessing pool), whose siblings already take the
    cores. Resolved at each search, so a pipeline forked into workers follows the rule."""
    if n_threads:
        return n_threads
    return 1 if multiprocessing.parent_process() is not None else usable_cores()


class _WordCandidates:
    """Finds the pruned search's candidates from word postings once `add_words` has built
    them; until then (or for rows that are not sums over words) as PrunedSparseIndex.v2."""

    _n_threads: int = 0
    chunk_size: int
    n_vectors: int
    rows: Optional[sparse.csr_matrix]
    prunes: bool
    words: Optional[WordPostings] = None
    _word_postings_cache: Optional[tuple] = None

    @property
    def n_threads(self) -> int:
        """Threads a batch of queries is split over now (see search_threads)."""
        return search_threads(self._n_threads)

    @n_threads.setter
    def n_threads(self, value) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise BioLinkError(Errors.E223.format(index=self._registered_name(), value=value))
        self._n_threads = value

    def _check_word_threshold(self, value) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                not 0 < value <= 1:
            raise BioLinkError(Errors.E222.format(index=self._registered_name(), value=value))
        return float(value)

    def add_words(self, texts: Iterable[str], vectorizer) -> bool:
        """Build the word postings from the indexed names' texts (as encoded, one per row,
        in order) and the encoder's char_wb vectorizer. Only when the search prunes; a
        no-op otherwise. Returns whether word candidates are now used."""
        self.words = None
        if self.prunes and self.rows is not None:
            self.words = WordPostings.from_names(texts, vectorizer, self.rows)
            if self.words is not None:
                logger.info("%s: word postings over %d words", self._registered_name(),
                            self.words.n_words)
        return self.words is not None

    def add(self, vectors: sparse.csr_matrix) -> None:
        """As the pruned index's add; the word postings no longer cover every name, so they
        are dropped (n-gram candidates) until add_words builds them again."""
        self.words = None
        super().add(vectors)

    def _find_candidates(self, queries: sparse.csr_matrix, depth: int) -> numpy.ndarray:
        if self.words is None:
            return super()._find_candidates(queries, depth)
        from . import block_kernels

        word_queries = self.words.word_queries(queries, self.word_threshold)
        return block_kernels.blocked_candidates(
            word_queries.indptr, word_queries.indices, word_queries.data,
            self._word_postings(), self.n_vectors, depth,
            n_threads=self.n_threads, chunk_size=max(1, int(self.chunk_size)))

    def _word_postings(self):
        postings = self.words.postings
        cached = self._word_postings_cache
        if cached is None or cached[0] is not postings:
            from . import block_kernels
            from .kernels import prepare_postings

            prepared = prepare_postings(postings.indptr, postings.indices, postings.data,
                                        postings.shape[1])
            if not block_kernels.postings_sorted(prepared[0], prepared[1]):
                raise ValueError("word postings: names not ascending per word")
            cached = self._word_postings_cache = (postings, prepared)
        return cached[1]

    def __getstate__(self) -> dict:
        return {**super().__getstate__(), "_word_postings_cache": None}

    def to_state(self) -> Tuple[dict, dict]:
        """The pruned index's state plus the word postings (numeric arrays only)."""
        meta, arrays = super().to_state()
        meta = dict(meta, word_threshold=self.word_threshold, words=self.words is not None)
        if self.words is not None:
            arrays = dict(arrays, **self.words.to_arrays())
        return meta, arrays

    def from_state(self, meta: dict, arrays: dict):
        """Restore from to_state's output (word_threshold from the config, as coverage)."""
        super().from_state(meta, arrays)
        self.words = None
        if self.names_t is not None:
            self.words = WordPostings.from_arrays(arrays, self.names_t.shape[1],
                                                  self.names_t.shape[0])
        return self


class WordSparseIndex(_WordCandidates, BlockedPrunedSparseIndex):
    """`spacy-biolink.WordSparseIndex.v1`: candidates from the words within
    `word_threshold` cosine of the query, `candidates` of them rescored exactly (see the
    module docstring). Without word postings, PrunedSparseIndex.v2's search."""

    registered_name = "WordSparseIndex.v1"
    state_type = "word_sparse"

    def __init__(self, word_threshold: float = WORD_THRESHOLD,
                 candidates: int = WORD_CANDIDATES, coverage: float = V2_COVERAGE,
                 chunk_size: int = 256, n_threads: int = 0):
        super().__init__(coverage=coverage, candidates=candidates, chunk_size=chunk_size)
        self.word_threshold = self._check_word_threshold(word_threshold)
        self.n_threads = n_threads


class WordAutoSparseIndex(_WordCandidates, BlockedAutoSparseIndex):
    """`spacy-biolink.AutoSparseIndex.v3`: exact search below `min_names` names (the
    SparseIndex.v1 kernel), WordSparseIndex.v1's search from there on."""

    registered_name = "AutoSparseIndex.v3"
    state_type = "auto_sparse"

    def __init__(self, min_names: int = AUTO_MIN_NAMES, word_threshold: float = WORD_THRESHOLD,
                 candidates: int = WORD_CANDIDATES, coverage: float = V2_COVERAGE,
                 chunk_size: int = 256, n_threads: int = 0):
        super().__init__(min_names=min_names, coverage=coverage, candidates=candidates,
                         chunk_size=chunk_size)
        self.word_threshold = self._check_word_threshold(word_threshold)
        self.n_threads = n_threads
