"""Search for hybrid rows [dense | sparse]: each part's own top candidates, the union
rescored exactly.

HybridEncoder and BioSyn's encoder give one CSR row per text whose first `dense_width`
columns are a dense vector and the rest a TF-IDF vector, so that one inner product is
the weighted sum of both scores. SparseIndex searches that sum exactly over every name,
but the dense columns are in every name's postings, so each query touches every name
(126-356 mentions/s on 77k names, BENCHMARKS.md). HybridIndex asks a dense index
(faiss: HNSW, or flat) and a SparseIndex for the `candidates` best names by each part
alone, then scores the union by the full sum, as BioSyn's retrieval does with its
sparse and dense top-k.

A name can be missed only if neither part alone ranks it among its `candidates` best
while the sum ranks it among the k best. `candidates` >= the number of names is exact.

`n_threads` (not saved; 0 by default: one per core, one in a child process, see
threads.py): with two or more, a batch's sparse search runs in a second thread while
faiss searches the dense part on the others (both release the GIL); the results do not
depend on it.
"""
from concurrent.futures import ThreadPoolExecutor
from typing import Tuple

import numpy
from scipy import sparse

from ..errors import BioLinkError, Errors
from .auto import AutoSparseIndex
from .faiss import FaissIndex
from .sparse import NameIndex, SearchResult, SparseIndex, _empty_result, _sparse_kernels
from .threads import openmp_threads, search_threads, valid_thread_count

# faiss kinds whose vectors can be read back exactly for rescoring
RECONSTRUCTIBLE = ("flat", "hnsw")
# Fewer queries than this are searched part after part: a thread costs more than it saves.
MIN_QUERIES_FOR_THREADS = 16


class HybridIndex(NameIndex):
    """Near-exact search for [dense | sparse] rows: each part's `candidates` best names,
    rescored by the full inner product (see the module docstring)."""

    vector_kind = "sparse"

    def __init__(self, dense_width: int, dense: FaissIndex, sparse_index: SparseIndex,
                 candidates: int = 64, *, n_threads: int = 0):
        if not isinstance(dense, FaissIndex) or dense.kind not in RECONSTRUCTIBLE:
            raise BioLinkError(Errors.E209.format(
                part="dense", got=getattr(dense, "kind", type(dense).__name__),
                needs=f"a faiss index of kind {' or '.join(RECONSTRUCTIBLE)}"))
        # Any sparse search whose postings _sparse_scores can read: exact, pruned or auto.
        if not isinstance(sparse_index, (SparseIndex, AutoSparseIndex)):
            raise BioLinkError(Errors.E209.format(part="sparse", got=type(sparse_index).__name__,
                                                  needs="a sparse index (SparseIndex.v1)"))
        if dense_width < 1 or candidates < 1:
            raise BioLinkError(Errors.E210.format(dense_width=dense_width, candidates=candidates))
        self.dense_width = dense_width
        self.dense = dense
        self.sparse = sparse_index
        self.candidates = candidates
        self.n_threads = n_threads

    @property
    def n_threads(self) -> int:
        """Threads a search uses now: 1 searches the parts one after the other, more lets
        the sparse part run beside the dense one. Setting it to anything but a whole
        number >= 0 raises BioLinkError E223."""
        return search_threads(self._n_threads)

    @n_threads.setter
    def n_threads(self, value) -> None:
        """Set the threads setting (0: one per core, one in a child process)."""
        if not valid_thread_count(value):
            raise BioLinkError(Errors.E223.format(index="HybridIndex", value=value))
        self._n_threads = value

    @property
    def n_vectors(self) -> int:
        """Number of names indexed (the sparse part's count)."""
        return self.sparse.n_vectors

    @property
    def is_built(self) -> bool:
        """Whether both parts are built. Before that, search raises BioLinkError E207."""
        return self.dense.is_built and self.sparse.is_built

    def build(self, vectors: sparse.csr_matrix) -> None:
        """Index hybrid rows (CSR whose first `dense_width` columns are the dense vector).
        The dense columns go to faiss and the rest to the SparseIndex, replacing what was there."""
        dense_part, sparse_part = self._split(vectors)
        self.dense.build(dense_part)
        self.sparse.build(sparse_part)
        self._sort_postings()

    def add(self, vectors: sparse.csr_matrix) -> None:
        """Append hybrid rows to both parts; their name ids continue after the existing ones."""
        dense_part, sparse_part = self._split(vectors)
        self.dense.add(dense_part)
        self.sparse.add(sparse_part)
        self._sort_postings()

    def search(self, queries: sparse.csr_matrix, k: int) -> SearchResult:
        """Top-k (scores, name ids) for hybrid `queries`. Each part proposes its max(k, candidates)
        best names and the union is rescored by the full inner product. Best first, ties to
        the lower id, padded with -1."""
        if not self.is_built:
            raise BioLinkError(Errors.E207.format(index="hybrid"))
        dense_queries, sparse_queries = self._split(queries)
        scores, ids = _empty_result(dense_queries.shape[0], k)
        if k == 0 or self.n_vectors == 0:
            return scores, ids
        take = max(k, self.candidates)
        n_threads = self.n_threads
        if n_threads > 1 and len(dense_queries) >= MIN_QUERIES_FOR_THREADS:
            with ThreadPoolExecutor(1) as pool:
                sparse_found = pool.submit(self.sparse.search, sparse_queries, take)
                # faiss gets the cores the sparse search leaves, not one more thread
                with openmp_threads(n_threads - 1):
                    _, dense_ids = self.dense.search(dense_queries, take)
                _, sparse_ids = sparse_found.result()
        else:
            _, dense_ids = self.dense.search(dense_queries, take)
            _, sparse_ids = self.sparse.search(sparse_queries, take)
        names, counts = _union(dense_ids, sparse_ids)
        # Every row's union scored at once: per-row numpy calls cost more than the
        # arithmetic on a few hundred names.
        exact = self._all_sparse_scores(sparse_queries, names, counts)
        dense_rows = self._reconstruct(names[names >= 0])
        at = 0
        for row, count in enumerate(counts.tolist()):
            if count:
                # The same (count x width) @ (width,) product per row as before the batched
                # rescoring, so the dense scores keep their bits.
                exact[row, :count] += dense_rows[at:at + count] @ dense_queries[row]
                at += count
        exact[names < 0] = -numpy.inf
        # score descending, ties to the lower id (top_k's order); padding sorts last
        order = numpy.lexsort((names, -exact), axis=-1)[:, :k]
        found, found_ids = (numpy.take_along_axis(exact, order, axis=1),
                            numpy.take_along_axis(names, order, axis=1))
        width = found.shape[1]
        valid = found_ids >= 0
        scores[:, :width] = numpy.where(valid, found, 0.0)
        ids[:, :width] = found_ids
        return scores, ids

    def _reconstruct(self, names: numpy.ndarray) -> numpy.ndarray:
        if not len(names):
            return numpy.zeros((0, self.dense_width), dtype=numpy.float32)
        return self.dense.index.reconstruct_batch(names)

    def _all_sparse_scores(self, queries: sparse.csr_matrix, names: numpy.ndarray,
                           counts: numpy.ndarray) -> numpy.ndarray:
        """The sparse part of q . name for each row's names (-1: none, scored 0), float32.
        The kernel walks each name's own features (names x features rows) and sums in
        ascending feature order, the order of a canonical query row, so its sums are those
        of the per-row numpy loop (which sums in the query's stored order): queries that
        are not canonical, or a missing kernel, take that loop."""
        rows = self._name_rows()
        if rows is not None and queries.has_canonical_format \
                and numpy.isfinite(queries.data).all():
            return _sparse_kernels().rescore_rows(queries.indptr, queries.indices,
                                                  queries.data, rows, queries.shape[1], names)
        out = numpy.zeros(names.shape, dtype=numpy.float32)
        for row, count in enumerate(counts.tolist()):
            if count:
                out[row, :count] = self._sparse_scores(queries, row, names[row, :count])
        return out

    def _name_rows(self):
        """The sparse part's names x features rows (ascending features) as the numba kernel
        takes them, or None where the kernel is missing or would not give the numpy loop's
        sums (not float32, non-finite). Built on the first search after each build, add or
        load: a second copy of the postings, held in memory only."""
        m = self.sparse.names_t
        cached = getattr(self, "_rows_cache", None)
        if cached is None or cached[0] is not m:
            rows = None
            kernel = _sparse_kernels()
            # canonical postings: no (feature, name) pair twice, which the loop reads once
            if (kernel is not None and m.dtype == numpy.float32 and m.shape[1] < 2 ** 31
                    and m.has_canonical_format and numpy.isfinite(m.data).all()):
                names = m.T.tocsr()
                names.sort_indices()
                rows = kernel.prepare_postings(names.indptr, names.indices, names.data,
                                               m.shape[0])
            cached = self._rows_cache = (m, rows)
        return cached[1]

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_rows_cache": None}

    def _sparse_scores(self, queries: sparse.csr_matrix, row: int,
                       names: numpy.ndarray) -> numpy.ndarray:
        """q . name for each name, from the postings of q's features (sorted name ids)."""
        postings = self.sparse.names_t
        out = numpy.zeros(len(names), dtype=numpy.float32)
        lo, hi = queries.indptr[row], queries.indptr[row + 1]
        for feature, weight in zip(queries.indices[lo:hi], queries.data[lo:hi]):
            start, end = postings.indptr[feature], postings.indptr[feature + 1]
            if start == end:
                continue
            holders = postings.indices[start:end]
            at = numpy.searchsorted(holders, names)
            hit = at < len(holders)
            hit[hit] = holders[at[hit]] == names[hit]
            out[hit] += weight * postings.data[start + at[hit]]
        return out

    def _split(self, vectors) -> Tuple[numpy.ndarray, sparse.csr_matrix]:
        if not sparse.issparse(vectors):
            raise BioLinkError(Errors.E206.format(index="HybridIndex", needs="sparse (hybrid)",
                                                  got=type(vectors).__name__))
        vectors = sparse.csr_matrix(vectors, dtype=numpy.float32)
        if vectors.shape[1] <= self.dense_width:
            raise BioLinkError(Errors.E211.format(width=vectors.shape[1],
                                                  dense_width=self.dense_width))
        return (numpy.ascontiguousarray(vectors[:, :self.dense_width].toarray()),
                vectors[:, self.dense_width:].tocsr())

    def _sort_postings(self) -> None:
        # _sparse_scores binary-searches each posting list
        if not self.sparse.names_t.has_sorted_indices:
            self.sparse.names_t.sort_indices()

    def to_state(self) -> Tuple[dict, dict]:
        """Both parts' states in one (meta, arrays), with array names prefixed dense_ / sparse_.
        Raises BioLinkError E207 if the index is not built."""
        if not self.is_built:
            raise BioLinkError(Errors.E207.format(index="hybrid"))
        dense_meta, dense_arrays = self.dense.to_state()
        sparse_meta, sparse_arrays = self.sparse.to_state()
        arrays = {f"dense_{name}": a for name, a in dense_arrays.items()}
        arrays.update({f"sparse_{name}": a for name, a in sparse_arrays.items()})
        return ({"type": "hybrid", "dense_width": self.dense_width, "dense": dense_meta,
                 "sparse": sparse_meta}, arrays)

    def from_state(self, meta: dict, arrays: dict) -> "HybridIndex":
        """Restore both parts from to_state's output into the dense and sparse indexes this
        instance was constructed with, and return it."""
        def part(prefix):
            return {name[len(prefix):]: a for name, a in arrays.items() if name.startswith(prefix)}

        self.dense.from_state(meta["dense"], part("dense_"))
        self.sparse.from_state(meta["sparse"], part("sparse_"))
        self._sort_postings()
        return self


def _union(dense_ids: numpy.ndarray, sparse_ids: numpy.ndarray
           ) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Per query row, the distinct name ids either part found, ascending, then -1 padding
    (-1 is padding in the inputs too); and how many each row has."""
    both = numpy.concatenate([dense_ids, sparse_ids], axis=1)
    both.sort(axis=1)
    drop = both < 0
    drop[:, 1:] |= both[:, 1:] == both[:, :-1]
    both[drop] = numpy.iinfo(both.dtype).max
    both.sort(axis=1)
    counts = both.shape[1] - drop.sum(axis=1)
    both[both == numpy.iinfo(both.dtype).max] = -1
    return both, counts
