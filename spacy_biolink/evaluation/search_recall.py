"""Recall of a fast (pruned, quantized) search against the exact one, counting ties.

Names with the same words often score exactly alike, so the exact top 10 is one of several
equally right lists: a name the fast search returns that scores as the exact 10th counts as
found. The benchmarks of issue 17 and the index tests share this one definition.
"""
from typing import Optional

import numpy


def tie_aware_recall(scores: numpy.ndarray, exact_scores: numpy.ndarray,
                     exact_ids: numpy.ndarray, at: int = 10,
                     ids: Optional[numpy.ndarray] = None, tolerance: float = 0.0) -> float:
    """Mean over queries of the share of the exact top-`at` found.

    scores: the fast search's scores (queries x >= at), best first; where `ids` is given,
    places whose id is -1 (fewer than `at` found) never count. exact_scores, exact_ids: the
    exact search's, -1 marking empty places; a query with no exact result counts as 1.
    tolerance: how far below the exact at-th score still counts (dense scores round
    differently in faiss and numpy). Pass the exact scores of what the fast search returned
    when its own are approximate (a quantized index), or right names count as misses.
    """
    scores = numpy.asarray(scores)
    found = []
    for row in range(len(exact_ids)):
        n = int(min(at, (numpy.asarray(exact_ids[row]) >= 0).sum()))
        if n == 0:
            found.append(1.0)
            continue
        kth = exact_scores[row, n - 1]
        mine = scores[row, :at]
        if ids is not None:
            mine = mine[numpy.asarray(ids[row, :at]) >= 0]
        found.append(min(n, int((mine >= kth - tolerance).sum())) / n)
    return float(numpy.mean(found)) if found else 1.0
