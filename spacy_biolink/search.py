"""From nearest names to ranked concepts.

A concept scores as its best name. Searching k names is not enough to find k concepts
when a concept has many close synonyms, so each query's name depth grows until its k
best concepts are certain: once the top-m names hold k distinct concepts, no concept
outside them can score higher (all its names rank below the m-th).
"""
from typing import List, Tuple

import numpy

from .dictionary import ConceptDictionary
from .index import NameIndex

Candidates = List[Tuple[int, float]]  # (concept index, score), best first

TIE_DECIMALS = 5


def names_to_concepts(dictionary: ConceptDictionary, scores: numpy.ndarray,
                      name_ids: numpy.ndarray) -> Candidates:
    """One query's ranked names -> ranked distinct concepts (max over names).

    Ties (scores equal to TIE_DECIMALS places) go to the concept that corpus annotations
    gave that name most often (dictionary.name_concept_counts), then to the lower
    concept index.
    """
    valid = name_ids >= 0
    name_ids, scores = name_ids[valid], scores[valid]
    if len(name_ids) == 0:
        return []
    indptr = dictionary.name_concepts_indptr
    starts = indptr[name_ids]
    n_owners = indptr[name_ids + 1] - starts
    if numpy.all(n_owners == 1):
        positions = starts
        concept_scores = scores
    else:
        positions = numpy.concatenate([numpy.arange(s, s + n) for s, n in zip(starts, n_owners)])
        concept_scores = numpy.repeat(scores, n_owners)
    concepts = dictionary.name_concepts[positions]
    annotated = dictionary.name_concept_counts[positions]
    # Scores equal up to float32 summation noise are ties: "diabetes mellitus, insulin
    # dependent" and "insulin dependent diabetes mellitus" have the same n-grams.
    tied_scores = numpy.round(concept_scores.astype(numpy.float64), TIE_DECIMALS)
    order = numpy.lexsort((concepts, -annotated, -tied_scores))
    concepts, concept_scores = concepts[order], concept_scores[order]
    # In that order a concept's first appearance is its best (score, count).
    _, first = numpy.unique(concepts, return_index=True)
    first.sort()
    return [(int(c), float(s)) for c, s in zip(concepts[first], concept_scores[first])]


def search_concepts(dictionary: ConceptDictionary, index: NameIndex, queries, k: int,
                    *, names_per_concept: int = 4, max_depth: int = 65536) -> List[Candidates]:
    """The k best concepts for each query row of `queries` (sparse or dense)."""
    n_queries = queries.shape[0]
    n_names = index.n_vectors
    results: List[Candidates] = [[] for _ in range(n_queries)]
    pending = numpy.arange(n_queries)
    depth = min(max(k * names_per_concept, k), n_names)
    while len(pending) and depth > 0:
        scores, name_ids = index.search(queries[pending], depth)
        unfinished = []
        for row, query in enumerate(pending):
            concepts = names_to_concepts(dictionary, scores[row], name_ids[row])
            exhausted = depth >= n_names or depth >= max_depth or name_ids[row, -1] < 0
            if len(concepts) >= k or exhausted:
                results[query] = concepts[:k]
            else:
                unfinished.append(query)
        pending = numpy.asarray(unfinished, dtype=numpy.int64)
        depth = min(depth * 4, n_names, max_depth)
    return results
