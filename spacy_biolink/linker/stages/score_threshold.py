"""The NIL rule by score: what a mention's ranked candidates become on the span. Those
scoring at least `threshold` go to kb_ents (at most max_entities_per_mention), the best to
kb_id_; a mention with none is NIL.
"""
from itertools import islice
from typing import Callable, Dict, List, Tuple


class ScoreThreshold:
    """Candidates at or above `threshold` are kept, at most `max_entities_per_mention`."""

    step = "nil_rule"

    def __init__(self, threshold: float, max_entities_per_mention: int):
        self.threshold = threshold
        self.max_entities_per_mention = max_entities_per_mention

    @property
    def settings(self) -> Dict:
        """The flat bio_linker settings this step stands for."""
        return {"threshold": self.threshold,
                "max_entities_per_mention": self.max_entities_per_mention}

    def kb_ents(self, candidates, reported_id: Callable[[int], str]
                ) -> List[Tuple[str, float]]:
        """Candidates at or above the threshold, as (concept id, score), best first."""
        threshold = self.threshold
        # Only the first max_entities_per_mention kept are read: a reranker hands k = 20
        # or 50 candidates, and their ids cost more than the rest of a mention's output.
        kept = islice(((c, score) for c, score in candidates if score >= threshold),
                      self.max_entities_per_mention)
        return [(reported_id(c), round(score, 6)) for c, score in kept]

    def annotations(self, links, reported_id: Callable[[int], str], nil_id: str):
        """kb_id, kb_ents and kb_parts of one mention. A composite's kb_id joins its parts'
        ids with `|`, as the corpora write them, and its kb_ents holds the best concept of
        each part."""
        if len(links) == 1:
            kb_ents = self.kb_ents(links[0][1], reported_id)
            return (kb_ents[0][0] if kb_ents else nil_id), kb_ents, []
        parts = [(text, self.kb_ents(candidates, reported_id)) for text, candidates in links]
        best = [ents[0] for _, ents in parts if ents]
        kb_id = "|".join(ents[0][0] if ents else nil_id for _, ents in parts) if best else nil_id
        return kb_id, best, parts
