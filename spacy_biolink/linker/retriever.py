"""The retriever: a dictionary, an encoder and an index, giving the k best concepts of
encoded query texts. What happens to a mention before the search (abbreviations,
composites) and to its candidates after it (sieve, prior, type filter, verifier, reranker,
NIL rule) are the linker's stages (stages/), not the retriever's.
"""
from itertools import compress
from typing import Iterator, Optional, Sequence, Tuple

import numpy
from scipy import sparse
from thinc.api import Model

from ..encoders.tfidf import additive_vectorizer
from ..errors import BioLinkError, Errors
from ..index import NameIndex
from ..index.concepts import concept_vectors, search_concept_index, search_concepts
from ..io.progress import progress_bar
from ..io.util import release_memory
from ..kb.dictionary import SOURCE_DATA, SOURCE_ONTOLOGY, ConceptDictionary
from ..text.normalize import MentionNormalizer

# index_sources: which names the main index holds (Triplet-Search's O, D and OD).
INDEX_SOURCES = {"O": SOURCE_ONTOLOGY, "D": SOURCE_DATA, "OD": SOURCE_ONTOLOGY | SOURCE_DATA}


# Sparse rows are gathered into SparseRows from this many names on; below it, the batches
# are stacked at the end, which is the same matrix and costs little memory.
SPARSE_ROWS_FROM = 1_000_000


class SparseRows:
    """CSR rows appended batch by batch into arrays grown in place (ndarray.resize, a
    realloc: large buffers are moved by remapping their pages, not copied), for as many
    rows as `n_rows`. to_csr gives what sparse.vstack of the batches gives, the same
    arrays and dtypes, without holding the batches and their stack at once."""

    def __init__(self, n_rows: int):
        self.indptr = numpy.zeros(n_rows + 1, dtype=numpy.int64)
        self.n_rows = 0
        self.nnz = 0
        self.n_cols = None
        self.data = self.indices = None

    def append(self, part) -> None:
        """Append the rows of a CSR matrix (same width and dtypes as the first)."""
        part = sparse.csr_matrix(part, copy=False)
        if self.data is None:
            self.n_cols = part.shape[1]
            self.data = numpy.empty(0, dtype=part.dtype)
            self.indices = numpy.empty(0, dtype=part.indices.dtype)
        if part.shape[1] != self.n_cols or part.dtype != self.data.dtype:
            raise ValueError(f"SparseRows: a batch of {part.shape[1]} columns, "
                             f"{part.dtype}, after {self.n_cols}, {self.data.dtype}")
        end = self.nnz + part.nnz
        if end > len(self.data):
            size = max(end, len(self.data) + len(self.data) // 2)
            self.data.resize(size, refcheck=False)
            self.indices.resize(size, refcheck=False)
        self.data[self.nnz:end] = part.data
        self.indices[self.nnz:end] = part.indices
        n = part.shape[0]
        self.indptr[self.n_rows + 1:self.n_rows + n + 1] = part.indptr[1:] + self.nnz
        self.n_rows += n
        self.nnz = end

    def to_csr(self) -> sparse.csr_matrix:
        """The rows as one CSR matrix, with the index dtype sparse.vstack would choose; the
        buffers are handed over (trimmed in place), so call it once."""
        data, indices = self.data, self.indices
        data.resize(self.nnz, refcheck=False)
        indices.resize(self.nnz, refcheck=False)
        big = max(self.nnz, self.n_cols) > numpy.iinfo(numpy.int32).max
        index_dtype = numpy.int64 if big else numpy.int32
        self.data = self.indices = None
        return sparse.csr_matrix(
            (data, indices.astype(index_dtype, copy=False),
             self.indptr[:self.n_rows + 1].astype(index_dtype, copy=False)),
            shape=(self.n_rows, self.n_cols), copy=False)


class Retriever:
    """Encodes texts (normalized as the names were) and searches the index over the names
    `index_sources` selects, one row per name (index_level "name", Triplet-Search's T) or
    per concept, the mean of its names' vectors ("concept", its C)."""

    def __init__(self, encoder: Model, index: NameIndex, normalizer: MentionNormalizer, *,
                 name: str = "bio_linker", index_level: str = "name",
                 index_sources: str = "OD", corpus_margin: float = 0.0):
        self.name = name
        self.model = encoder
        self.index = index
        self.normalizer = normalizer
        self.index_level = index_level
        self.index_sources = index_sources
        # A (name, concept) pair only corpus annotations gave that does not match the
        # query exactly scores this much less (index/concepts.py).
        self.corpus_margin = corpus_margin
        self.dictionary: Optional[ConceptDictionary] = None
        # What the index rows mean: the dictionary cut down to index_sources, and for
        # index_level "concept" with only some concepts reachable, the concept of each row.
        self.searched: Optional[ConceptDictionary] = None
        self.concept_rows: Optional[numpy.ndarray] = None

    def encode(self, texts: Sequence[str], *, batch_size: int = 16384, progress: bool = False):
        """Encode texts in batches (sparse rows or a dense float32 array)."""
        batches = range(0, len(texts), batch_size)
        if not batches:
            return self.model.predict([])
        parts, out, rows = [], None, None
        for i in progress_bar(batches, desc=f"{self.name}: encoding names", unit="batch",
                              disable=not progress or len(batches) < 2):
            part = self.model.predict(list(texts[i:i + batch_size]))
            if out is None and not sparse.issparse(part):
                # Dense rows go straight into one array: a list of parts concatenated at
                # the end would hold 10M names' vectors twice.
                out = numpy.empty((len(texts),) + part.shape[1:], dtype=part.dtype)
            if out is not None:
                out[i:i + len(part)] = part
            elif len(texts) >= SPARSE_ROWS_FROM:
                # Sparse rows, likewise, into arrays grown in place: the batches stacked
                # at the end would be held beside their stack.
                if rows is None:
                    rows = SparseRows(len(texts))
                rows.append(part)
            else:
                parts.append(part)
        if out is not None:
            return out
        return rows.to_csr() if rows is not None else sparse.vstack(parts, format="csr")

    def encode_names(self, names: Sequence[str], *, progress: bool = False):
        """Encode dictionary names, normalized as names are."""
        return self.encode([self.normalizer.name(n) for n in names], progress=progress)

    def plan(self, dictionary: ConceptDictionary, where="bio_linker"
             ) -> Tuple[ConceptDictionary, numpy.ndarray, Optional[numpy.ndarray]]:
        """The dictionary cut down to index_sources, its names' positions in `dictionary`,
        and (index_level "concept", some concepts unreachable) the concept of each row."""
        sources = self.index_sources
        searched, rows = dictionary.select_names(INDEX_SOURCES[sources])
        if searched.n_names == 0:
            n_data = int(numpy.count_nonzero(dictionary.name_concept_sources & SOURCE_DATA))
            raise BioLinkError(Errors.E108.format(sources=sources, where=where,
                                                  n_names=dictionary.n_names, n_data=n_data))
        concept_rows = None
        if searched is not dictionary and self.index_level == "concept":
            concept_rows = numpy.flatnonzero(numpy.bincount(searched.name_concepts,
                                                            minlength=dictionary.n_concepts))
        return searched, rows, concept_rows

    def build(self, dictionary: ConceptDictionary, name_vectors, *,
              folded: Optional[Sequence[str]] = None) -> None:
        """Build the index over the names index_sources selects (or their concepts' mean
        vectors), given every name's vectors; `adopt` then takes the dictionary.
        `folded`: every name of `dictionary` as normalized for encoding, which the word
        postings read (normalized again where not given)."""
        searched, rows, concept_rows = self.plan(dictionary)
        vectors = name_vectors if len(rows) == dictionary.n_names else name_vectors[rows]
        if self.index_level == "concept":
            vectors = concept_vectors(searched, vectors)
            if concept_rows is not None:
                vectors = vectors[concept_rows]
        self.index.build(vectors)
        if hasattr(self.index, "add_words") and self.index_level == "name":
            vectorizer = additive_vectorizer(self.model)
            if vectorizer is not None:
                self.index.add_words(self._word_texts(searched, rows, folded), vectorizer)
                release_memory(len(rows))

    def _word_texts(self, searched: ConceptDictionary, rows: numpy.ndarray,
                    folded: Optional[Sequence[str]]) -> Iterator[str]:
        """The searched names as encoded, one at a time: from `folded` (every name of the
        dictionary; `rows` ascending, as plan gives them), or normalized again."""
        if folded is None:
            return (self.normalizer.name(name) for name in searched.names)
        if len(rows) == len(folded):
            return iter(folded)
        kept = numpy.zeros(len(folded), dtype=bool)
        kept[rows] = True
        return compress(folded, kept)

    def adopt(self, dictionary: ConceptDictionary, *, where) -> None:
        """Take `dictionary` with the index as it stands, checking that they agree."""
        searched, _, concept_rows = self.plan(dictionary, where=where)
        level = self.index_level
        if concept_rows is not None:
            expected = len(concept_rows)
        else:
            expected = dictionary.n_concepts if level == "concept" else searched.n_names
        if self.index.n_vectors != expected:
            raise BioLinkError(Errors.E104.format(
                path=where, reason=f"the index holds {self.index.n_vectors} vectors but "
                                   f"index_sources {self.index_sources!r} of the "
                                   f"dictionary gives {expected} {level}s"))
        self.dictionary = dictionary
        self.searched, self.concept_rows = searched, concept_rows

    def search(self, vectors, k: int, allowed: Optional[numpy.ndarray] = None):
        """The k best concepts of each row of `vectors`, among those `allowed` marks."""
        if self.index_level == "concept":
            return search_concept_index(self.index, vectors, k, self.concept_rows,
                                        allowed=allowed)
        return search_concepts(self.searched, self.index, vectors, k, allowed=allowed,
                               corpus_margin=self.corpus_margin)
