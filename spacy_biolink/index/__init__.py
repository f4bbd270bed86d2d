"""Every nearest-name search, and names -> ranked concepts.

A few plain classes, each one kind of search; registry.py's builder functions put them
together with settings under versioned registered names, and no class knows those
names.

sparse.py: NameIndex (what every index offers) and SparseIndex (exact sparse top-k);
kernels.py: its numba kernels; pruned.py: PrunedSparseIndex (candidates found cheaply,
rescored exactly) and NgramCandidates (candidates from the rare n-grams, through the exact
kernel or block by block, block_kernels.py); word_index.py: WordCandidates (candidates from
word postings, word_postings.py, word_kernels.py); auto.py: AutoSparseIndex (exact below a
size threshold, approximate above); faiss.py: dense search (FaissIndex, AutoFaissIndex);
hybrid.py: dense + sparse candidates rescored (HybridIndex); exact.py: brute-force search
over small sets (sparse or flat faiss); threads.py: how many threads a search uses;
concepts.py: nearest names -> ranked concepts.
"""
from .auto import AUTO_MIN_NAMES, AutoSparseIndex
from .faiss import AUTO_FAISS_MIN_NAMES, FAISS_KINDS, AutoFaissIndex, FaissIndex
from .hybrid import HybridIndex
from .pruned import V2_CANDIDATES, V2_COVERAGE, NgramCandidates, PrunedSparseIndex
from .exact import exact_index, exact_index_from_state
from .sparse import NameIndex, SearchResult, SparseIndex, top_k
from .word_index import (CANDIDATES_GROWTH, GROWTH_FROM, MAX_CANDIDATES, RARE_FROM, RARE_GRAMS,
                         RARE_HITS, V2_WORD_THRESHOLD,
                         WORD_CANDIDATES, WORD_COVERAGE, WORD_THRESHOLD, WordCandidates)

__all__ = ["AUTO_FAISS_MIN_NAMES", "AUTO_MIN_NAMES", "AutoFaissIndex", "AutoSparseIndex",
           "CANDIDATES_GROWTH", "FAISS_KINDS", "GROWTH_FROM", "MAX_CANDIDATES", "RARE_FROM", "RARE_GRAMS", "RARE_HITS", "FaissIndex", "HybridIndex", "NameIndex", "NgramCandidates",
           "PrunedSparseIndex", "SearchResult", "SparseIndex", "V2_CANDIDATES", "V2_COVERAGE",
           "V2_WORD_THRESHOLD", "WORD_CANDIDATES", "WORD_COVERAGE", "WORD_THRESHOLD", "WordCandidates", "exact_index",
           "exact_index_from_state", "top_k"]
