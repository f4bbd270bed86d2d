"""Nearest-name search: NameIndex, what every index offers, and SparseIndex, the exact
sparse top-k (scipy, numba kernels) that the pruned and word-candidate searches
(pruned.py, word_index.py) refine.

Indexes hold one vector per dictionary NAME and answer `search(queries, k)` with
`(scores, name_ids)` arrays of shape (n_queries, k), best first, ties broken by the lower
name id, padded with id -1. The dictionary, not the index, knows what a name id means.
"""
import warnings
from typing import Any, Optional, Tuple

import numpy
import srsly
from scipy import sparse

from ..errors import BioLinkError, Errors
from ..io.util import read_arrays, write_arrays
from .threads import search_threads, valid_thread_count

SearchResult = Tuple[numpy.ndarray, numpy.ndarray]


def _empty_result(n: int, k: int) -> SearchResult:
    return numpy.zeros((n, k), dtype=numpy.float32), numpy.full((n, k), -1, dtype=numpy.int64)


def top_k(values: numpy.ndarray, ids: numpy.ndarray, k: int) -> SearchResult:
    """The k largest values (and their ids), best first, ties to the lower id.

    The result depends on this row alone, so a mention gets the same candidates
    whatever batch it arrives in.
    """
    if len(values) > k:
        part = numpy.argpartition(-values, k - 1)[:k]
        kth = values[part].min()
        # argpartition picks arbitrarily among values equal to the k-th: where such a
        # tie straddles the cut, take them all and let the id decide below.
        if numpy.count_nonzero(values >= kth) > k:
            part = numpy.flatnonzero(values >= kth)
        values, ids = values[part], ids[part]
    order = numpy.lexsort((ids, -values))[:k]
    return values[order], ids[order]


def _sparse_kernels():
    """The numba kernel module, imported when a saved index is loaded (from_state) or on
    the first search of one built in this process; None when numba cannot be imported,
    and SparseIndex falls back to scipy."""
    global _KERNELS
    if _KERNELS is None:
        try:
            from . import kernels as sparse_kernels
        except ImportError as err:
            warnings.warn(f"spacy_biolink: numba unavailable ({err}); SparseIndex.search "
                          "falls back to the slower scipy product.", RuntimeWarning)
            sparse_kernels = False
        _KERNELS = sparse_kernels
    return _KERNELS or None


_KERNELS = None


class NameIndex:
    """What every index offers; subclasses define build/add/search and to/from_state.

    An index does not know the registered name it was built under: registry.py's builder
    functions (the versioned names) put the settings together, and `name`, where an index
    takes one, is only what its error messages call it."""

    vector_kind = ""
    # Saved arrays that from_disk memory-maps (none by default).
    mmap_arrays: Tuple[str, ...] = ()

    def to_disk(self, path, exclude=tuple()) -> None:
        """Save to_state's arrays as .npy files and meta.json in the directory `path` (no
        pickle). `exclude` exists for spaCy's serialization API and is ignored."""
        meta, arrays = self.to_state()
        write_arrays(path, arrays, meta)

    def from_disk(self, path, exclude=tuple()) -> "NameIndex":
        """Load what to_disk saved into this index and return it. Settings that are not
        saved come from this instance's constructor (the config). The arrays named in
        `mmap_arrays` are memory-mapped: spacy.load reads none of them, and processes that
        load one pipeline share their pages."""
        return self.from_state(*read_arrays(path, mmap=self.mmap_arrays))

    def to_bytes(self, exclude=tuple()) -> bytes:
        """to_state as msgpack bytes, for spaCy's to_bytes."""
        meta, arrays = self.to_state()
        return srsly.msgpack_dumps({"meta": meta, "arrays": arrays})

    def from_bytes(self, data: bytes, exclude=tuple()) -> "NameIndex":
        """Inverse of to_bytes: load into this index and return it."""
        msg = srsly.msgpack_loads(data)
        return self.from_state(msg["meta"], msg["arrays"])


# Arrays of sparse indexes that from_disk memory-maps (the big ones: one entry per posting).
MMAP_ARRAYS = ("data", "indices", "rows_data", "rows_indices", "rows_indptr", "words_data",
               "words_indices", "words_indptr")


def require_sparse(vectors, name: str) -> None:
    """Raise BioLinkError E206 (naming the index `name`) unless `vectors` is a scipy sparse
    matrix."""
    if not sparse.issparse(vectors):
        raise BioLinkError(Errors.E206.format(index=name, needs="sparse",
                                              got=type(vectors).__name__))


class SparseIndex(NameIndex):
    """Exact inner-product search over L2-normalised sparse rows (TF-IDF).

    `names_t` (features x names) is an inverted index. A compiled kernel
    (`sparse_kernels`, numba) adds each query n-gram's postings into a dense buffer and
    selects the top k from it; its scores are bit-identical to the scipy product
    `queries @ names_t`, which remains the fallback (numba missing, names_t not float32,
    non-finite values) and is computed chunk_size queries at a time.

    `n_threads` (not saved; 1 by default, 0: one per core, see threads.py) splits large
    batches over threads: the kernel releases the GIL, so concurrent `search` calls from
    several threads also run in parallel. `name` is what error messages call the index.
    """

    vector_kind = "sparse"
    mmap_arrays = MMAP_ARRAYS

    def __init__(self, chunk_size: int = 256, *, n_threads: int = 1,
                 name: str = "SparseIndex"):
        self.name = name
        self.chunk_size = chunk_size
        self.n_threads = n_threads
        self.names_t: Optional[sparse.csr_matrix] = None  # features x names
        self._postings_cache = None

    @property
    def n_threads(self) -> int:
        """Threads a batch of queries is split over now (threads.search_threads of the
        setting). Setting it to anything but a whole number >= 0 raises BioLinkError E223."""
        return search_threads(self._n_threads)

    @n_threads.setter
    def n_threads(self, value) -> None:
        """Set the threads setting (0: one per core, one in a child process)."""
        if not valid_thread_count(value):
            raise BioLinkError(Errors.E223.format(index=self.name, value=value))
        self._n_threads = value

    @property
    def n_vectors(self) -> int:
        """Number of names indexed (0 before build)."""
        return 0 if self.names_t is None else self.names_t.shape[1]

    @property
    def is_built(self) -> bool:
        """Whether build or from_state has run. Before that, search raises BioLinkError E207."""
        return self.names_t is not None

    def build(self, vectors: sparse.csr_matrix) -> None:
        """Index `vectors` (sparse, one row per name, cast to float32), replacing what was
        there. They are stored transposed (features x names) as postings."""
        self._check_kind(vectors)
        self.names_t = sparse.csr_matrix(vectors, dtype=numpy.float32).T.tocsr()

    def add(self, vectors: sparse.csr_matrix) -> None:
        """Append rows; their name ids continue after the existing ones. Each call copies
        the whole postings matrix, so one build is cheaper than many small adds."""
        self._check_kind(vectors)
        if self.names_t is None:
            return self.build(vectors)
        added = sparse.csr_matrix(vectors, dtype=numpy.float32).T
        self.names_t = sparse.hstack([self.names_t, added], format="csr")

    def search(self, queries: sparse.csr_matrix, k: int) -> SearchResult:
        """Exact top-k (scores, name ids) by inner product, as the module docstring says.
        `queries` must be sparse and as wide as the indexed rows (otherwise BioLinkError E205)."""
        queries = self._check_queries(queries)
        postings = self._postings()
        if postings is None or not numpy.isfinite(queries.data).all():
            return self._search_scipy(queries, k)
        return _sparse_kernels().search_rows(
            queries.indptr, queries.indices, queries.data, postings, self.names_t.shape[1], k,
            n_threads=self.n_threads)

    def _search_scipy(self, queries: sparse.csr_matrix, k: int) -> SearchResult:
        scores, ids = _empty_result(queries.shape[0], k)
        if k == 0:
            return scores, ids
        for start in range(0, queries.shape[0], self.chunk_size):
            # Rows of the product hold only names sharing an n-gram with the query
            # (a score of 0 is no candidate at all), ~1/4 of names for char 3-grams.
            block = queries[start:start + self.chunk_size] @ self.names_t
            for row in range(block.shape[0]):
                lo, hi = block.indptr[row], block.indptr[row + 1]
                found, found_ids = top_k(block.data[lo:hi], block.indices[lo:hi], k)
                scores[start + row, :len(found)] = found
                ids[start + row, :len(found)] = found_ids
        return scores, ids

    def _postings(self):
        """names_t as the kernel takes it, or None where the kernel cannot reproduce the
        scipy product (not float32, non-finite values). Checked and converted once per
        names_t object (copies only where a dtype differs, i.e. the small indptr)."""
        m = self.names_t
        cached = getattr(self, "_postings_cache", None)
        if cached is None or cached[0] is not m:
            postings = None
            kernel = _sparse_kernels()
            if (kernel is not None and m.dtype == numpy.float32 and m.shape[1] < 2 ** 31
                    and numpy.isfinite(m.data).all()):
                postings = kernel.prepare_postings(m.indptr, m.indices, m.data, m.shape[1])
            cached = self._postings_cache = (m, postings)
        return cached[1]

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_postings_cache": None}

    def _check_queries(self, queries) -> sparse.csr_matrix:
        if self.names_t is None:
            raise BioLinkError(Errors.E207.format(index="sparse"))
        self._check_kind(queries)
        queries = sparse.csr_matrix(queries, dtype=numpy.float32)
        if queries.shape[1] != self.names_t.shape[0]:
            raise BioLinkError(Errors.E205.format(index="sparse", got=queries.shape[1],
                                                  expected=self.names_t.shape[0]))
        return queries

    def _check_kind(self, vectors) -> None:
        require_sparse(vectors, "SparseIndex")

    def reset(self) -> None:
        """Forget the indexed rows (is_built becomes False); the settings stay."""
        self.names_t = None

    def to_state(self) -> Tuple[dict, dict]:
        """(meta, arrays) of the postings matrix, not copied. Raises BioLinkError E207
        if the index is not built."""
        if self.names_t is None:
            raise BioLinkError(Errors.E207.format(index="sparse"))
        m = self.names_t
        return ({"type": "sparse", "shape": list(m.shape)},
                {"data": m.data, "indices": m.indices, "indptr": m.indptr})

    def from_state(self, meta: dict, arrays: dict) -> "SparseIndex":
        """Load the postings from to_state's output (the arrays may be memory-mapped) into
        this index and return it."""
        self.names_t = sparse.csr_matrix(
            (arrays["data"], arrays["indices"], arrays["indptr"]), shape=tuple(meta["shape"]))
        # The kernels (numba's start-up and its cached compiled code) are loaded with the
        # pipeline, so that its first batch runs as fast as the next (issue 58).
        _sparse_kernels()
        return self


def check_index(index: Any, *, where: str = "bio_linker index") -> None:
    """Refuse an index object that is not one of this package's (SparseIndex, FaissIndex,
    HybridIndex): the index block is a registered function too, and its object reads the
    saved index. Ours read .npy files without pickle and msgpack."""
    if not isinstance(index, NameIndex) \
            or not type(index).__module__.startswith("spacy_biolink."):
        raise BioLinkError(Errors.E122.format(where=where, kind=type(index).__module__ + "."
                                              + type(index).__qualname__))
