"""Sparse search that finds a few candidate names cheaply and rescores them exactly:
PrunedSparseIndex, and NgramCandidates, its default way of finding them.

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

Where the candidates come from is a strategy apart from the index: NgramCandidates (the
pruned query through the exact kernel, or through block_kernels.py's block-by-block
accumulator, which stays in the CPU cache at millions of names and finds the same
candidates) or word_index.WordCandidates (word postings). The index owns the state
(postings, rescoring rows, word postings) and the rescoring; registry.py's builders pick
the strategy and settings of each registered version.
"""
import math
from typing import Iterable, Optional, Tuple

import numpy
from scipy import sparse

from ..errors import BioLinkError, Errors
from ..io.util import RELEASE_MEMORY_FROM, release_memory
from .sparse import SearchResult, SparseIndex, _empty_result, _sparse_kernels

# The block-by-block candidates' defaults (PrunedSparseIndex.v2): the same share of each
# query as v1, more candidates rescored; recall@10 against the exact search >= 0.995 on
# NCBI-disease mentions from 0.9M to 8M synthetic names (BENCHMARKS.md).
V2_COVERAGE = 0.8
V2_CANDIDATES = 512


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


class NgramCandidates:
    """Candidates from each query's heaviest n-grams: the n-grams that first reach
    `coverage` of its squared weight, searched exactly. `blocked` finds the same
    candidates block by block (block_kernels.py), falling back to the exact kernel where
    that cannot run (numba missing, postings not float32 or not sorted)."""

    state_type = "pruned_sparse"
    uses_words = False

    def __init__(self, coverage: float = 0.8, *, blocked: bool = False):
        self.coverage = coverage
        self.blocked = blocked
        self._sorted_cache: Optional[tuple] = None

    def check(self, name: str, candidates) -> None:
        """Raise BioLinkError E220 (naming the index `name`) unless coverage is in (0, 1]
        and `candidates` at least 1."""
        if not (0 < self.coverage <= 1) or candidates < 1:
            raise BioLinkError(Errors.E220.format(index=name, coverage=self.coverage,
                                                  candidates=candidates))
        self.coverage = float(self.coverage)

    def find(self, index: "PrunedSparseIndex", queries: sparse.csr_matrix,
             depth: int) -> numpy.ndarray:
        """The `depth` candidate name ids (-1: none) of each (whole, sorted) query row."""
        pruned = prune_queries(queries, self.coverage)
        if self.blocked:
            postings = index._postings()
            if postings is not None and self.postings_sorted(postings):
                from . import block_kernels

                return block_kernels.blocked_candidates(
                    pruned.indptr, pruned.indices, pruned.data, postings, index.n_vectors,
                    depth, n_threads=index.n_threads,
                    chunk_size=max(1, int(index.chunk_size)))
        return SparseIndex.search(index, pruned, depth)[1]

    def postings_sorted(self, postings) -> bool:
        """Whether the kernel's postings hold each feature's names in ascending order, as
        the block-by-block accumulator needs."""
        # Checked once per postings object: a saved index is memory-mapped, so this reads
        # its postings once, on the first search rather than at load.
        cached = self._sorted_cache
        if cached is None or cached[0] is not postings:
            from . import block_kernels

            cached = self._sorted_cache = (postings,
                                           block_kernels.postings_sorted(postings[0], postings[1]))
        return cached[1]

    def settings_meta(self, index: "PrunedSparseIndex") -> dict:
        """What the saved meta records of this strategy (nothing beyond coverage)."""
        return {}

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_sorted_cache": None}


class PrunedSparseIndex(SparseIndex):
    """Sparse inner-product search over non-negative L2-normalised rows (TF-IDF) that finds
    `candidates` names per query with `source` (NgramCandidates by default, or
    word_index.WordCandidates), then rescores them exactly against the whole query. See the
    module docstring; a source with coverage = 1 gives the exact search's results.

    The index keeps the rescoring rows (names x features) beside SparseIndex's postings,
    and the word postings when the source reads them (add_words). With
    `candidates_growth` above 1 the number rescored grows with the names (candidates_for;
    AutoSparseIndex.v5)."""

    vector_kind = "sparse"

    def __init__(self, source=None, candidates: int = 256, chunk_size: int = 256, *,
                 n_threads: int = 1, name: str = "PrunedSparseIndex",
                 candidates_growth: float = 1.0, growth_from: int = 1_000_000,
                 max_candidates: int = 0):
        self.source = NgramCandidates() if source is None else source
        self.source.check(name, candidates)
        numbers = (candidates_growth, growth_from, max_candidates)
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in numbers) or \
                candidates_growth < 1 or growth_from < 1 or (
                candidates_growth > 1 and max_candidates < candidates):
            raise BioLinkError(Errors.E225.format(
                index=name, growth=candidates_growth, start=growth_from,
                candidates=candidates, most=max_candidates))
        super().__init__(chunk_size=chunk_size, n_threads=n_threads, name=name)
        self.candidates = int(candidates)
        self.candidates_growth = float(candidates_growth)
        self.growth_from = int(growth_from)
        self.max_candidates = int(max_candidates)
        self.rows: Optional[sparse.csr_matrix] = None  # names x features
        self._rows_as_given = self._rows_canonical = False
        self.words = None  # word_postings.WordPostings, for a source that reads words
        self._rows_cache = None

    def candidates_for(self, n_names: int) -> int:
        """The names rescored per query over `n_names` names: `candidates` up to
        `growth_from` names, then `candidates_growth` times more for each tenfold of names,
        at most `max_candidates` (a growth of 1: always `candidates`)."""
        if self.candidates_growth == 1 or n_names <= self.growth_from:
            return self.candidates
        grown = self.candidates * self.candidates_growth ** math.log10(n_names / self.growth_from)
        return int(min(self.max_candidates, round(grown)))

    @property
    def coverage(self) -> float:
        """The share of each query's squared weight that candidate finding reads
        (1: exact search)."""
        return self.source.coverage

    @property
    def word_threshold(self) -> float:
        """The source's word_threshold (AttributeError for a source that reads no words)."""
        return self.source.word_threshold

    def free_depth(self) -> int:
        """How deep a search costs no more than a shallower one, 0 if none: the names
        rescored per query, while pruning. Up to it every search finds the same candidates
        and ranks them the same way (score, then lower id), so a shallower search's result
        is the head of a deeper one's, bit for bit (search_concepts reuses it)."""
        if not self.prunes or self.rows is None:
            return 0
        return min(self.candidates_for(self.n_vectors), self.n_vectors)

    @property
    def prunes(self) -> bool:
        """Whether search prunes (coverage < 1); otherwise it is SparseIndex's search and
        no rescoring rows are kept."""
        return self.coverage < 1

    def reset(self) -> None:
        """Forget the indexed rows, rescoring rows and word postings; the settings stay."""
        super().reset()
        self.rows = None
        self.words = None

    def build(self, vectors: sparse.csr_matrix) -> None:
        """As SparseIndex.build, and also keep the rows (names x features) that rescoring reads.
        When pruning, negative values raise BioLinkError E221. Word postings are dropped
        until add_words builds them again."""
        self._check_kind(vectors)
        if self.prunes:
            self._check_non_negative(vectors)
        self.words = None
        super().build(vectors)
        self._build_rows(vectors)
        # The postings are the transpose of the rows as kept unless these were sorted
        # into a copy (add_words).
        self._rows_as_given = self._rows_canonical

    def add(self, vectors: sparse.csr_matrix) -> None:
        """Append rows; their name ids continue after the existing ones. The rescoring rows
        are rebuilt over all names, so the cost grows with the index. The word postings no
        longer cover every name, so they are dropped until add_words builds them again."""
        self._check_kind(vectors)
        self.words = None
        if self.names_t is None:
            return self.build(vectors)
        if self.prunes:
            self._check_non_negative(vectors)
        super().add(vectors)
        self._build_rows(sparse.vstack([self.rows, vectors], format="csr")
                         if self.rows is not None else self.names_t.T)

    def adopt_postings(self, names_t: sparse.csr_matrix) -> None:
        """Take over postings (features x names) an exact SparseIndex built, and build the
        rescoring rows from them: how AutoSparseIndex switches to this search once names
        are added past its threshold, without encoding them again."""
        self.reset()
        self.names_t = names_t
        self._build_rows(names_t.T)

    def add_words(self, texts: Iterable[str], vectorizer) -> bool:
        """Build the word postings from the indexed names' texts (as encoded, one per row,
        in order) and the encoder's char_wb vectorizer, where the source reads words and
        the search prunes; a no-op otherwise (`texts` is not read). Returns whether word
        candidates are now used."""
        self.words = None
        if self.source.uses_words and self.prunes and self.rows is not None:
            # The word step reads the rows, not the postings: for a large build these go
            # while it runs and are transposed again from the rows after it (the same
            # arrays: the rows are the matrix they were built from), so that the step's
            # temporaries do not come on top of both copies of the vectors.
            again = getattr(self, "_rows_as_given", False) and \
                self.rows.shape[0] >= RELEASE_MEMORY_FROM
            if again:
                self.names_t = None
                release_memory(self.rows.shape[0])
            try:
                self.words = self.source.word_postings(texts, vectorizer, self.rows, self.name)
            finally:
                if again:
                    SparseIndex.build(self, self.rows)
        return self.words is not None

    def _build_rows(self, vectors) -> None:
        self._rows_as_given = self._rows_canonical = False
        if not self.prunes:
            self.rows = None
            return
        # The caller's float32 CSR rows are kept as they are (at 10M names a copy is 1.7 GB
        # at the build's peak); only rows that need sorting are copied first, so the
        # caller's matrix is never reordered.
        rows = sparse.csr_matrix(vectors, dtype=numpy.float32, copy=False)
        self._rows_canonical = rows.has_canonical_format
        if not rows.has_canonical_format:
            rows = rows.copy()
            rows.sum_duplicates()
            rows.sort_indices()
        self.rows = rows

    def _check_non_negative(self, vectors) -> None:
        data = sparse.csr_matrix(vectors).data
        if len(data) and data.min() < 0:
            raise BioLinkError(Errors.E221.format(index=self.name, value=float(data.min())))

    def search(self, queries: sparse.csr_matrix, k: int) -> SearchResult:
        """Top-k (scores, name ids) as SparseIndex.search returns them, with exact scores. But
        candidates come only from the source, so a true top name can be missed. Without
        pruning, or for negative/non-finite queries, this is the exact search."""
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
        depth = min(max(k, self.candidates_for(self.n_vectors)), self.n_vectors)
        found = self.source.find(self, queries, depth)
        scores = kernel.rescore_rows(queries.indptr, queries.indices, queries.data, rows,
                                     queries.shape[1], found, n_threads=self.n_threads)
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

    def settings_meta(self) -> dict:
        """The settings the saved meta records (coverage, candidates and the source's),
        whether or not the index is built."""
        growth = {} if self.candidates_growth == 1 else {
            "candidates_growth": self.candidates_growth, "growth_from": self.growth_from,
            "max_candidates": self.max_candidates}
        return {"coverage": self.coverage, "candidates": self.candidates, **growth,
                **self.source.settings_meta(self)}

    def to_state(self) -> Tuple[dict, dict]:
        """SparseIndex's state plus the settings, the rescoring rows and the word postings.
        The rows are saved so that loading memory-maps them instead of transposing the
        postings. The meta's type is the source's (pruned_sparse or word_sparse)."""
        meta, arrays = super().to_state()
        meta = dict(meta, type=self.source.state_type, **self.settings_meta())
        if self.rows is not None:
            arrays = dict(arrays, rows_data=self.rows.data, rows_indices=self.rows.indices,
                          rows_indptr=self.rows.indptr)
        if self.words is not None:
            arrays = dict(arrays, **self.words.to_arrays())
        return meta, arrays

    def from_state(self, meta: dict, arrays: dict) -> "PrunedSparseIndex":
        """Restore from to_state's output and return self. The settings come from the
        constructor (config), not the saved meta. Rows missing from the save are rebuilt
        when pruning; word postings are read where the source reads words."""
        super().from_state(meta, arrays)
        self.rows = None
        self.words = None
        if "rows_data" in arrays:
            self.rows = sparse.csr_matrix(
                (arrays["rows_data"], arrays["rows_indices"], arrays["rows_indptr"]),
                shape=(self.names_t.shape[1], self.names_t.shape[0]))
        elif self.prunes:
            self._build_rows(self.names_t.T)
        if self.source.uses_words:
            from .word_postings import WordPostings

            self.words = WordPostings.from_arrays(arrays, self.names_t.shape[1],
                                                  self.names_t.shape[0])
        if self.prunes and _sparse_kernels() is not None:
            # Loaded with the pipeline, not on its first batch, like SparseIndex's kernels.
            from . import block_kernels  # noqa: F401
            if self.words is not None:
                from . import word_kernels  # noqa: F401
        return self


def non_negative(vectors) -> bool:
    """Whether `vectors` (sparse) holds no negative value, as the pruning bounds assume."""
    data = sparse.csr_matrix(vectors).data
    return bool(not len(data) or data.min() >= 0)
