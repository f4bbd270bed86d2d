"""A warning, once per pipeline, when bio_linker gets docs with nothing to link and no
component before it could have found any.

bio_linker links spans that already exist (doc.ents, or doc.spans[key]); a pipeline of
bio_linker alone, given raw text, returns docs with no entities and no error. spaCy's
`nlp.analyze_pipes()` reports the missing `requires` only to a user who asks.
"""
import warnings
from typing import Optional, Sequence, TypeVar

from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.tokens import Doc

from ..errors import Warnings

# The bio_linker pipe (component.py's BioLinker), named by its base class: component.py
# imports this module, so this one does not import it.
Linker = TypeVar("Linker", bound=Pipe)


class NothingToLinkCheck:
    """Held by a bio_linker made by its factory (which knows the pipeline)."""

    def __init__(self, nlp: Language, name: str, spans_key: Optional[str]):
        # A plain reference, not a weakref: nlp.pipe(n_process=2) pickles the pipeline.
        self.nlp = nlp
        self.name = name
        self.spans_key = spans_key
        self.warned = False

    def __call__(self, docs: Sequence[Doc], n_spans: Sequence[int]) -> None:
        """Warn (once) if a doc brought no span to link and no pipe before ours sets any
        (W900), or, with a spans_key, a doc has other span keys but not ours (W901)."""
        if self.warned or all(n_spans):
            return
        setters = self.span_setters()
        if self.spans_key is not None:
            missing = [doc for doc, n in zip(docs, n_spans)
                       if not n and self.spans_key not in doc.spans]
            # A doc with span keys, or a pipe before ours that sets some, but not our key:
            # the key is wrong (W900 says it better when nothing sets any span at all).
            if missing and (len(missing[0].spans) or setters is None or setters):
                self.warned = True
                keys = sorted(missing[0].spans.keys())
                warnings.warn(Warnings.W901.format(
                    name=self.name, key=self.spans_key,
                    keys=", ".join(repr(k) for k in keys[:10]) or "none"))
                return
        if setters is None or setters:
            return
        self.warned = True
        where = "doc.ents" if self.spans_key is None else f"doc.spans[{self.spans_key!r}]"
        warnings.warn(Warnings.W900.format(name=self.name, where=where, pipes=self.nlp.pipe_names,
                                           assigns=self.assigned()))

    def span_setters(self) -> Optional[list]:
        """Pipes before ours that declare they assign what it reads; None when ours is not
        in the pipeline (called on its own, outside nlp)."""
        names = self.nlp.pipe_names
        if self.name not in names:
            return None
        return [name for name in names[:names.index(self.name)]
                if self.assigned() in self.nlp.get_pipe_meta(name).assigns]

    def assigned(self) -> str:
        """What a component declares in its `assigns` when it sets what ours reads."""
        return "doc.ents" if self.spans_key is None else "doc.spans"


def checked(nlp: Language, linker: Linker) -> Linker:
    """`linker`, watched by a NothingToLinkCheck of the pipeline it is made for."""
    linker.nothing_to_link = NothingToLinkCheck(nlp, linker.name, linker.cfg["spans_key"])
    return linker
