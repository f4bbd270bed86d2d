"""AutoSparseIndex: an exact search below a size threshold and an approximate one from
there on, as a composition of the two rather than a subclass of either.

Below `min_names` names the exact search (SparseIndex) is fast enough (5,000 mentions/s
at 76k names) and stays exact; from there on the approximate one (a PrunedSparseIndex,
with n-gram or word candidates) keeps the search fast as the dictionary grows. Rows with
negative values (BioSyn's [dense | sparse]) are always searched exactly, as the pruning
bounds assume non-negative rows. The choice is made when the index is built and saved
with it, so a pipeline links the same way after spacy.load.
"""
from typing import Iterable, Optional, Tuple

from scipy import sparse

from .pruned import PrunedSparseIndex, non_negative
from .sparse import MMAP_ARRAYS, NameIndex, SearchResult, SparseIndex, require_sparse

# The bio_linker default switches from exact to approximate search at this many names.
AUTO_MIN_NAMES = 500_000

# The saved meta's type, whichever search was chosen (the choice is its "pruning" key).
STATE_TYPE = "auto_sparse"


class AutoSparseIndex(NameIndex):
    """`exact` for dictionaries under `min_names` names, `approximate` from there on (for
    non-negative rows); only the chosen one holds the postings. See the module docstring."""

    vector_kind = "sparse"
    mmap_arrays = MMAP_ARRAYS

    def __init__(self, exact: SparseIndex, approximate: PrunedSparseIndex,
                 min_names: int = AUTO_MIN_NAMES):
        self.exact = exact
        self.approximate = approximate
        self.min_names = int(min_names)
        self.pruning = False

    @property
    def active(self) -> SparseIndex:
        """The search in use: approximate once chosen, exact otherwise."""
        return self.approximate if self.pruning else self.exact

    @property
    def n_vectors(self) -> int:
        """Number of names indexed (0 before build)."""
        return self.active.n_vectors

    @property
    def is_built(self) -> bool:
        """Whether build or from_state has run. Before that, search raises BioLinkError E207."""
        return self.active.is_built

    @property
    def prunes(self) -> bool:
        """Whether search prunes: the approximate search was chosen and it prunes."""
        return self.pruning and self.approximate.prunes

    @property
    def names_t(self) -> Optional[sparse.csr_matrix]:
        """The postings (features x names) of the search in use."""
        return self.active.names_t

    @property
    def rows(self) -> Optional[sparse.csr_matrix]:
        """The approximate search's rescoring rows; None while the search is exact."""
        return self.approximate.rows if self.pruning else None

    @property
    def words(self):
        """The approximate search's word postings; None while the search is exact."""
        return self.approximate.words if self.pruning else None

    @property
    def coverage(self) -> float:
        """The approximate search's coverage."""
        return self.approximate.coverage

    @property
    def candidates(self) -> int:
        """The names the approximate search rescores per query."""
        return self.approximate.candidates

    @property
    def word_threshold(self) -> float:
        """The approximate search's word_threshold (AttributeError if it reads no words)."""
        return self.approximate.word_threshold

    @property
    def n_threads(self) -> int:
        """Threads a batch of queries is split over now, by the search in use."""
        return self.active.n_threads

    @n_threads.setter
    def n_threads(self, value) -> None:
        """Set both searches' threads setting, so a switch between them keeps it."""
        self.exact.n_threads = value
        self.approximate.n_threads = value

    def build(self, vectors: sparse.csr_matrix) -> None:
        """Choose exact or approximate search from these vectors (at least min_names rows,
        all non-negative), then build that one, replacing what either held."""
        require_sparse(vectors, "SparseIndex")
        self.pruning = bool(vectors.shape[0] >= self.min_names and non_negative(vectors))
        self.exact.reset()
        self.approximate.reset()
        self.active.build(vectors)

    def add(self, vectors: sparse.csr_matrix) -> None:
        """Append rows. Switches to the approximate search once the total reaches min_names
        and every row is non-negative; it never switches back."""
        require_sparse(vectors, "SparseIndex")
        if not self.is_built:
            return self.build(vectors)
        if not self.pruning and self.n_vectors + vectors.shape[0] >= self.min_names and \
                non_negative(vectors) and non_negative(self.exact.names_t):
            self.exact.add(vectors)
            self.approximate.adopt_postings(self.exact.names_t)
            self.exact.reset()
            self.pruning = True
            return
        self.active.add(vectors)

    def add_words(self, texts: Iterable[str], vectorizer) -> bool:
        """The approximate search's add_words, once it is chosen (`texts` is not read
        otherwise). Returns whether word candidates are now used."""
        if not self.pruning:
            return False
        return self.approximate.add_words(texts, vectorizer)

    def search(self, queries: sparse.csr_matrix, k: int) -> SearchResult:
        """The search in use's top-k (scores, name ids); see SparseIndex.search."""
        return self.active.search(queries, k)

    def free_depth(self) -> int:
        """The search in use's free_depth (PrunedSparseIndex.free_depth; 0 if exact)."""
        free = getattr(self.active, "free_depth", None)
        return free() if free is not None else 0

    def to_state(self) -> Tuple[dict, dict]:
        """The state of the search in use, with both searches' settings, min_names and the
        exact/approximate choice, so that a loaded pipeline searches the way it did when
        saved. Raises BioLinkError E207 if the index is not built."""
        meta, arrays = self.active.to_state()
        meta = dict(meta, **self.approximate.settings_meta())
        return dict(meta, type=STATE_TYPE, min_names=self.min_names,
                    pruning=self.pruning), arrays

    def from_state(self, meta: dict, arrays: dict) -> "AutoSparseIndex":
        """Restore from to_state's output (or an exact or pruned index's), taking the
        exact/approximate choice from the save instead of deciding it again: a save
        without a "pruning" key searched exactly."""
        self.pruning = bool(meta.get("pruning", False))
        self.exact.reset()
        self.approximate.reset()
        self.active.from_state(meta, arrays)
        return self
