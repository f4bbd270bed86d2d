"""Word vectors trained here (gensim), for the encoders that start from word embeddings
(BNE, CCA+DAN, the Siamese verifier).

None can be downloaded, so they are trained on what the project has: the corpora's titles
and abstracts plus the dictionary names. FastText also gives every dictionary word a
vector from its character n-grams, however rare; the table keeps those, so after
training no n-gram model is needed. The result is a WordVectors table
(encoders/wordvectors.py): a word list and a float32 array, never pickled (gensim's own
save format is pickle).
"""
import re
from typing import Iterable, Iterator, List, Sequence

import numpy

from ..encoders.wordvectors import WordVectors, tokenize
from ..errors import BioLinkError, Errors
from ..io.util import PathLike

ALGORITHMS = ("fasttext", "word2vec")


def corpus_sentences(corpora: Sequence[PathLike] = (), names: Iterable[str] = ()
                     ) -> Iterator[List[str]]:
    """Token lists: each title/abstract sentence of the PubTator corpora, then each name."""
    from ..corpora.pubtator import read_pubtator

    for path in corpora:
        for document in read_pubtator(path):
            for sentence in re.split(r"(?<=[.!?])\s+", document.text):
                tokens = tokenize(sentence)
                if tokens:
                    yield tokens
    for name in names:
        tokens = tokenize(name)
        if tokens:
            yield tokens


def train_word_vectors(sentences: Sequence[List[str]], *, algorithm: str = "fasttext",
                       dim: int = 200, window: int = 5, min_count: int = 1, epochs: int = 10,
                       seed: int = 0, workers: int = 1,
                       extra_words: Iterable[str] = ()) -> WordVectors:
    """Train Word2Vec (skip-gram) or FastText on token lists.

    extra_words: words that must have a vector even if rarer than min_count (dictionary
        words): FastText builds them from character n-grams; Word2Vec cannot.
    workers=1 keeps the result a function of the seed alone.
    """
    if algorithm not in ALGORITHMS:
        raise BioLinkError(Errors.E603.format(value=algorithm, options=", ".join(ALGORITHMS)))
    # gensim accepts some of these at 0 and gives empty vectors, or hangs (window 0).
    for option, value in (("dim", dim), ("window", window), ("min-count", min_count),
                          ("epochs", epochs), ("workers", workers)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise BioLinkError(Errors.E480.format(option=f"--{option}", what="an integer >= 1",
                                                  value=value))
    from gensim.models import FastText, Word2Vec

    sentences = list(sentences)
    if not sentences:
        raise BioLinkError(Errors.E604)
    cls = FastText if algorithm == "fasttext" else Word2Vec
    model = cls(sentences=sentences, vector_size=dim, window=window, min_count=min_count,
                sg=1, epochs=epochs, seed=seed, workers=workers)
    words = list(model.wv.index_to_key)
    known = set(words)
    if algorithm == "fasttext":
        words += sorted({w for w in extra_words if w not in known})
    vectors = numpy.stack([model.wv[w] for w in words]).astype(numpy.float32)
    return WordVectors(words, vectors)
