"""bio_propagate: what the NER found once in a document, found wherever it recurs there.

A statistical NER judges each occurrence in its own context, so it tags "nitroglycerin"
and misses the "NTG" it defines, or tags a drug in one sentence and not in the next. An
abstract keeps its terms, so after the NER (and the term ruler), before the linkers:

- abbreviations: a short form defined in the document ("nitroglycerin (NTG)") whose long
  form is an entity, or ends in one covering at least half of it, takes that entity's
  label: its untagged occurrences become entities, and entities spelled as the short form
  under another label take the long form's.
- repeats: each entity's text, where it occurs again untagged, becomes an entity of the
  same label.

An occurrence is taken only where it starts and ends on token boundaries and touches no
entity already there; the first entity of a spelling decides its label. The linkers after
this pipe link the new entities like the others, and bio_drop_nil judges them.
"""
from typing import Dict, Iterator, List, Optional, Tuple

from spacy.language import Language
from spacy.tokens import Doc, Span

from ..text.abbreviations import AbbreviationResolver, doc_text

PROPAGATE_NAME = "bio_propagate"
# The long form's entity must cover at least this share of its characters: "dual
# adenosine A(2A)/A(1) receptor antagonist" ending in "antagonist" names no drug.
MIN_LONG_FORM_SHARE = 0.5
# The rules, each a boolean setting of the pipe (assemble --propagate names them).
PROPAGATE_RULES = ("abbreviations", "repeats")


@Language.factory(
    PROPAGATE_NAME,
    # It only repeats entities an NER already found: listing doc.ents as assigned would
    # make it count as a span source for the checks that look for one.
    requires=["doc.ents"],
    default_config={"abbreviations": True, "repeats": False, "min_repeat_chars": 3},
)
def make_propagate(nlp: Language, name: str, *, abbreviations: bool, repeats: bool,
                   min_repeat_chars: int):
    """The `bio_propagate` factory: a Propagate pipe (config: abbreviations, repeats,
    min_repeat_chars)."""
    return Propagate(nlp, name, abbreviations=abbreviations, repeats=repeats,
                     min_repeat_chars=min_repeat_chars)


class Propagate:
    """Adds to doc.ents the untagged recurrences of its entities (module docstring)."""

    def __init__(self, nlp: Language, name: str = PROPAGATE_NAME, *,
                 abbreviations: bool = True, repeats: bool = False,
                 min_repeat_chars: int = 3):
        self.name = name
        self.abbreviations = abbreviations
        self.repeats = repeats
        self.min_repeat_chars = min_repeat_chars
        self._resolver = AbbreviationResolver(nlp.vocab)

    def __call__(self, doc: Doc) -> Doc:
        """Add the recurrences of `doc`'s entities to doc.ents in place and return it."""
        ents = list(doc.ents)
        if not ents:
            return doc
        # doc.text and span.text make a Token object per token each time they are read:
        # the text is made once, from arrays, and the entities' texts cut from it.
        text_of_doc = doc_text(doc)
        labelled = [(text_of_doc[ent.start_char:ent.end_char], ent.label_) for ent in ents]
        taken = bytearray(len(doc))
        for ent in ents:
            taken[ent.start:ent.end] = b"\x01" * len(ent)
        spellings: List[Tuple[str, str]] = []
        changed: List[Span] = []
        if self.abbreviations:
            labels = self._short_form_labels(doc, labelled)
            # A short form tagged under another label than its long form's takes that one.
            for i, (text, label) in enumerate(labelled):
                if label != labels.get(text, label):
                    ent = ents[i]
                    changed.append(Span(doc, ent.start, ent.end, label=labels[text],
                                        kb_id=ent.kb_id))
                    labelled[i] = (text, labels[text])
            spellings.extend(labels.items())
        if self.repeats:
            first_labels: Dict[str, str] = {}
            for text, label in labelled:
                if len(text) >= self.min_repeat_chars:
                    first_labels.setdefault(text, label)
            spellings.extend(first_labels.items())
        for text, label in spellings:
            for start, end in _free_occurrences(doc, text_of_doc, text, taken):
                taken[start:end] = b"\x01" * (end - start)
                changed.append(Span(doc, start, end, label=label))
        if changed:
            # Tokens the NER left unannotated (missing, not outside) stay so.
            doc.set_ents(changed, default="unmodified")
        return doc

    def pipe(self, docs, batch_size: int = 128):
        """Each doc of `docs`, its entities' recurrences added."""
        for doc in docs:
            yield self(doc)

    def _short_form_labels(self, doc: Doc, labelled: List[Tuple[str, str]]
                           ) -> Dict[str, str]:
        """Short form -> the label of the entity its long form is (or ends in), from the
        doc's entities as (text, label)."""
        by_text: Dict[str, str] = {}
        for text, label in labelled:
            by_text.setdefault(text, label)
        labels = {}
        for short, long in self._resolver.long_forms(doc, other_numbers=True).items():
            label = by_text.get(long)
            if label is None:
                label = next((label for text, label in labelled if long.endswith(text)
                              and len(text) >= MIN_LONG_FORM_SHARE * len(long)), None)
            if label is not None and short:
                labels[short] = label
        return labels


def _free_occurrences(doc: Doc, haystack: str, text: str, taken: bytearray
                      ) -> Iterator[Tuple[int, int]]:
    """Token ranges where `text` occurs in `haystack` (doc.text) as a whole word on token
    boundaries, touching no taken token."""
    # str.find, not a regex per spelling: compiling one for each of a corpus's distinct
    # entity texts cost more than the rest of the pipe.
    start = haystack.find(text)
    while start >= 0:
        end = start + len(text)
        if not (_is_word_char(haystack, start - 1) or _is_word_char(haystack, end)):
            span: Optional[Span] = doc.char_span(start, end)
            if span is not None and not any(taken[span.start:span.end]):
                yield span.start, span.end
        start = haystack.find(text, start + 1)


def _is_word_char(text: str, i: int) -> bool:
    return 0 <= i < len(text) and (text[i].isalnum() or text[i] == "_")
