"""bio_drop_nil: after the linkers, drop the entities that link to nothing, or too weakly.

A span the linkers leave NIL was already a wrong link; dropping it also makes it no
false NER entity. An entity no linker looked at has kb_id "" and is dropped too, unless
`labels` names the labels to judge, so put this pipe after every linker.

`min_score` is where a raw-text pipeline's stricter cut belongs: on raw text a span
whose best link is weak is more often no entity at all, but that is a judgement about
the span, not about the link. Put on the linker's own NIL threshold, the same cut also
turned good links of gold spans into NIL with empty `kb_ents` (issue 58's "type 2
diabetes", D003924 at 0.757 under a 0.85 threshold).

`unlink_labels` keeps the entities of those labels whose best link is under `min_score`,
but as NIL (their `kb_ents` stay, for whoever wants the candidates): on raw text such a
link is more often wrong than right, while the span is still a chemical the vocabulary
may lack. The linker itself links a gold span whatever its score.
"""
from typing import List, Sequence

from spacy.language import Language
from spacy.tokens import Doc, Span

from ..errors import BioLinkError, Errors
from .extensions import get_kb_ents

DROP_NIL_NAME = "bio_drop_nil"


@Language.factory(
    "bio_drop_nil",
    # It only removes entities: listing doc.ents as assigned would make it count as a
    # span source (an NER) for the checks that look for one.
    requires=["doc.ents"],
    default_config={"nil_ids": ["NIL", ""], "labels": [], "min_score": 0.0,
                    "unlink_labels": []},
)
def make_drop_nil(nlp: Language, name: str, *, nil_ids: List[str], labels: List[str],
                  min_score: float, unlink_labels: List[str]):
    """The `bio_drop_nil` factory: a DropNil pipe (config: nil_ids, labels, min_score,
    unlink_labels)."""
    return DropNil(name, nil_ids=nil_ids, labels=labels, min_score=min_score,
                   unlink_labels=unlink_labels)


class DropNil:
    """Drops the doc.ents whose kb_id_ is one of `nil_ids`, or whose best `kb_ents` score
    is under `min_score`; with `labels`, only those of these labels (the others stay
    whatever their id). Entities of `unlink_labels` under `min_score` stay, as NIL. The
    linkers' annotations of the entities kept are untouched."""

    def __init__(self, name: str = "bio_drop_nil", *, nil_ids: Sequence[str] = ("NIL", ""),
                 labels: Sequence[str] = (), min_score: float = 0.0,
                 unlink_labels: Sequence[str] = ()):
        if not (isinstance(min_score, (int, float)) and min_score == min_score
                and min_score >= 0.0 and min_score != float("inf")):
            raise BioLinkError(Errors.E480.format(option="bio_drop_nil min_score",
                                                  value=min_score,
                                                  what="a finite number >= 0"))
        self.name = name
        self.nil_ids = frozenset(nil_ids)
        self.labels = frozenset(labels)
        self.min_score = float(min_score)
        self.unlink_labels = frozenset(unlink_labels)
        both = self.unlink_labels & self.labels
        if both:
            raise BioLinkError(Errors.E480.format(
                option="bio_drop_nil unlink_labels", value=", ".join(sorted(both)),
                what="labels other than `labels` (an entity is either dropped or unlinked)"))

    def __call__(self, doc: Doc) -> Doc:
        """Drop the NIL entities of `doc` in place (and unlink the weak ones of
        `unlink_labels`) and return it."""
        doc.ents = [self._unlinked(ent) if self._unlinks(ent) else ent
                    for ent in doc.ents if not self._drops(ent)]
        return doc

    def pipe(self, docs, batch_size: int = 128):
        """Each doc of `docs`, its NIL entities dropped."""
        for doc in docs:
            yield self(doc)

    def _unlinks(self, ent) -> bool:
        if ent.label_ not in self.unlink_labels or ent.kb_id_ in self.nil_ids:
            return False
        return self._weak(ent)

    @staticmethod
    def _unlinked(ent) -> Span:
        """The same span as NIL; its kb_ents live under its offsets, so they stay."""
        return Span(ent.doc, ent.start, ent.end, label=ent.label, kb_id="NIL")

    def _drops(self, ent) -> bool:
        if ent.label_ in self.unlink_labels:
            return False
        if self.labels and ent.label_ not in self.labels:
            return False
        if ent.kb_id_ in self.nil_ids:
            return True
        return self.min_score > 0.0 and self._weak(ent)

    def _weak(self, ent) -> bool:
        """Whether the entity's best link scores under `min_score` (or it has none)."""
        kb_ents = get_kb_ents(ent)
        return not kb_ents or kb_ents[0][1] < self.min_score
