"""From nearest names to ranked concepts.

A concept scores as its best name. Searching k names is not enough to find k concepts
when a concept has many close synonyms, so each query's name depth grows until its k
best concepts are certain: once the top-m names hold k distinct concepts, no concept
outside them can score higher (all its names rank below the m-th).
"""
from typing import List, Optional, Tuple

import numpy
from scipy import sparse

from ..kb.dictionary import SOURCE_DATA, ConceptDictionary
from .sparse import NameIndex

Candidates = List[Tuple[int, float]]  # (concept index, score), best first

TIE_DECIMALS = 5
# names searched per wanted concept on the first search, at the least
MIN_NAMES_PER_CONCEPT = 4


def names_to_concepts(dictionary: ConceptDictionary, scores: numpy.ndarray,
                      name_ids: numpy.ndarray) -> Candidates:
    """One query's ranked names -> ranked distinct concepts (max over names).

    Ties (scores equal to TIE_DECIMALS places) go to the concept that corpus annotations
    gave that name most often (dictionary.name_concept_counts), then to the lower
    concept index.
    """
    return names_to_concepts_rows(dictionary, scores[None, :], name_ids[None, :])[0][0]


def names_to_concepts_rows(dictionary: ConceptDictionary, scores: numpy.ndarray,
                           name_ids: numpy.ndarray, limit: Optional[int] = None,
                           allowed: Optional[numpy.ndarray] = None,
                           corpus_margin: float = 0.0
                           ) -> Tuple[List[Candidates], numpy.ndarray]:
    """names_to_concepts for each row of (n_queries, depth) arrays, in one vectorized pass
    (per-row numpy calls cost more than the work on a few dozen names): each row's first
    `limit` (default all) candidates, and each row's number of distinct concepts.

    allowed: a bool per concept (a type filter); concepts it rules out are dropped here,
    before the limit, so the best allowed concepts fill the k places.
    corpus_margin: a (name, concept) pair that only corpus annotations gave
    (SOURCE_DATA alone) and that does not match the query exactly scores this much less,
    so a loose corpus alias ("diabetes" for "type 2 diabetes") must beat the dictionary's
    own names by the margin to outrank them."""
    n_rows = name_ids.shape[0]
    rows, cols = numpy.nonzero(name_ids >= 0)  # row-major: each row's names stay best first
    names, scores = name_ids[rows, cols], scores[rows, cols]
    indptr = dictionary.name_concepts_indptr
    starts = indptr[names]
    n_owners = indptr[names + 1] - starts
    if numpy.all(n_owners == 1):
        positions = starts
    else:
        # Each name's owners in order: starts + 0, 1, ... n_owners - 1.
        offsets = numpy.arange(int(n_owners.sum())) - numpy.repeat(
            numpy.cumsum(n_owners) - n_owners, n_owners)
        positions = numpy.repeat(starts, n_owners) + offsets
        rows, scores = numpy.repeat(rows, n_owners), numpy.repeat(scores, n_owners)
    concepts = dictionary.name_concepts[positions].astype(numpy.int64)
    annotated = dictionary.name_concept_counts[positions]
    if corpus_margin:
        corpus_only = dictionary.name_concept_sources[positions] == SOURCE_DATA
        # Exact up to float32 noise (the same rounding that makes ties below).
        inexact = numpy.round(scores.astype(numpy.float64), TIE_DECIMALS) < 1.0
        scores[corpus_only & inexact] -= corpus_margin  # scores is a copy (fancy indexing)
    if allowed is not None:
        keep = allowed[concepts]
        rows, scores, concepts, annotated = rows[keep], scores[keep], concepts[keep], annotated[keep]
    # Scores equal up to float32 summation noise are ties: "diabetes mellitus, insulin
    # dependent" and "insulin dependent diabetes mellitus" have the same n-grams.
    tied_scores = numpy.round(scores.astype(numpy.float64), TIE_DECIMALS)
    # lexsort is stable: equal keys keep name order (best exact score, then lower id).
    order = numpy.lexsort((concepts, -annotated, -tied_scores, rows))
    rows, concepts, scores = rows[order], concepts[order], scores[order]
    # In that order a concept's first appearance in its row is its best (score, count).
    _, first = numpy.unique(rows * (int(concepts.max(initial=0)) + 1) + concepts,
                            return_index=True)
    first.sort()
    rows, concepts, scores = rows[first], concepts[first].tolist(), scores[first].tolist()
    bounds = numpy.searchsorted(rows, numpy.arange(n_rows + 1))
    counts = numpy.diff(bounds)
    ends = bounds[1:] if limit is None else numpy.minimum(bounds[1:], bounds[:-1] + limit)
    candidates = [list(zip(concepts[lo:hi], scores[lo:hi]))
                  for lo, hi in zip(bounds[:-1].tolist(), ends.tolist())]
    return candidates, counts


def first_names_per_concept(n_names: int, n_concepts: int) -> int:
    """How many names per wanted concept search_concepts searches first: the mean names
    per concept, rounded up, and at least MIN_NAMES_PER_CONCEPT. A query whose first
    names hold fewer than k concepts searches again four times deeper, which costs more
    than a somewhat deeper first search (an exact index scores every name again, the
    hybrid's HNSW half explores four times as far): on a dictionary with many synonyms
    per concept a fixed 4 sent many queries round again (BENCHMARKS.md, Speed)."""
    if n_concepts <= 0:
        return MIN_NAMES_PER_CONCEPT
    return max(MIN_NAMES_PER_CONCEPT, -(-n_names // n_concepts))


def search_concepts(dictionary: ConceptDictionary, index: NameIndex, queries, k: int,
                    *, names_per_concept: Optional[int] = None, max_depth: int = 65536,
                    allowed: Optional[numpy.ndarray] = None,
                    corpus_margin: float = 0.0) -> List[Candidates]:
    """The k best concepts for each query row of `queries` (sparse or dense); with
    `allowed` (a bool per concept), the k best allowed ones: the search goes deeper
    until it has them. The first search is k * names_per_concept names deep; None takes
    the searched names per concept, rounded up, and at least MIN_NAMES_PER_CONCEPT.
    corpus_margin: see names_to_concepts_rows; the depth is grown on the unlowered
    scores, so a concept first met deeper could in principle outrank one lowered by the
    margin: the ranking is exact over the names searched (at least k * names_per_concept
    of them)."""
    n_queries = queries.shape[0]
    n_names = index.n_vectors
    results: List[Candidates] = [[] for _ in range(n_queries)]
    pending = numpy.arange(n_queries)
    if names_per_concept is None:
        names_per_concept = first_names_per_concept(n_names, dictionary.n_concepts)
    depth = min(max(k * names_per_concept, k), n_names)
    # An index that rescores a fixed number of candidates per query (PrunedSparseIndex)
    # searches as deep as that at the cost of any shallower search, and a shallower
    # result is the head of the deeper one: searched that deep once, the deeper rounds
    # below it are slices instead of the whole search again.
    free = getattr(index, "free_depth", None)
    free = free() if free is not None else 0
    searched = None  # (rows, scores, name ids) of the last search, deeper than asked
    while len(pending) and depth > 0:
        if searched is not None and depth <= searched[1].shape[1]:
            rows = numpy.searchsorted(searched[0], pending)
            scores = searched[1][rows, :depth]
            name_ids = searched[2][rows, :depth]
        else:
            scores, name_ids = index.search(queries[pending], max(depth, free))
            if free > depth:
                searched = (pending, scores, name_ids)
                scores, name_ids = scores[:, :depth], name_ids[:, :depth]
        unfinished = []
        per_row, counts = names_to_concepts_rows(dictionary, scores, name_ids, limit=k,
                                                 allowed=allowed, corpus_margin=corpus_margin)
        exhausted = (depth >= n_names or depth >= max_depth) | (name_ids[:, -1] < 0)
        for row, query in enumerate(pending.tolist()):
            if counts[row] >= k or exhausted[row]:
                results[query] = per_row[row]
            else:
                unfinished.append(query)
        pending = numpy.asarray(unfinished, dtype=numpy.int64)
        depth = min(depth * 4, n_names, max_depth)
    return results


def concept_vectors(dictionary: ConceptDictionary, name_vectors):
    """One L2-normalised row per concept: the mean of its names' rows (sparse or dense).

    Triplet-Search's "C" strategy: a concept is found through the centre of its names
    rather than through its nearest name.
    """
    counts = numpy.diff(dictionary.name_concepts_indptr)
    owners = numpy.repeat(numpy.arange(dictionary.n_names), counts)
    concepts = dictionary.name_concepts
    per_concept = numpy.bincount(concepts, minlength=dictionary.n_concepts).astype(numpy.float32)
    weights = 1.0 / per_concept[concepts]
    mean = sparse.csr_matrix((weights, (concepts, owners)),
                             shape=(dictionary.n_concepts, dictionary.n_names)) @ name_vectors
    if sparse.issparse(mean):
        norms = numpy.sqrt(numpy.asarray(mean.multiply(mean).sum(axis=1)).ravel())
        return sparse.csr_matrix(sparse.diags(1.0 / numpy.maximum(norms, 1e-12)) @ mean,
                                 dtype=numpy.float32)
    mean = numpy.asarray(mean, dtype=numpy.float32)
    return mean / numpy.maximum(numpy.linalg.norm(mean, axis=1, keepdims=True), 1e-12)


def search_concept_index(index: NameIndex, queries, k: int,
                         row_concepts: Optional[numpy.ndarray] = None,
                         allowed: Optional[numpy.ndarray] = None,
                         max_depth: int = 65536) -> List[Candidates]:
    """The k best concepts of an index built over concept_vectors: row id = concept, or
    row i = concept row_concepts[i] when only some concepts were indexed. With `allowed`
    (a bool per concept), the k best allowed ones, searching deeper until found."""
    n_queries = queries.shape[0]
    results: List[Candidates] = [[] for _ in range(n_queries)]
    pending = numpy.arange(n_queries)
    depth = min(k if allowed is None else 4 * k, index.n_vectors) or k
    while len(pending):
        scores, ids = index.search(queries[pending], depth)
        if row_concepts is not None:
            ids = numpy.where(ids >= 0, row_concepts[numpy.maximum(ids, 0)], -1)
        exhausted = depth >= index.n_vectors or depth >= max_depth
        unfinished = []
        for row, (id_row, score_row) in enumerate(zip(ids.tolist(), scores.tolist())):
            found = [(int(c), float(score)) for c, score in zip(id_row, score_row)
                     if c >= 0 and (allowed is None or allowed[c])]
            if len(found) >= k or exhausted or allowed is None or id_row[-1] < 0:
                results[int(pending[row])] = found[:k]
            else:
                unfinished.append(int(pending[row]))
        pending = numpy.asarray(unfinished, dtype=numpy.int64)
        depth = min(depth * 4, index.n_vectors, max_depth)
    return results
