"""Sampling over a fixed set of training names: negatives for triplet losses, and batches
of concepts beside their hard neighbours (the fast encoder's alignment phase, the distil
recipe)."""
from typing import Dict, List, Union

import numpy


def distance_weighted_negatives(embeddings: numpy.ndarray, concepts: numpy.ndarray, *,
                                n_nearest: int = 200, rng: numpy.random.Generator,
                                chunk_size: int = 4096) -> numpy.ndarray:
    """One negative name per name, drawn among its `n_nearest` neighbours of other
    concepts with probability proportional to 1 / (1 - cos) (Wu et al., 2017, as CCA+DAN's
    code does it): close names of other concepts are picked most, but not always the
    closest, which is often a mislabelled synonym.

    embeddings: (n, d) L2-normalised rows; concepts: (n,) concept of each row.
    A name with no other-concept neighbour among them gets a uniform random one (any
    name of another concept); -1 only when every name has the same concept.
    Meant to run once per epoch on the current encodings.
    """
    import faiss

    embeddings = numpy.ascontiguousarray(embeddings, dtype=numpy.float32)
    concepts = numpy.asarray(concepts)
    n = len(embeddings)
    negatives = numpy.full(n, -1, dtype=numpy.int64)
    if n == 0 or len(numpy.unique(concepts)) < 2:
        return negatives
    index = faiss.IndexFlatIP(embeddings.shape[1])
    index.add(embeddings)
    k = min(n_nearest + 1, n)
    for start in range(0, n, chunk_size):
        stop = min(start + chunk_size, n)
        similarities, neighbours = index.search(embeddings[start:stop], k)
        other = (neighbours >= 0) & (concepts[numpy.maximum(neighbours, 0)]
                                     != concepts[start:stop, None])
        weights = numpy.where(other, 1.0 / numpy.maximum(1.0 - similarities, 1e-4), 0.0)
        totals = weights.sum(axis=1)
        # Inverse-CDF draw per row: the first neighbour whose cumulative weight passes u.
        cumulative = numpy.cumsum(weights, axis=1)
        draws = rng.random(stop - start) * totals
        picked = (cumulative <= draws[:, None]).sum(axis=1)
        picked = numpy.minimum(picked, k - 1)
        rows = numpy.arange(stop - start)
        negatives[start:stop] = numpy.where(totals > 0, neighbours[rows, picked], -1)
    for i in numpy.flatnonzero(negatives < 0):
        candidates = numpy.flatnonzero(concepts != concepts[i])
        negatives[i] = candidates[rng.integers(len(candidates))]
    return negatives


def concept_batches(seeds: numpy.ndarray, neighbours: Union[Dict[int, List[int]], numpy.ndarray],
                    concepts_per_batch: int, hard_concepts: int,
                    rng: numpy.random.Generator) -> List[List[int]]:
    """One pass over `seeds` in random order: each batch holds a seed and up to
    `hard_concepts` of its mined neighbours (not already in the batch), until it has
    `concepts_per_batch` concepts. A seed already trained in this pass as someone's
    neighbour is skipped, so a pass costs about one step per concept, not 1 + hard_concepts.
    Neighbours need not be seeds (phase 2 seeds are the training mentions' concepts; their
    neighbours may be any concept). `neighbours` maps a seed to its list, or is a 2-D array
    with a row per seed id (the distil recipe's nearest names)."""
    batches, batch, members, seen = [], [], set(), set()
    for seed in rng.permutation(seeds).tolist():
        if seed in seen:
            continue
        mined = (neighbours[seed, :hard_concepts].tolist() if isinstance(neighbours, numpy.ndarray)
                 else neighbours.get(seed, [])[:hard_concepts])
        for c in [seed] + list(mined):
            if c not in members:
                batch.append(c)
                members.add(c)
                seen.add(c)
            if len(batch) >= concepts_per_batch:
                batches.append(batch)
                batch, members = [], set()
                break
    if len(batch) > 1:
        batches.append(batch)
    return batches
