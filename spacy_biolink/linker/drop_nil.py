"""bio_drop_nil: after the linkers, drop the entities that link to nothing, or too weakly.

A span the linkers leave NIL was already a wrong link; dropping it also makes it no
false NER entity. An entity no linker looked at has kb_id "" and is dropped too, unless
`labels` names the labels to judge, so put this pipe after every linker.

`min_score` is where a raw-text pipeline's stricter cut belongs: on raw text a span
whose best link is weak is more often no entity at all, but that is a judgement about
the span, not about the link. Put on the linker's own NIL threshold, the same cut also
turned good links of gold spans into NIL with empty `kb_ents` (issue 58's "type 2
diabetes", D003924 at 0.757 under a 0.85 threshold).
"""
from typing import List, Sequence

from spacy.language import Language
from spacy.tokens import Doc

from ..errors import BioLinkError, Errors
from .extensions import get_kb_ents

DROP_NIL_NAME = "bio_drop_nil"


@Language.factory(
    "bio_drop_nil",
    # It only removes entities: listing doc.ents as assigned would make it count as a
    # span source (an NER) for the checks that look for one.
    requires=["doc.ents"],
    default_config={"nil_ids": ["NIL", ""], "labels": [], "min_score": 0.0},
)
def make_drop_nil(nlp: Language, name: str, *, nil_ids: List[str], labels: List[str],
                  min_score: float):
    """The `bio_drop_nil` factory: a DropNil pipe (config: nil_ids, labels, min_score)."""
    return DropNil(name, nil_ids=nil_ids, labels=labels, min_score=min_score)


class DropNil:
    """Drops the doc.ents whose kb_id_ is one of `nil_ids`, or whose best `kb_ents` score
    is under `min_score`; with `labels`, only those of these labels (the others stay
    whatever their id). The linkers' annotations of the entities kept are untouched."""

    def __init__(self, name: str = "bio_drop_nil", *, nil_ids: Sequence[str] = ("NIL", ""),
                 labels: Sequence[str] = (), min_score: float = 0.0):
        if not (isinstance(min_score, (int, float)) and min_score == min_score
                and min_score >= 0.0 and min_score != float("inf")):
            raise BioLinkError(Errors.E480.format(option="bio_drop_nil min_score",
                                                  value=min_score,
                                                  what="a finite number >= 0"))
        self.name = name
        self.nil_ids = frozenset(nil_ids)
        self.labels = frozenset(labels)
        self.min_score = float(min_score)

    def __call__(self, doc: Doc) -> Doc:
        """Drop the NIL entities of `doc` in place and return it."""
        doc.ents = [ent for ent in doc.ents if not self._drops(ent)]
        return doc

    def pipe(self, docs, batch_size: int = 128):
        """Each doc of `docs`, its NIL entities dropped."""
        for doc in docs:
            yield self(doc)

    def _drops(self, ent) -> bool:
        if self.labels and ent.label_ not in self.labels:
            return False
        if ent.kb_id_ in self.nil_ids:
            return True
        if self.min_score > 0.0:
            kb_ents = get_kb_ents(ent)
            return not kb_ents or kb_ents[0][1] < self.min_score
        return False
