"""Exact (brute-force) indexes over small sets: SparseIndex for sparse rows, a flat
FaissIndex for dense ones."""
from scipy import sparse

from .faiss import FaissIndex
from .sparse import NameIndex, SparseIndex


def exact_index(vectors) -> NameIndex:
    """A brute-force index over `vectors`: SparseIndex for sparse rows, a flat FaissIndex
    for dense ones. For small sets that must be searched exactly (the sieve's training
    mentions), whatever index the main search uses."""
    index = SparseIndex() if sparse.issparse(vectors) else FaissIndex("flat")
    index.build(vectors)
    return index


def exact_index_from_state(meta: dict, arrays: dict) -> NameIndex:
    """Inverse of `exact_index(...).to_state()`."""
    if meta.get("type") == "sparse":
        return SparseIndex().from_state(meta, arrays)
    if meta.get("type") == "faiss":
        return FaissIndex(meta.get("kind", "flat")).from_state(meta, arrays)
    raise KeyError(f"index type {meta.get('type')!r}")
