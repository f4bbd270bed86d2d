"""Every nearest-name search, and names -> ranked concepts.

sparse.py: exact sparse top-k (SparseIndex) and the NameIndex base; kernels.py: its numba
kernels; faiss.py: dense search (FaissIndex); hybrid.py: dense + sparse candidates
rescored (HybridIndex); concepts.py: nearest names -> ranked concepts.
"""
from .faiss import FAISS_KINDS, FaissIndex
from .hybrid import HybridIndex
from .sparse import (NameIndex, SearchResult, SparseIndex, exact_index, exact_index_from_state,
                     top_k)

__all__ = ["FAISS_KINDS", "FaissIndex", "HybridIndex", "NameIndex", "SearchResult",
           "SparseIndex", "exact_index", "exact_index_from_state", "top_k"]
