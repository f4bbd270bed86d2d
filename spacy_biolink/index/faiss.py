"""Dense nearest-name search with faiss (flat, HNSW, IVF, IVF-PQ), and AutoFaissIndex:
exact below a size threshold, IVF-SQ8 above."""
import os
from typing import Tuple

import numpy
from scipy import sparse
from ..io.progress import progress_bar

from ..errors import BioLinkError, Errors
from ..io.util import read_arrays
from .sparse import NameIndex, SearchResult, _empty_result


FAISS_KINDS = ("flat", "hnsw", "ivf", "ivfpq")
_fork_hook_registered = False


def faiss_module():
    """faiss, imported on first use, with a fork hook: a forked child (nlp.pipe(n_process=2),
    `link --n-process`) runs its faiss searches on one thread. faiss searches in OpenMP
    regions, and GNU OpenMP is not fork-safe: a child whose parent had searched waited
    forever on its first multi-threaded region. Siblings take the other cores anyway
    (index/threads.py)."""
    global _fork_hook_registered
    import faiss

    if not _fork_hook_registered:
        os.register_at_fork(after_in_child=lambda: faiss.omp_set_num_threads(1))
        _fork_hook_registered = True
    return faiss


class FaissIndex(NameIndex):
    """Dense inner-product search with faiss: exact (flat) or approximate (hnsw, ivf,
    ivfpq for 10M+ names, where flat float32 vectors no longer fit in memory)."""

    vector_kind = "dense"

    def __init__(self, kind: str = "flat", hnsw_m: int = 32, ef_construction: int = 80,
                 ef_search: int = 64, nlist: int = 0, nprobe: int = 16, pq_m: int = 16,
                 add_batch_size: int = 65536):
        if kind not in FAISS_KINDS:
            raise BioLinkError(Errors.E204.format(kind=kind, kinds=", ".join(FAISS_KINDS)))
        self.kind = kind
        self.hnsw_m = hnsw_m
        self.ef_construction = ef_construction
        self.ef_search = ef_search
        self.nlist = nlist
        self.nprobe = nprobe
        self.pq_m = pq_m
        self.add_batch_size = add_batch_size
        self.index = None

    @property
    def n_vectors(self) -> int:
        """Number of names indexed (0 before build)."""
        return 0 if self.index is None else int(self.index.ntotal)

    @property
    def is_built(self) -> bool:
        """Whether build or from_state has run. Before that, search raises BioLinkError E207."""
        return self.index is not None

    def _new_index(self, vectors: numpy.ndarray):
        faiss = faiss_module()

        n, dim = vectors.shape
        metric = faiss.METRIC_INNER_PRODUCT
        if self.kind == "flat":
            return faiss.IndexFlatIP(dim)
        if self.kind == "hnsw":
            index = faiss.IndexHNSWFlat(dim, self.hnsw_m, metric)
            index.hnsw.efConstruction = self.ef_construction
            return index
        # IVF wants ~sqrt(n) lists and at least ~39 training points per list.
        nlist = self.nlist or max(1, min(int(4 * numpy.sqrt(n)), n // 39 or 1))
        quantizer = faiss.IndexFlatIP(dim)
        if self.kind == "ivf":
            index = faiss.IndexIVFFlat(quantizer, dim, nlist, metric)
        else:
            pq_m = self.pq_m if dim % self.pq_m == 0 else 1
            index = faiss.IndexIVFPQ(quantizer, dim, nlist, pq_m, 8, metric)
        index.train(vectors)
        return index

    def build(self, vectors: numpy.ndarray) -> None:
        """Create the faiss index over `vectors` (dense, one row per name, cast to float32)
        and add them, replacing what was there. IVF kinds train on these vectors, so pass
        the full set here rather than through add."""
        vectors = self._as_dense(vectors)
        self.index = self._new_index(vectors)
        self._add(vectors)

    def add(self, vectors: numpy.ndarray) -> None:
        """Append rows; their name ids continue after the existing ones. If nothing is built
        yet, this builds. IVF centroids are not retrained."""
        vectors = self._as_dense(vectors)
        if self.index is None:
            return self.build(vectors)
        self._add(vectors)

    def _add(self, vectors: numpy.ndarray) -> None:
        batches = range(0, len(vectors), self.add_batch_size)
        for start in progress_bar(batches, desc="faiss index", unit="batch", disable=len(batches) < 4):
            self.index.add(vectors[start:start + self.add_batch_size])

    def search(self, queries: numpy.ndarray, k: int) -> SearchResult:
        """Top-k (scores, name ids) by inner product, best first, ties to the lower id, padded
        with -1. Only flat is exact: hnsw searches with efSearch = max(ef_search, k),
        ivf and ivfpq with nprobe."""
        if self.index is None:
            raise BioLinkError(Errors.E207.format(index="faiss"))
        queries = self._as_dense(queries)
        if self.kind == "hnsw":
            self.index.hnsw.efSearch = max(self.ef_search, k)
        elif self.kind in ("ivf", "ivfpq"):
            self.index.nprobe = self.nprobe
        take = min(k, self.n_vectors)
        scores, ids = _empty_result(len(queries), k)
        if take == 0 or len(queries) == 0:
            return scores, ids
        found_scores, found_ids = self.index.search(queries, take)
        # faiss orders ties arbitrarily; order them by id so results are reproducible.
        order = numpy.lexsort((found_ids, -found_scores), axis=-1)
        scores[:, :take] = numpy.take_along_axis(found_scores, order, axis=1)
        ids[:, :take] = numpy.take_along_axis(found_ids, order, axis=1)
        scores[ids < 0] = 0.0
        return scores, ids

    def _as_dense(self, vectors) -> numpy.ndarray:
        if sparse.issparse(vectors):
            raise BioLinkError(Errors.E206.format(index="FaissIndex", needs="dense",
                                                  got="sparse"))
        return numpy.ascontiguousarray(vectors, dtype=numpy.float32)

    def to_state(self) -> Tuple[dict, dict]:
        """(meta, arrays) holding the index in faiss's own serialization (no pickle).
        Raises BioLinkError E207 if the index is not built."""
        faiss = faiss_module()

        if self.index is None:
            raise BioLinkError(Errors.E207.format(index="faiss"))
        return {"type": "faiss", "kind": self.kind}, {"faiss": faiss.serialize_index(self.index)}

    def from_state(self, meta: dict, arrays: dict) -> "FaissIndex":
        """Load the serialized faiss index into this index and return it. `kind` and the
        search settings come from the constructor and are not read back, so they must match."""
        faiss = faiss_module()

        self.index = faiss.deserialize_index(numpy.asarray(arrays["faiss"], dtype=numpy.uint8))
        return self


# AutoFaissIndex switches from exact search to IVF-SQ8 at this many names: a flat index
# over 1M 100-d names is 400 MB and scans all of them per query.
AUTO_FAISS_MIN_NAMES = 1_000_000


class AutoFaissIndex(FaissIndex):
    """Dense search that stays exact (flat) below `min_names` names and from there is an
    inverted file over 8-bit scalar-quantized vectors (faiss IndexIVFScalarQuantizer,
    "IVF-SQ8"): a quarter of a flat index's memory (10M 100-d names: 1 GB, not 4 GB), and
    each query scans only the `nprobe` of `nlist` lists nearest to it.

    nlist = 0 takes sqrt(names); the coarse k-means trains on `train_size` names drawn
    with a fixed seed (0: 64 per list), not on all of them, which at 10M names would
    take longer than the rest of the build. The choice is made at build and saved, so
    a loaded pipeline searches as it was built; nprobe comes from the config.
    """

    def __init__(self, min_names: int = AUTO_FAISS_MIN_NAMES, nlist: int = 0, nprobe: int = 32,
                 train_size: int = 0, add_batch_size: int = 65536):
        if min_names < 0 or nlist < 0 or nprobe < 1 or train_size < 0:
            raise BioLinkError(Errors.E180.format(min_names=min_names, nlist=nlist,
                                                  nprobe=nprobe, train_size=train_size))
        super().__init__("flat", nlist=nlist, nprobe=nprobe, add_batch_size=add_batch_size)
        self.min_names = int(min_names)
        self.train_size = int(train_size)

    def _new_index(self, vectors: numpy.ndarray):
        faiss = faiss_module()

        n, dim = vectors.shape
        if n < self.min_names:
            self.kind = "flat"
            return faiss.IndexFlatIP(dim)
        self.kind = "ivfsq"
        nlist = self.nlist or max(1, int(numpy.sqrt(n)))
        index = faiss.IndexIVFScalarQuantizer(faiss.IndexFlatIP(dim), dim, nlist,
                                              faiss.ScalarQuantizer.QT_8bit,
                                              faiss.METRIC_INNER_PRODUCT)
        size = min(n, self.train_size or 64 * nlist)
        sample = numpy.sort(numpy.random.default_rng(0).choice(n, size=size, replace=False))
        index.train(numpy.ascontiguousarray(vectors[sample]))
        return index

    def search(self, queries: numpy.ndarray, k: int) -> SearchResult:
        """As FaissIndex.search: exact below min_names names, IVF-SQ8 with nprobe above."""
        if self.index is not None and self.kind == "ivfsq":
            self.index.nprobe = self.nprobe
        return super().search(queries, k)

    def to_state(self) -> Tuple[dict, dict]:
        """FaissIndex's state, with the kind chosen at build (flat or ivfsq)."""
        meta, arrays = super().to_state()
        return dict(meta, auto=True, min_names=self.min_names), arrays

    def from_disk(self, path, exclude=tuple()) -> "AutoFaissIndex":
        """As FaissIndex.from_disk, reading the serialized index through a memory map (one
        copy in memory, faiss's own, instead of two)."""
        return self.from_state(*read_arrays(path, mmap=("faiss",)))

    def from_state(self, meta: dict, arrays: dict) -> "AutoFaissIndex":
        """Load the serialized index with the kind it was built as."""
        super().from_state(meta, arrays)
        self.kind = meta.get("kind", "flat")
        return self
