"""bio_drop_nil: after the linkers, drop the entities that link to nothing.

A span the linkers leave NIL was already a wrong link; dropping it also makes it no
false NER entity. An entity no linker looked at has kb_id "" and is dropped too, unless
`labels` names the labels to judge, so put this pipe after every linker.
"""
from typing import List, Sequence

from spacy.language import Language
from spacy.tokens import Doc

DROP_NIL_NAME = "bio_drop_nil"


@Language.factory(
    "bio_drop_nil",
    # It only removes entities: listing doc.ents as assigned would make it count as a
    # span source (an NER) for the checks that look for one.
    requires=["doc.ents"],
    default_config={"nil_ids": ["NIL", ""], "labels": []},
)
def make_drop_nil(nlp: Language, name: str, *, nil_ids: List[str], labels: List[str]):
    """The `bio_drop_nil` factory: a DropNil pipe (config: nil_ids, labels)."""
    return DropNil(name, nil_ids=nil_ids, labels=labels)


class DropNil:
    """Drops the doc.ents whose kb_id_ is one of `nil_ids`; with `labels`, only those of
    these labels (the others stay whatever their id)."""

    def __init__(self, name: str = "bio_drop_nil", *, nil_ids: Sequence[str] = ("NIL", ""),
                 labels: Sequence[str] = ()):
        self.name = name
        self.nil_ids = frozenset(nil_ids)
        self.labels = frozenset(labels)

    def __call__(self, doc: Doc) -> Doc:
        """Drop the NIL entities of `doc` in place and return it."""
        doc.ents = [ent for ent in doc.ents if not self._drops(ent)]
        return doc

    def pipe(self, docs, batch_size: int = 128):
        """Each doc of `docs`, its NIL entities dropped."""
        for doc in docs:
            yield self(doc)

    def _drops(self, ent) -> bool:
        return ent.kb_id_ in self.nil_ids and (not self.labels or ent.label_ in self.labels)
