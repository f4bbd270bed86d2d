"""Custom attributes bio_linker writes, installed on demand (no import-time side effects).

`span._.kb_ents` is scispaCy's name, so code written for its linker reads our results
unchanged. Its scores are the last stage's: the retriever's similarity, or with the
learned reranker (`LearnedReranker.v3`) probabilities, the first of which,
`span._.kb_ents[0][1]`, is the probability that `kb_id_` is right, calibrated on dev. `span._.kb_parts` lists (part text, kb_ents) for each concept a composite
mention names; a mention that was not split reads as its one part. Values live in doc.user_data under our own key; the getter hands back
(id, score) tuples even after a Doc went through bytes (nlp.pipe(n_process=2)), where
msgpack turns tuples into lists.
"""
from typing import List, Tuple

from spacy.tokens import Span

KB_ENTS_KEY = "spacy_biolink.kb_ents"
KB_PARTS_KEY = "spacy_biolink.kb_parts"

KbEnts = List[Tuple[str, float]]


def _key(span: Span, name: str = KB_ENTS_KEY) -> tuple:
    return (name, span.start_char, span.end_char)


def _as_kb_ents(value) -> KbEnts:
    return [(str(c), float(s)) for c, s in value]


def get_kb_ents(span: Span) -> KbEnts:
    """Getter of `span._.kb_ents`: the (concept id, score) pairs linked to `span`, as tuples
    even after the doc went through bytes; empty when it was not linked."""
    return _as_kb_ents(span.doc.user_data.get(_key(span), []))


def set_kb_ents(span: Span, value) -> None:
    """Setter of `span._.kb_ents`: stored in `doc.user_data` under the span's offsets, so it
    travels with the doc through to_bytes/from_bytes."""
    span.doc.user_data[_key(span)] = _as_kb_ents(value)


def get_kb_parts(span: Span) -> List[Tuple[str, KbEnts]]:
    """Getter of `span._.kb_parts`: (text, kb_ents) for each part of a split composite mention,
    or the whole span as its only part when it was not split."""
    parts = span.doc.user_data.get(_key(span, KB_PARTS_KEY))
    if parts is None:
        return [(span.text, get_kb_ents(span))]
    return [(str(text), _as_kb_ents(ents)) for text, ents in parts]


def set_kb_parts(span: Span, value) -> None:
    """Setter of `span._.kb_parts`: stored in `doc.user_data` like `kb_ents`."""
    span.doc.user_data[_key(span, KB_PARTS_KEY)] = [(str(t), _as_kb_ents(e)) for t, e in value]


def install_extensions() -> None:
    """Register `Span._.kb_ents` and `Span._.kb_parts`; safe to call more than once."""
    if not Span.has_extension("kb_ents"):
        Span.set_extension("kb_ents", getter=get_kb_ents, setter=set_kb_ents)
    if not Span.has_extension("kb_parts"):
        Span.set_extension("kb_parts", getter=get_kb_parts, setter=set_kb_parts)
