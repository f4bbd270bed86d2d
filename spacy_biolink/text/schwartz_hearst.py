"""Abbreviation definitions in a tokenized doc, by Schwartz & Hearst's algorithm.

"A simple algorithm for identifying abbreviation definitions in biomedical text"
(Schwartz & Hearst, PSB 2003), with the candidate rules of scispaCy 0.6.x's
`AbbreviationDetector`, token for token: the linker's abbreviation results must not
change with whether scispaCy is installed. scispaCy stays an optional integration because
0.6.2 pins numpy < 2 and scipy < 1.11 for its own linker, which this package does not
use; benchmarks/abbreviation_parity.py counts the differences with scispaCy's functions
and its pipe on whole corpora (none on NCBI-disease and BC5CDR, see BENCHMARKS.md).
"""
from typing import Iterable, Iterator, Optional, Tuple

from spacy.tokens import Doc, Span

# A parenthesis with more tokens than this is no definition (scispaCy's limit).
MAX_INSIDE = 8
# More tokens than this inside the brackets: the long form is inside, the short form is
# the one token before them ("WD (Wilson disease)").
MAX_SHORT_INSIDE = 3


def definition_candidates(doc: Doc, insides: Iterable[Tuple[int, int]]
                          ) -> Iterator[Tuple[Span, Span]]:
    """(long form candidate, short form candidate) for each bracketed token range.

    insides: (start, end) token ranges between a "(" and a ")", brackets excluded, in the
    order their definitions should be tried (the first definition of a short form wins).
    The short form candidate is what is inside the brackets, and the long form candidate
    up to min(n + 5, 2n) tokens before them, n the short form's length in characters; or,
    with more than three tokens inside, the other way round.
    """
    for start, end in insides:
        if end - start > MAX_INSIDE or start == 1:
            continue
        if end - start > MAX_SHORT_INSIDE:
            short = doc[start - 2:start - 1]
            long = doc[start:end]
            if _unbalanced(long):
                continue
        else:
            short = doc[start:end]
            n_chars = sum(len(token) for token in short)
            max_words = min(n_chars + 5, n_chars * 2)
            long = doc[max(start - max_words - 1, 0):start - 1]
        if _may_be_short_form(short):
            yield long, short


def find_long_form(long_candidate: Span, short: Span) -> Optional[Span]:
    """The end of `long_candidate` that `short` abbreviates, or None.

    Each letter or digit of the short form, last to first, is found in the candidate
    text, right to left; the first one must start a word. The candidate's tokens are
    read joined by single spaces, and the match's character offset mapped back to a token
    through the tokens' own whitespace, as scispaCy does (so "X-linked" is read as
    "X - linked" but counted as written): the same spans, quirks included.
    """
    long_text = " ".join(token.text for token in long_candidate)
    short_text = " ".join(token.text for token in short)
    li = len(long_text) - 1
    si = len(short_text) - 1
    while si >= 0:
        ch = short_text[si].lower()
        if not ch.isalnum():
            si -= 1
            continue
        while li >= 0 and (long_text[li].lower() != ch
                           or (si == 0 and li > 0 and long_text[li - 1].isalnum())):
            li -= 1
        if li < 0:
            return None
        li -= 1
        si -= 1
    li += 1
    length = 0
    first = None
    for i, token in enumerate(long_candidate):
        length += len(token.text_with_ws)
        if length > li:
            first = i
            break
    return long_candidate[first:]


def _unbalanced(span: Span) -> bool:
    depth = 0
    for token in span:
        if token.text == "(":
            depth += 1
        elif token.text == ")":
            if not depth:
                return True
            depth -= 1
    return depth != 0


def _may_be_short_form(span: Span) -> bool:
    text = span.text
    return (all(2 <= len(token) < 10 for token in span)
            and sum(ch.isalpha() for ch in text) / len(text) >= 0.5
            and text[0].isalpha())
