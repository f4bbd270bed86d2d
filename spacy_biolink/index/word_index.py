"""WordCandidates: a PrunedSparseIndex's candidates from word postings (word_postings.py,
word_kernels.py). The word-candidate searches (WordSparseIndex.v1 to v3) and, past their
min_names, AutoSparseIndex.v3 to v5 and bio_linker's default AutoSparseIndex.v6 are
PrunedSparseIndex with this source (v5 rescores more candidates as the dictionary grows).
v2/v4/v5 (word_coverage) find the query's words from its
rarest n-grams only: in a real vocabulary of a million words the common n-grams ("ine",
"ase") each hold tens of thousands of words, and the query's cosine with every one of them
was most of the search. Past a few million words even the rarest n-grams holding most of a
query's weight are long lists, so WordSparseIndex.v3 and, from rare_from words on,
AutoSparseIndex.v6 look for the query's words only among those sharing some of their own
rarest n-grams with it, and score those exactly (rare_grams, rare_hits).

The block-by-block n-gram candidates (PrunedSparseIndex.v2) read each query's rarest char
3-grams, but with ~10,000 3-grams over all of a vocabulary's words even those are in 1-3%
of the names: ~1.9M postings per query at 8M names. A name's char_wb TF-IDF score splits
exactly over its words, so here a query reads the postings of the words whose cosine with
it reaches `word_threshold` (0.3: ~220k postings per query at 8M names), keeps the best
`candidates` names by that partial score and rescores them exactly, as the pruned search
does. Word postings exist only for a plain char_wb TF-IDF encoder (the default) at the
name level; for any other rows the candidates are the block-by-block n-gram ones.
BENCHMARKS.md has the measured recall against the exact search and the speed. Batches of
queries are split over the index's `n_threads` threads (threads.py; the kernels release
the GIL).
"""
import logging
from typing import Iterable, Optional

import numpy
from scipy import sparse

from ..errors import BioLinkError, Errors
from .pruned import V2_COVERAGE, NgramCandidates
from .word_postings import WordPostings

logger = logging.getLogger(__name__)

WORD_THRESHOLD = 0.3
WORD_CANDIDATES = 256
# WordSparseIndex.v2's defaults: the share of each query's squared weight whose n-grams
# (the rarest first) its word search reads, and the partial cosine a word needs (lower than
# v1's, as partial cosines are lower); chosen on NCBI-disease dev at 1M names
# (BENCHMARKS.md).
WORD_COVERAGE = 0.8
V2_WORD_THRESHOLD = 0.2
# AutoSparseIndex.v5's candidates: WORD_CANDIDATES up to GROWTH_FROM names, then
# CANDIDATES_GROWTH times more per tenfold of names, at most MAX_CANDIDATES. At 10M
# realistic names the word step is the search and more candidates cost nothing, while
# under 1M (MeSH) each one costs; chosen on NCBI-disease dev at 3M and 10M names (issue 35,
# BENCHMARKS.md).
CANDIDATES_GROWTH = 4.0
GROWTH_FROM = 1_000_000
MAX_CANDIDATES = 1024
# WordSparseIndex.v3 / AutoSparseIndex.v6: each word is found through its RARE_GRAMS
# rarest n-grams and scored exactly when the query holds RARE_HITS of them (a prefix
# filter); chosen on NCBI-disease dev at 10M realistic names (issue 35, BENCHMARKS.md).
# Counted in a byte per word, hence the bound.
RARE_GRAMS = 4
RARE_HITS = 2
MAX_RARE_GRAMS = 32
# AutoSparseIndex.v6 reads words by their rare n-grams from this many words on, by
# word_coverage below: on NCBI-disease dev the rare-gram search lost recall@10 on MeSH 2024
# and at 3M realistic names, for little speed at 3M, and gained both at 10M (BENCHMARKS.md).
RARE_FROM = 2_000_000


class WordCandidates:
    """A PrunedSparseIndex's candidates from the words within `word_threshold` cosine of
    the query, once the index's word postings are built (PrunedSparseIndex.add_words);
    until then, or where the rows are not sums over words, the block-by-block n-gram
    candidates with `coverage`."""

    state_type = "word_sparse"
    uses_words = True

    def __init__(self, word_threshold: float = WORD_THRESHOLD, coverage: float = V2_COVERAGE,
                 *, word_coverage: Optional[float] = None,
                 rare_grams: Optional[int] = None, rare_hits: int = 1,
                 rare_from: int = 0):
        self.word_threshold = word_threshold
        # None: each query's cosine with every word sharing an n-gram with it; a share:
        # only its rarest n-grams holding that share of its weight are read
        # (word_kernels.word_cosines_pruned), whose postings grow far slower with the words.
        self.word_coverage = word_coverage
        # None: the words are found by their cosines over the query's n-grams (all of
        # them, or word_coverage's); a count: by the query's n-grams among each word's
        # own `rare_grams` rarest, then scored exactly (WordSparseIndex.v3, a prefix
        # filter: word_kernels.word_cosines_rare).
        self.rare_grams = rare_grams
        self.rare_hits = rare_hits
        # Under this many words the rare-gram search is not used (word_coverage's is):
        # with few words the common n-grams' postings are short, and a word missing two
        # of its rarest n-grams costs recall (BENCHMARKS.md, MeSH 2024).
        self.rare_from = rare_from
        self.fallback = NgramCandidates(coverage, blocked=True)
        self._word_postings_cache: Optional[tuple] = None

    @property
    def coverage(self) -> float:
        """The n-gram fallback's coverage; 1 turns pruning (and word candidates) off."""
        return self.fallback.coverage

    def check(self, name: str, candidates) -> None:
        """Raise BioLinkError E220 or E222 (naming the index `name`) for settings out of
        range (see NgramCandidates.check; word_threshold must be a number in (0, 1])."""
        self.fallback.check(name, candidates)
        value = self.word_threshold
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                not 0 < value <= 1:
            raise BioLinkError(Errors.E222.format(index=name, value=value))
        self.word_threshold = float(value)
        share = self.word_coverage
        if share is not None:
            if isinstance(share, bool) or not isinstance(share, (int, float)) or \
                    not 0 < share <= 1:
                raise BioLinkError(Errors.E224.format(index=name, value=share))
            self.word_coverage = float(share)
        grams, hits = self.rare_grams, self.rare_hits
        if grams is not None:
            if any(isinstance(v, bool) or not isinstance(v, int) for v in (grams, hits)) or \
                    not 1 <= hits <= grams <= MAX_RARE_GRAMS:
                raise BioLinkError(Errors.E226.format(index=name, grams=grams, hits=hits))
            start = self.rare_from
            if isinstance(start, bool) or not isinstance(start, int) or start < 0:
                raise BioLinkError(Errors.E227.format(index=name, value=start))

    def word_postings(self, texts: Iterable[str], vectorizer, rows: sparse.csr_matrix,
                      name: str) -> Optional[WordPostings]:
        """The word postings of the names `texts` (as encoded, one per row of `rows`), or
        None where the rows are not sums over words of `vectorizer`."""
        words = WordPostings.from_names(texts, vectorizer, rows)
        if words is not None:
            logger.info("%s: word postings over %d words", name, words.n_words)
            if self.rare_grams_for(words) is not None:
                # Derived now and saved with the index, not on a loaded one's first search.
                words.rare_gram_postings(self.rare_grams)
        return words

    def find(self, index, queries: sparse.csr_matrix, depth: int) -> numpy.ndarray:
        """The `depth` candidate name ids (-1: none) of each (whole, sorted) query row."""
        if index.words is None:
            return self.fallback.find(index, queries, depth)
        from . import block_kernels

        word_queries = index.words.word_queries(queries, self.word_threshold,
                                                coverage=self.word_coverage,
                                                n_threads=index.n_threads,
                                                rare_grams=self.rare_grams_for(index.words),
                                                rare_hits=self.rare_hits)
        return block_kernels.blocked_candidates(
            word_queries.indptr, word_queries.indices, word_queries.data,
            self._prepared(index.words.postings), index.n_vectors, depth,
            n_threads=index.n_threads, chunk_size=max(1, int(index.chunk_size)),
            bucketed=True)

    def rare_grams_for(self, words) -> Optional[int]:
        """rare_grams where the word postings hold at least rare_from words, else None
        (the word_coverage search)."""
        if self.rare_grams is None or words is None or words.n_words < self.rare_from:
            return None
        return self.rare_grams

    def _prepared(self, postings):
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

    def settings_meta(self, index) -> dict:
        """word_threshold and whether the index holds word postings, for the saved meta."""
        meta = {"word_threshold": self.word_threshold, "words": index.words is not None}
        if self.word_coverage is not None:
            meta["word_coverage"] = self.word_coverage
        if self.rare_grams is not None:
            meta["rare_grams"] = self.rare_grams
            meta["rare_hits"] = self.rare_hits
            meta["rare_from"] = self.rare_from
        return meta

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_word_postings_cache": None}
