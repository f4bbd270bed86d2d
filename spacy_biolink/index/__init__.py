"""Every nearest-name search, and names -> ranked concepts.

sparse.py: exact sparse top-k (SparseIndex) and the NameIndex base; kernels.py: its numba
kernels; faiss.py: dense search (FaissIndex); hybrid.py: dense + sparse candidates
rescored (HybridIndex); pruned.py: sparse search that reads only rare n-grams
(PrunedSparseIndex, AutoSparseIndex); blocked.py: the same with its candidates found block by
block, block_kernels.py its kernel (the .v2 indexes); word_index.py: candidates from word
postings (word_postings.py, word_kernels.py: WordSparseIndex, AutoSparseIndex.v3);
concepts.py: nearest names -> ranked concepts.
"""
from .blocked import BlockedAutoSparseIndex, BlockedPrunedSparseIndex
from .faiss import AUTO_FAISS_MIN_NAMES, FAISS_KINDS, AutoFaissIndex, FaissIndex
from .hybrid import HybridIndex
from .pruned import AUTO_MIN_NAMES, AutoSparseIndex, PrunedSparseIndex
from .sparse import (NameIndex, SearchResult, SparseIndex, exact_index, exact_index_from_state,
                     top_k)
from .word_index import WordAutoSparseIndex, WordSparseIndex

__all__ = ["AUTO_FAISS_MIN_NAMES", "AUTO_MIN_NAMES", "AutoFaissIndex", "AutoSparseIndex",
           "PrunedSparseIndex", "BlockedAutoSparseIndex", "BlockedPrunedSparseIndex", "FAISS_KINDS",
           "FaissIndex", "HybridIndex", "NameIndex", "SearchResult", "SparseIndex",
           "WordAutoSparseIndex", "WordSparseIndex", "exact_index", "exact_index_from_state",
           "top_k"]
