"""Custom attributes bio_linker writes, installed on demand (no import-time side effects).

`span._.kb_ents` is scispaCy's name, so code written for its linker reads our results
unchanged. Values live in doc.user_data under our own key; the getter hands back
(id, score) tuples even after a Doc went through bytes (nlp.pipe(n_process=2)), where
msgpack turns tuples into lists.
"""
from typing import List, Tuple

from spacy.tokens import Span

KB_ENTS_KEY = "spacy_biolink.kb_ents"


def _key(span: Span) -> tuple:
    return (KB_ENTS_KEY, span.start_char, span.end_char)


def get_kb_ents(span: Span) -> List[Tuple[str, float]]:
    return [(str(c), float(s)) for c, s in span.doc.user_data.get(_key(span), [])]


def set_kb_ents(span: Span, value) -> None:
    span.doc.user_data[_key(span)] = [(str(c), float(s)) for c, s in value]


def install_extensions() -> None:
    if not Span.has_extension("kb_ents"):
        Span.set_extension("kb_ents", getter=get_kb_ents, setter=set_kb_ents)
