"""The annotation prior: among near ties, the concept the training corpora annotated most
often comes first ("type 2 diabetes" is annotated D003924 far more than its parent).

It acts on each query's k best after the search (linker/policy.py's `link_texts`).
"""
from typing import Dict, Optional

import numpy


class AnnotationPrior:
    """A concept's k-best score gains `weight * ln(1 + n)`, n = how often the augmenting
    corpora annotated it. mode "add": the boosted score is the score (kb_ents may pass 1;
    the threshold and the composite decision see it), as released; "order": the boost only
    orders the k best and each score stays the similarity."""

    step = "prior"

    def __init__(self, weight: float, mode: str):
        self.weight = weight
        self.mode = mode
        # weight * ln(1 + annotations) per concept once a dictionary is adopted; None
        # when it adds nothing.
        self.boosts: Optional[numpy.ndarray] = None
        self._adopted = False

    @property
    def settings(self) -> Dict:
        """The flat bio_linker settings this step stands for."""
        return {"prior_weight": self.weight, "prior_mode": self.mode}

    def adopt(self, searched, n_concepts: int) -> None:
        """Count annotations over the searched names only: with index_sources "O" no
        corpus count is used."""
        self.boosts = None
        self._adopted = True
        if self.weight:
            counts = numpy.bincount(searched.name_concepts, weights=searched.name_concept_counts,
                                    minlength=n_concepts)
            if counts.any():
                self.boosts = self.weight * numpy.log1p(counts)

    @property
    def score_bound(self) -> Optional[float]:
        """The most the prior adds to a reported score: 0 when it adds nothing (no prior,
        or mode "order"); None while unknown (before a dictionary is adopted)."""
        if not self.weight or self.mode != "add":
            return 0.0
        if not self._adopted:
            return None
        return 0.0 if self.boosts is None else float(self.boosts.max())

    def rank(self, candidates):
        """The k candidates re-ranked by score + prior (a stable sort: equal keys keep the
        search's order)."""
        if self.boosts is None:
            return candidates
        boosts = self.boosts
        ranked = sorted(((c, score, score + float(boosts[c])) for c, score in candidates),
                        key=lambda candidate: -candidate[2])
        if self.mode == "add":
            return [(c, boosted) for c, _, boosted in ranked]
        return [(c, score) for c, score, _ in ranked]
