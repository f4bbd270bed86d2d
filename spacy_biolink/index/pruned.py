"""Sparse search that reads only the rare n-grams: PrunedSparseIndex, and
AutoSparseIndex, which is exact below a size threshold and pruned above it.

The exact search (SparseIndex) adds up every posting of every query n-gram, so its cost
grows with the dictionary: the common char 3-grams ("ase", "ion", " di") each hold a
large share of all names. They also carry little of a query's TF-IDF weight. The pruned
search keeps, for each query, its heaviest n-grams until `coverage` of the query's squared
weight is kept (the rare n-grams, with short postings), asks the exact kernel for the
`candidates` best names by that partial query, and scores those names exactly against the
whole query through their own rows (names x features). Scores are those of the exact
search (bit-identical), only the candidate set is pruned; coverage = 1 is exact.

By Cauchy-Schwarz a unit-norm name gains at most |q_dropped| = sqrt(1 - coverage) from the
dropped n-grams, which is why a name near the top rarely falls out of the candidates;
BENCHMARKS.md has the measured recall against exact search.
"""
from typing import Optional, Tuple

import numpy
from scipy import sparse

from ..errors import BioLinkError, Errors
from .sparse import SearchResult, SparseIndex, _empty_result, _sparse_kernels

# The bio_linker default switches from exact to pruned search at this many names: below
# it the exact search is fast enough (5,000 mentions/s at 76k names) and stays exact.
AUTO_MIN_NAMES = 500_000


def prune_queries(queries: sparse.csr_matrix, coverage: float) -> sparse.csr_matrix:
    """Each row's heaviest entries (by |weight|) whose squares first reach `coverage` of
    the row's squared norm; at least one entry per non-empty row."""
    queries = sparse.csr_matrix(queries)
    n_rows = queries.shape[0]
    lengths = numpy.diff(queries.indptr)
    row_of = numpy.repeat(numpy.arange(n_rows), lengths)
    squares = queries.data.astype(numpy.float64) ** 2
    order = numpy.lexsort((-squares, row_of))  # by row, heaviest first
    sorted_sq = squares[order]
    cumulative = numpy.cumsum(sorted_sq)
    starts = queries.indptr[:-1]
    before_row = numpy.repeat(numpy.concatenate([[0.0], cumulative])[starts], lengths)
    within = cumulative - before_row  # this row's running sum, this entry included
    totals = numpy.bincount(row_of, weights=squares, minlength=n_rows)[row_of[order]]
    # Keep an entry when the running sum before it is still short of the target.
    keep = (within - sorted_sq) < coverage * totals
    kept = order[keep]
    pruned = sparse.csr_matrix((queries.data[kept], (row_of[kept], queries.indices[kept])),
                               shape=queries.shape, dtype=queries.dtype)
    pruned.sort_indices()
    return pruned


class PrunedSparseIndex(SparseIndex):
    """Sparse inner-product search over non-negative L2-normalised rows (TF-IDF) that
    reads only each query's heaviest n-grams, then rescores `candidates` names exactly.
    See the module docstring; coverage = 1 gives the exact search's results."""

    vector_kind = "sparse"
    state_type = "pruned_sparse"

    def __init__(self, coverage: float = 0.8, candidates: int = 256, chunk_size: int = 256):
        if not (0 < coverage <= 1) or candidates < 1:
            raise BioLinkError(Errors.E220.format(index=self._registered_name(),
                                                  coverage=coverage, candidates=candidates))
        super().__init__(chunk_size=chunk_size)
        self.coverage = float(coverage)
        self.candidates = int(candidates)
        self.rows: Optional[sparse.csr_matrix] = None  # names x features
        self._rows_cache = None

    def _registered_name(self) -> str:
        return getattr(self, "registered_name", type(self).__name__ + ".v1")

    @property
    def prunes(self) -> bool:
        """Whether search prunes (AutoSparseIndex: only past its size threshold)."""
        return self.coverage < 1

    def build(self, vectors: sparse.csr_matrix) -> None:
        """As SparseIndex.build, and also keep the rows (names x features) that rescoring reads.
        When pruning, negative values raise BioLinkError E221."""
        self._check_kind(vectors)
        if self.prunes:
            self._check_non_negative(vectors)
        super().build(vectors)
        self._build_rows(vectors)

    def add(self, vectors: sparse.csr_matrix) -> None:
        """Append rows; their name ids continue after the existing ones. The rescoring rows
        are rebuilt over all names, so the cost grows with the index."""
        self._check_kind(vectors)
        if self.names_t is None:
            return self.build(vectors)
        if self.prunes:
            self._check_non_negative(vectors)
        super().add(vectors)
        self._build_rows(sparse.vstack([self.rows, vectors], format="csr")
                         if self.rows is not None else self.names_t.T)

    def _build_rows(self, vectors) -> None:
        if not self.prunes:
            self.rows = None
            return
        # The caller's float32 CSR rows are kept as they are (at 10M names a copy is 1.7 GB
        # at the build's peak); only rows that need sorting are copied first, so the
        # caller's matrix is never reordered.
        rows = sparse.csr_matrix(vectors, dtype=numpy.float32, copy=False)
        if not rows.has_canonical_format:
            rows = rows.copy()
            rows.sum_duplicates()
            rows.sort_indices()
        self.rows = rows

    def _check_non_negative(self, vectors) -> None:
        data = sparse.csr_matrix(vectors).data
        if len(data) and data.min() < 0:
            raise BioLinkError(Errors.E221.format(index=self._registered_name(),
                                                  value=float(data.min())))

    def search(self, queries: sparse.csr_matrix, k: int) -> SearchResult:
        """Top-k (scores, name ids) as SparseIndex.search returns them, with exact scores. But
        candidates come only from each query's heaviest n-grams, so a true top name can be
        missed. Without pruning, or for negative/non-finite queries, this is the exact search."""
        if not self.prunes:
            return SparseIndex.search(self, queries, k)
        queries = self._check_queries(queries)
        kernel = _sparse_kernels()
        rows = self._prepared_rows(kernel)
        if (rows is None or k == 0 or queries.shape[0] == 0
                or not numpy.isfinite(queries.data).all() or (queries.data < 0).any()):
            return SparseIndex.search(self, queries, k)
        queries = queries.copy()
        queries.sum_duplicates()
        queries.sort_indices()  # rescoring sums in feature order, as the exact kernel
        depth = min(max(k, self.candidates), self.n_vectors)
        found = self._find_candidates(queries, depth)
        scores = kernel.rescore_rows(queries.indptr, queries.indices, queries.data, rows,
                                     queries.shape[1], found)
        # Best first, ties to the lower id; names scoring 0 (or none) are no candidates.
        missing = (found < 0) | (scores == 0)
        order = numpy.lexsort((numpy.where(missing, numpy.iinfo(numpy.int64).max, found),
                               numpy.where(missing, numpy.inf, -scores)), axis=-1)[:, :k]
        out_scores, out_ids = _empty_result(queries.shape[0], k)
        take = order.shape[1]
        top_scores = numpy.take_along_axis(scores, order, axis=1)
        top_ids = numpy.take_along_axis(found, order, axis=1)
        top_missing = numpy.take_along_axis(missing, order, axis=1)
        out_scores[:, :take] = numpy.where(top_missing, 0, top_scores)
        out_ids[:, :take] = numpy.where(top_missing, -1, top_ids)
        return out_scores, out_ids

    def _find_candidates(self, queries: sparse.csr_matrix, depth: int) -> numpy.ndarray:
        """The `depth` candidate name ids (-1: none) of each (whole, sorted) query row."""
        return self._candidates(prune_queries(queries, self.coverage), depth)

    def _candidates(self, pruned: sparse.csr_matrix, depth: int) -> numpy.ndarray:
        """The `depth` best name ids (-1: none) of each pruned query row, by the exact kernel."""
        return SparseIndex.search(self, pruned, depth)[1]

    def _prepared_rows(self, kernel):
        m = self.rows
        cached = self._rows_cache
        if cached is None or cached[0] is not m:
            prepared = None
            if kernel is not None and m is not None and m.dtype == numpy.float32:
                prepared = kernel.prepare_postings(m.indptr, m.indices, m.data, m.shape[1])
            cached = self._rows_cache = (m, prepared)
        return cached[1]

    def __getstate__(self) -> dict:
        return {**super().__getstate__(), "_rows_cache": None}

    def to_state(self) -> Tuple[dict, dict]:
        """SparseIndex's state plus coverage, candidates and the rescoring rows. The rows are
        saved so that loading memory-maps them instead of transposing the postings."""
        meta, arrays = super().to_state()
        meta = dict(meta, type=self.state_type, coverage=self.coverage,
                    candidates=self.candidates)
        if self.rows is not None:
            arrays = dict(arrays, rows_data=self.rows.data, rows_indices=self.rows.indices,
                          rows_indptr=self.rows.indptr)
        return meta, arrays

    def from_state(self, meta: dict, arrays: dict) -> "PrunedSparseIndex":
        """Restore from to_state's output and return self. coverage and candidates come from
        the constructor (config), not the saved meta. Rows missing from the save are rebuilt
        when pruning."""
        super().from_state(meta, arrays)
        self.rows = None
        if "rows_data" in arrays:
            self.rows = sparse.csr_matrix(
                (arrays["rows_data"], arrays["rows_indices"], arrays["rows_indptr"]),
                shape=(self.names_t.shape[1], self.names_t.shape[0]))
        elif self.prunes:
            self._build_rows(self.names_t.T)
        return self


def _non_negative(vectors) -> bool:
    data = sparse.csr_matrix(vectors).data
    return bool(not len(data) or data.min() >= 0)


class AutoSparseIndex(PrunedSparseIndex):
    """Exact search (as SparseIndex) for dictionaries under `min_names` names, pruned
    search (as PrunedSparseIndex) from there on, for non-negative rows (TF-IDF; rows with
    negative values, e.g. BioSyn's [dense | sparse], are always searched exactly). The choice is made when the index is built
    and saved with it, so a pipeline links the same way after spacy.load."""

    state_type = "auto_sparse"

    def __init__(self, min_names: int = AUTO_MIN_NAMES, coverage: float = 0.8,
                 candidates: int = 256, chunk_size: int = 256):
        super().__init__(coverage=coverage, candidates=candidates, chunk_size=chunk_size)
        self.min_names = int(min_names)
        self._pruning = False

    @property
    def prunes(self) -> bool:
        """True once the index holds at least `min_names` non-negative rows (decided at build
        or add) and coverage < 1."""
        return self._pruning and self.coverage < 1

    def build(self, vectors: sparse.csr_matrix) -> None:
        """Choose exact or pruned search from these vectors (at least min_names rows, all
        non-negative), then build for that choice."""
        self._check_kind(vectors)
        self._pruning = bool(vectors.shape[0] >= self.min_names and _non_negative(vectors))
        super().build(vectors)

    def add(self, vectors: sparse.csr_matrix) -> None:
        """Append rows. Switches to pruned search once the total reaches min_names and every
        row is non-negative; it never switches back."""
        self._check_kind(vectors)
        if self.names_t is not None and not self._pruning and \
                self.n_vectors + vectors.shape[0] >= self.min_names and \
                _non_negative(vectors) and _non_negative(self.names_t):
            self._pruning = True
            SparseIndex.add(self, vectors)
            self._build_rows(self.names_t.T)
            return
        super().add(vectors)

    def to_state(self) -> Tuple[dict, dict]:
        """PrunedSparseIndex's state plus min_names and the exact/pruned choice, so that a loaded
        pipeline searches the way it did when saved."""
        meta, arrays = super().to_state()
        return dict(meta, min_names=self.min_names, pruning=self._pruning), arrays

    def from_state(self, meta: dict, arrays: dict) -> "AutoSparseIndex":
        """Restore from to_state's output, taking the exact/pruned choice from the save
        instead of deciding it again."""
        self._pruning = bool(meta.get("pruning", False))
        return super().from_state(meta, arrays)
