"""Making a Doc of one document of a user's file, within the pipeline's max_length.

spaCy refuses a text longer than nlp.max_length with E088 deep inside nlp.make_doc or
nlp.pipe, as a traceback that says neither which document it was nor what to do. Every
command that tokenizes a user's documents (evaluate, convert, link, visualize) makes
them here, so such a document stops the run with its PMID or line named.
"""
from spacy.language import Language
from spacy.tokens import Doc

from ..errors import BioLinkError, Errors
from .tokenize import make_doc as bounded_make_doc


def check_max_length(nlp: Language, text: str, where: str) -> None:
    """E470 naming `where` (e.g. "corpus.txt: PMID 123") when `text` is longer than
    `nlp.max_length`."""
    if len(text) > nlp.max_length:
        raise BioLinkError(Errors.E470.format(where=where, n=len(text),
                                              max_length=nlp.max_length))


def make_doc(nlp: Language, text: str, where: str) -> Doc:
    """The Doc of one document: E470 naming `where` when the text is too long for `nlp`,
    else `nlp.make_doc(text)` with long bracket runs tokenized in linear time
    (tokenize.make_doc)."""
    check_max_length(nlp, text, where)
    return bounded_make_doc(nlp, text)
