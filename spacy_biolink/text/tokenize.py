"""nlp.make_doc with a bound on spaCy's tokenizer time.

spaCy's tokenizer takes each whitespace-free run of text apart one prefix or suffix at a
time, copying the rest of the run each time: time grows with the square of the run's
length when it is made of brackets ("((((...x...))))": 4,000 characters take 16 s, a
40 KB entity minutes). A run longer than MAX_RUN characters is tokenized here instead,
in linear time: every bracket a token, what is between them one token (what spaCy would
give for such a run, give or take its infixes), the rest of the text by spaCy as usual.
The Doc's text is the input text, character for character, so offsets hold.
"""
import re
import warnings
from typing import List

from spacy.language import Language
from spacy.tokens import Doc

from ..errors import Warnings

# The longest whitespace-free run left to spaCy's tokenizer (about 0.25 s in the worst
# case); IUPAC names and URLs, the longest runs of real text, stay far below it.
MAX_RUN = 1000
_LONG_RUN = re.compile(r"\S{%d,}" % (MAX_RUN + 1))
_RUN_PIECES = re.compile(r"[()\[\]{}]|[^()\[\]{}]+")
# Said once per process: a corpus of such documents warns once, not per document.
_warned = False


def make_doc(nlp: Language, text: str) -> Doc:
    """nlp.make_doc(text), but runs of over MAX_RUN non-space characters are split at
    brackets in linear time (W951, said once), so one odd document cannot stall a run."""
    global _warned
    runs = list(_LONG_RUN.finditer(text))
    if not runs:
        return nlp.make_doc(text)
    if not _warned:
        _warned = True
        warnings.warn(Warnings.W951.format(length=max(len(m.group()) for m in runs),
                                           limit=MAX_RUN, start=runs[0].group()[:40]))
    docs: List[Doc] = []
    position = 0
    for run in runs:
        if run.start() > position:  # ends in whitespace, or starts the text
            docs.append(nlp.make_doc(text[position:run.start()]))
        end = run.end()
        words = _RUN_PIECES.findall(run.group())
        spaces = [False] * len(words)
        # The whitespace after the run: one space goes with its last token, the rest
        # is a whitespace token, as spaCy's tokenizer does.
        while end < len(text) and text[end].isspace():
            end += 1
        gap = text[run.end():end]
        if gap.startswith(" "):
            spaces[-1] = True
            gap = gap[1:]
        if gap:
            words.append(gap)
            spaces.append(False)
        docs.append(Doc(nlp.vocab, words=words, spaces=spaces))
        position = end
    if position < len(text):
        docs.append(nlp.make_doc(text[position:]))
    doc = Doc.from_docs(docs, ensure_whitespace=False)
    return doc
