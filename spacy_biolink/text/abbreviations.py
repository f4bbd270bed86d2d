"""Abbreviations defined in a document ("Wilson disease (WD)"), resolved inside mentions.

Detection is Schwartz & Hearst's algorithm with scispaCy's candidate rules
(`schwartz_hearst.py`, which needs no scispaCy), completed by the same
algorithm run on the raw text for the definitions its token matcher misses and that
PubMed writes all the time: "Cowden disease (CD; OMIM 158350)", "(SCA1, SCA2)", and
short forms with a hyphen, "T-cell prolymphocytic leukaemia (T-PLL)". Like Ab3P in
BioSyn's preprocessing, a definition holds for the whole document, so a short form used
before its definition is resolved too. A numbered short form whose long form is a
coordination, "spinocerebellar ataxias 1 and 2 (SCA1, n = 11; SCA2 ...)", names the one
part its number picks, and its siblings ("SCA2") the others. The linker and
bio_propagate also look up each short form in the other grammatical number ("GEP-NET"
after "(GEP-NETs)"). A doc that already went through scispaCy's `abbreviation_detector`
pipe is read as it is, not detected again.
"""
import bisect
import re
import warnings
import weakref
from typing import Dict, Iterator, Optional, Tuple

import numpy
from spacy.attrs import ORTH, SPACY
from spacy.tokens import Doc
from spacy.vocab import Vocab

from ..errors import Warnings
from .composites import split_composite
from .schwartz_hearst import MAX_INSIDE, definition_candidates, find_long_form


# A doc with more "(" than this is not searched for definitions (W950): a real text
# defines tens, a full-text article a few hundred; a table or a dump of 20,000 took minutes.
MAX_PARENTHESES = 2000
# Each live doc's definitions, found once: (whether an upstream pipe gave them, short ->
# long). Weak keys, so a doc's entry goes with the doc.
_FOUND: "weakref.WeakKeyDictionary[Doc, Tuple[bool, Dict[str, str]]]" = \
    weakref.WeakKeyDictionary()


class AbbreviationResolver:
    def __init__(self, vocab: Vocab):
        self.vocab = vocab
        self._open = vocab.strings.add("(")
        self._close = vocab.strings.add(")")
        self._warned = False

    def long_forms(self, doc: Doc, *, other_numbers: bool = False) -> Dict[str, str]:
        """Short form text -> long form text, for every definition in the doc; with
        `other_numbers`, also each short form in the other grammatical number that the
        doc does not define itself ("GEP-NET" after "... tumors (GEP-NETs)", see
        other_number_short_forms), as the linker and bio_propagate look them up.

        A doc with more than MAX_PARENTHESES "(" is not searched (nothing is found in
        it; W950, said once per resolver): resolving each definition against all others
        grows with the square of their number, and no real text defines thousands.
        A doc's definitions are found once for all resolvers (bio_propagate and each
        linker of a pipeline ask for the same doc's), unless an upstream abbreviation
        pipe has annotated it since.
        """
        upstream = _from_upstream_pipe(doc)
        cached = _FOUND.get(doc)
        if cached is not None and cached[0] == (upstream is not None):
            found = cached[1]
        else:
            found = self._long_forms(doc, upstream)
            _FOUND[doc] = (upstream is not None, found)
        if other_numbers:
            return {**other_number_short_forms(found), **found}
        return dict(found)

    def _long_forms(self, doc: Doc, found: Optional[Dict[str, str]]) -> Dict[str, str]:
        # One token array serves the bracket count, the detection and the text.
        tokens = doc.to_array([ORTH, SPACY])
        if found is None:
            n_open = int(numpy.count_nonzero(tokens[:, 0] == self._open))
            if n_open > MAX_PARENTHESES:
                if not self._warned:
                    self._warned = True
                    warnings.warn(Warnings.W950.format(n=n_open, limit=MAX_PARENTHESES,
                                                       start=doc.text[:60]))
                return {}
            found = self._detect(doc, tokens[:, 0])
        # On raw text the long form keeps what tokenization splits off: scispaCy reads
        # "X-linked dilated cardiomyopathy (XLDCM)" as "linked dilated cardiomyopathy".
        text = doc_text(doc, tokens)
        found.update(_parenthesized_definitions(text))
        for short, (part, coordination) in _series_parts(found, text).items():
            # A sibling defined in its own right keeps its definition.
            if found.get(short, coordination) == coordination:
                found[short] = part
        # "isolated DMS (IDMS)" after "diffuse mesangial sclerosis (DMS)".
        return {short: expand(long, found, skip=short) for short, long in found.items()}

    def _detect(self, doc: Doc, orth: Optional[numpy.ndarray] = None) -> Dict[str, str]:
        """scispaCy's AbbreviationDetector's definitions, minus the parts this linker does
        not use.

        Its `(` + `)` token Matcher and the global Matcher that collects every later
        occurrence of each short form cost more than the rest of linking together; only
        the short -> long text map is needed here, so the bracket pairs come from the
        token array and the definition rules are applied as its `find_matches_for` does.
        """
        if orth is None:
            orth = doc.to_array(ORTH)
        opens = numpy.flatnonzero(orth == self._open)
        if not len(opens):
            return {}
        closes = numpy.flatnonzero(orth == self._close)
        # In the Matcher's order (by end, then latest start), brackets stripped;
        # longer pairs are never definitions, so they are not built. Each open's closes
        # are found by bisection (a mask over all closes per open was quadratic).
        first = numpy.searchsorted(closes, opens + 2)
        last = numpy.searchsorted(closes, opens + 1 + MAX_INSIDE, side="right")
        inside = sorted(((int(o) + 1, int(c)) for o, lo, hi in zip(opens, first, last)
                         for c in closes[lo:hi]),
                        key=lambda match: (match[1], -match[0]))
        found: Dict[str, str] = {}
        seen_long = set()
        for long_candidate, short in definition_candidates(doc, inside):
            long = find_long_form(long_candidate, short)
            # scispaCy keeps the first definition of a short form and of a long form.
            if long is not None and long.text not in seen_long and short.text not in found:
                seen_long.add(long.text)
                found[short.text] = long.text
        return found


# A short form's plural adds a lowercase "s" to a capital or a digit: "NETs", "SNPs",
# "5-HTs"; one that ends in a capital S ("AIDS", "CNS") is taken to have none.
_PLURAL_SHORT_FORM = re.compile(r"^(.*[A-Z0-9])s$")
_SINGULAR_SHORT_FORM = re.compile(r"^.*[A-RT-Z0-9]$")


def other_number_short_forms(found: Dict[str, str]) -> Dict[str, str]:
    """The short forms of `found` in the other grammatical number, each with its long form:
    "GEP-NET" for "gastroenteropancreatic neuroendocrine tumors (GEP-NETs)", "SNPs" for
    "single nucleotide polymorphism (SNP)". A text defines one and uses both, and the
    linker's normalizer strips plurals, so the long form serves either. Where the text
    defines both numbers ("antiepileptic drug (AED)", "automated external
    defibrillators (AEDs)"), each keeps its own definition."""
    out: Dict[str, str] = {}
    for short, long in found.items():
        plural = _PLURAL_SHORT_FORM.match(short)
        if plural:
            other = plural.group(1)
        elif _SINGULAR_SHORT_FORM.match(short):
            other = short + "s"
        else:
            continue
        if len(other) >= 2 and any(ch.isalpha() for ch in other) and other not in found:
            out[other] = long
    return out


def doc_text(doc: Doc, tokens: Optional[numpy.ndarray] = None) -> str:
    """doc.text, from the token arrays: doc.text makes a Token object per token.

    tokens: `doc.to_array([ORTH, SPACY])` when the caller has it already.
    """
    if tokens is None:
        tokens = doc.to_array([ORTH, SPACY])
    strings = doc.vocab.strings
    return "".join([strings[orth] + " " if space else strings[orth]
                    for orth, space in tokens.tolist()])


def expand(text: str, long_forms: Dict[str, str], skip: Optional[str] = None) -> str:
    """`text` with every whole-word short form replaced by its long form (but `skip`).

    A mention that already spells out a long form ("Wilson disease (WD)") is left alone.
    """
    if not long_forms:
        return text
    lowered = text.lower()
    present = [short for short in long_forms
               if short in text and short != skip and long_forms[short].lower() not in lowered]
    if not present:
        return text
    # Longest first, so "HNPCC" is not resolved as "HNPC" + "C".
    alternatives = "|".join(re.escape(short) for short in sorted(present, key=len, reverse=True))
    pattern = re.compile(rf"(?<!\w)({alternatives})(?!\w)(?=\s+(\w+))?")

    def long_form(match) -> str:
        long = long_forms[match.group(1)]
        # "HPT-JT syndrome" with HPT-JT = "hyperparathyroidism-jaw tumor syndrome".
        following = match.group(2)
        if following and long.lower().endswith(" " + following.lower()):
            long = long[: -len(following)].rstrip()
        return long

    return pattern.sub(long_form, text)


# "(" then the short form, ended by ")", ";", "," or ":": the first item of a parenthesis
# ("diethylnitrosamine (DEN: 10 mg/kg)" defines DEN as "(DEN; 10 mg/kg)" does).
_PARENTHESIS = re.compile(r"\(\s*([^()\s;,:][^();,:]{0,14}?)\s*([);,:])")
_REST_OF_PARENTHESIS = re.compile(r"[^()]*\)")
_SENTENCE_END = re.compile(r"[.!?]\s+(?=[A-Z])")


def _parenthesized_definitions(text: str) -> Iterator[Tuple[str, str]]:
    """(short form, long form) pairs written as "long form (SF" (Schwartz & Hearst 2003)."""
    # Sentence ends found once: searching the text before each parenthesis again made a
    # doc of 20,000 parentheses take minutes.
    sentence_ends = None
    for match in _PARENTHESIS.finditer(text):
        short = match.group(1).strip()
        if not _is_short_form(short):
            continue
        if match.group(2) == "," and _lists_short_forms(text, match.end()):
            # "spinocerebellar ataxias 1 and 2 (SCA1, SCA2)": no one long form per item.
            continue
        if sentence_ends is None:
            sentence_ends = [m.end() for m in _SENTENCE_END.finditer(text)]
        end = match.start()
        while end and text[end - 1].isspace():
            end -= 1
        # A sentence end counts when the capital it looks at is before the parenthesis.
        k = bisect.bisect_left(sentence_ends, end)
        sentence_start = sentence_ends[k - 1] if k else 0
        n_chars = sum(ch.isalnum() for ch in short)
        n_words = min(n_chars + 5, n_chars * 2)
        window = " ".join(_last_words(text, sentence_start, end, n_words))
        long = _best_long_form(short, window)
        if long and short not in long.split():
            yield short, long


def _last_words(text: str, start: int, end: int, n: int) -> list:
    """text[start:end].split()[-n:], reading back only as far as those words need."""
    size = 256
    while True:
        first = max(start, end - size)
        words = text[first:end].split()
        # With more than n words read, the first one (maybe cut) is not among the last n.
        if first == start or len(words) > n:
            return words[-n:] if n else []
        size *= 4


def _lists_short_forms(text: str, after: int) -> bool:
    # A listed short form is one word: "(CH, 10% oxygen)" defines CH, its second item is a
    # measurement, not a sibling short form.
    rest = _REST_OF_PARENTHESIS.match(text, after)
    items = [item.strip() for item in rest.group(0)[:-1].split(",")] if rest else []
    return bool(items) and all(_is_short_form(item) and len(item.split()) == 1
                               for item in items)


def _is_short_form(text: str) -> bool:
    return (2 <= len(text) <= 10 and len(text.split()) <= 2 and text[0].isalnum()
            and any(ch.isalpha() for ch in text))


def _best_long_form(short: str, window: str) -> Optional[str]:
    """The shortest end of `window` whose characters spell `short` in order, the first
    one starting a word (Schwartz & Hearst's backward match)."""
    s, w = len(short) - 1, len(window) - 1
    while s >= 0:
        ch = short[s].lower()
        if not ch.isalnum():
            s -= 1
            continue
        while w >= 0 and (window[w].lower() != ch
                          or (s == 0 and w > 0 and window[w - 1].isalnum())):
            w -= 1
        if w < 0:
            return None
        w -= 1
        s -= 1
    start = window.rfind(" ", 0, w + 1) + 1
    long = window[start:].strip().lstrip("([{\"'")
    return long if len(long) > len(short) else None


# "SCA1", "SCA-2", "MEN2", "HIT II": a letter stem, then the label of one item of a series.
_SERIES_SHORT_FORM = re.compile(r"^(.*?[A-Za-z])([- ]?)(\d+|[IVX]+|[A-Za-z])$")


def _series_parts(found: Dict[str, str], text: str) -> Dict[str, Tuple[str, str]]:
    """Short form -> (one part, the coordination), for numbered short forms of a
    coordinated long form.

    "spinocerebellar ataxias 1 and 2" splits into "... ataxias 1" and "... ataxias 2";
    SCA1 ends with the label of the first, so it names that part, and SCA2, written in the
    text with the same stem, names the second. Nothing is returned when the labels do not
    tell the parts apart or the short form's label is not among them.
    """
    out: Dict[str, Tuple[str, str]] = {}
    for short, long in found.items():
        match = _SERIES_SHORT_FORM.match(short)
        if not match:
            continue
        parts = split_composite(long)
        labels = [part.split()[-1] for part in parts]
        stem, separator, label = match.groups()
        if len(parts) < 2 or len(set(labels)) != len(parts) or label not in labels:
            continue
        for part_label, part in zip(labels, parts):
            sibling = stem + separator + part_label
            if sibling == short or re.search(rf"(?<!\w){re.escape(sibling)}(?!\w)", text):
                out[sibling] = (part, long)
    return out


def _from_upstream_pipe(doc: Doc) -> Optional[Dict[str, str]]:
    if not Doc.has_extension("abbreviations") or "abbreviations" not in _set_extensions(doc):
        return None
    found = {}
    for short in doc._.abbreviations:
        if isinstance(short, dict):  # scispaCy's make_serializable form
            found[short["short_text"]] = short["long_text"]
        elif short._.long_form is not None:
            long_form = short._.long_form
            found[short.text] = long_form if isinstance(long_form, str) else long_form.text
    return found


def _set_extensions(doc: Doc):
    # Extension values live in user_data under ("._.", name, None, None); a name absent
    # there was never set on this doc, so the shared default is all it would give.
    return {key[1] for key in doc.user_data if isinstance(key, tuple) and key[0] == "._."}
