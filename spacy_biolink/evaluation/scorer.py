"""The scorer `spacy evaluate` and `nlp.evaluate` call for bio_linker.

A gold span counts when the reference doc gives it a concept id. A prediction is right
when a predicted span has the same character offsets and its concept shares an id with
the gold ids (`D1|D2` composites and `D1+D2` conjunctions count any overlap, and a
concept's alternative ids count, so OMIM:613097 matches MEDIC's C567755|613097).
"""
from typing import Callable, Dict, Iterable, Optional, Tuple

from spacy.training import Example

from ..kb.ids import split_gold_ids

NO_ID = ("", "-1", "-")


def _spans(doc, spans_key: Optional[str]):
    if spans_key is None:
        return doc.ents
    return doc.spans[spans_key] if spans_key in doc.spans else []


def score_linking(examples: Iterable[Example], *, nil_id: str = "NIL",
                  spans_key: Optional[str] = None,
                  concept_ids: Optional[Callable[[str], Tuple[str, ...]]] = None,
                  **kwargs) -> Dict[str, Optional[float]]:
    """Score predicted kb ids against gold ones, span by span: accuracy over aligned spans and
    micro P/R/F. NIL and id-less spans are not predictions; `concept_ids` expands a predicted id
    to all ids of its concept, so an alternative gold id counts as correct."""
    expand = concept_ids or (lambda concept_id: (concept_id,))
    n_gold = n_aligned = n_correct = n_predicted = 0
    for eg in examples:
        predicted = {(s.start_char, s.end_char): s.kb_id_ for s in _spans(eg.predicted, spans_key)
                     if s.kb_id_ not in NO_ID and s.kb_id_ != nil_id}
        n_predicted += len(predicted)
        for gold in _spans(eg.reference, spans_key):
            gold_ids = set(split_gold_ids(gold.kb_id_)) if gold.kb_id_ != nil_id else set()
            if not gold_ids:
                continue
            n_gold += 1
            pred_id = predicted.get((gold.start_char, gold.end_char))
            if pred_id is None:
                continue
            n_aligned += 1
            if gold_ids & set(split_gold_ids("|".join(expand(pred_id)))):
                n_correct += 1
    p = n_correct / n_predicted if n_predicted else None
    r = n_correct / n_gold if n_gold else None
    f = 2 * p * r / (p + r) if p and r else (0.0 if p is not None and r is not None else None)
    return {
        "bio_linker_acc": n_correct / n_aligned if n_aligned else None,
        "bio_linker_micro_p": p,
        "bio_linker_micro_r": r,
        "bio_linker_micro_f": f,
    }
