"""Character (or word) n-gram TF-IDF name encoder.

BioSyn's sparse encoder is TF-IDF over char 1-2-grams; scispaCy's candidate generator
uses char_wb 3-grams. Both are this encoder with other settings. The vocabulary and idf
weights are fitted on the dictionary's names and saved as plain msgpack (strings and
floats), never pickled, so opening a model someone sent you runs none of their code.
"""
import math
import re
from collections import Counter
from typing import Dict, List, Optional, Sequence, Tuple

import numpy
import srsly
from scipy import sparse
from thinc.api import Model
from thinc.model import deserialize_attr, serialize_attr

from ..errors import Errors

ANALYZERS = ("char", "char_wb", "word")
_WHITESPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+")


class CharNgramTfidf:
    """A TF-IDF vectorizer (sklearn's defaults: smooth idf, l2 norm) with a small,
    safe serialization. Rows of `transform` are L2-normalised, so inner product = cosine."""

    def __init__(self, analyzer: str = "char_wb", ngram_range: Tuple[int, int] = (3, 3),
                 lowercase: bool = True, sublinear_tf: bool = False, min_df: int = 1):
        if analyzer not in ANALYZERS:
            raise ValueError(Errors.E202.format(value=analyzer))
        ngram_range = tuple(ngram_range)
        if len(ngram_range) != 2 or not 1 <= ngram_range[0] <= ngram_range[1]:
            raise ValueError(Errors.E203.format(value=ngram_range))
        self.analyzer = analyzer
        self.ngram_range = ngram_range
        self.lowercase = lowercase
        self.sublinear_tf = sublinear_tf
        self.min_df = min_df
        self.vocab: Dict[str, int] = {}
        self.idf = numpy.zeros((0,), dtype=numpy.float32)

    @property
    def is_fitted(self) -> bool:
        return bool(self.vocab)

    @property
    def n_features(self) -> int:
        return len(self.vocab)

    def ngrams(self, text: str) -> List[str]:
        if self.lowercase:
            text = text.lower()
        min_n, max_n = self.ngram_range
        if self.analyzer == "word":
            words = _WORD.findall(text)
            return [" ".join(words[i:i + n]) for n in range(min_n, max_n + 1)
                    for i in range(len(words) - n + 1)]
        if self.analyzer == "char":
            text = _WHITESPACE.sub(" ", text)
            return [text[i:i + n] for n in range(min_n, max_n + 1) for i in range(len(text) - n + 1)]
        grams = []
        for word in text.split():
            padded = f" {word} "
            for n in range(min_n, max_n + 1):
                if len(padded) <= n:
                    # A word no longer than n counts once, whole (sklearn's char_wb rule).
                    grams.append(padded)
                    break
                grams.extend(padded[i:i + n] for i in range(len(padded) - n + 1))
        return grams

    def fit(self, texts: Sequence[str]) -> "CharNgramTfidf":
        doc_freq: Counter = Counter()
        for text in texts:
            doc_freq.update(set(self.ngrams(text)))
        kept = sorted(g for g, df in doc_freq.items() if df >= self.min_df)
        self.vocab = {g: i for i, g in enumerate(kept)}
        n_docs = len(texts)
        df = numpy.array([doc_freq[g] for g in kept], dtype=numpy.float64)
        self.idf = (numpy.log((1.0 + n_docs) / (1.0 + df)) + 1.0).astype(numpy.float32)
        return self

    def transform(self, texts: Sequence[str]) -> sparse.csr_matrix:
        vocab = self.vocab
        indptr = [0]
        indices: List[int] = []
        values: List[float] = []
        for text in texts:
            counts = Counter(vocab[g] for g in self.ngrams(text) if g in vocab)
            cols = sorted(counts)
            indices.extend(cols)
            if self.sublinear_tf:
                values.extend(1.0 + math.log(counts[c]) for c in cols)
            else:
                values.extend(counts[c] for c in cols)
            indptr.append(len(indices))
        matrix = sparse.csr_matrix(
            (numpy.asarray(values, dtype=numpy.float32),
             numpy.asarray(indices, dtype=numpy.int32),
             numpy.asarray(indptr, dtype=numpy.int64)),
            shape=(len(texts), len(vocab)))
        matrix.data *= self.idf[matrix.indices]
        row_nnz = numpy.diff(matrix.indptr)
        rows = numpy.repeat(numpy.arange(len(texts)), row_nnz)
        norms = numpy.sqrt(numpy.bincount(rows, weights=matrix.data.astype(numpy.float64) ** 2,
                                          minlength=len(texts)))
        # A text with no known n-gram stays an all-zero row: it matches nothing.
        norms[norms == 0] = 1.0
        matrix.data /= norms[rows].astype(numpy.float32)
        return matrix

    def to_bytes(self) -> bytes:
        return srsly.msgpack_dumps({
            "analyzer": self.analyzer, "ngram_range": list(self.ngram_range),
            "lowercase": self.lowercase, "sublinear_tf": self.sublinear_tf,
            "min_df": self.min_df,
            "vocab": sorted(self.vocab, key=self.vocab.__getitem__),
            "idf": self.idf.tolist(),
        })

    def from_bytes(self, data: bytes) -> "CharNgramTfidf":
        msg = srsly.msgpack_loads(data)
        self.__init__(msg["analyzer"], tuple(msg["ngram_range"]), msg["lowercase"],
                      msg["sublinear_tf"], msg["min_df"])
        self.vocab = {g: i for i, g in enumerate(msg["vocab"])}
        self.idf = numpy.asarray(msg["idf"], dtype=numpy.float32)
        return self


@serialize_attr.register(CharNgramTfidf)
def _serialize_tfidf(_, value: CharNgramTfidf, name: str, model: Model) -> bytes:
    return value.to_bytes()


@deserialize_attr.register(CharNgramTfidf)
def _deserialize_tfidf(_, value: bytes, name: str, model: Model) -> CharNgramTfidf:
    return CharNgramTfidf().from_bytes(value)


def tfidf_encoder(analyzer: str, ngram_range: Tuple[int, int], lowercase: bool,
                  sublinear_tf: bool, min_df: int) -> Model[List[str], sparse.csr_matrix]:
    """A thinc Model: List[str] -> L2-normalised CSR rows. `initialize(X=names)` fits it."""
    vectorizer = CharNgramTfidf(analyzer, tuple(ngram_range), lowercase, sublinear_tf, min_df)
    return Model(
        "tfidf_encoder",
        _tfidf_forward,
        init=_tfidf_init,
        attrs={"vectorizer": vectorizer, "output": "sparse", "similarity": "cosine"},
    )


def _tfidf_init(model: Model, X: Optional[List[str]] = None, Y=None) -> None:
    if X is not None:
        model.attrs["vectorizer"].fit(list(X))


def _tfidf_forward(model: Model, texts: List[str], is_train: bool):
    vectorizer: CharNgramTfidf = model.attrs["vectorizer"]
    if not vectorizer.is_fitted:
        raise ValueError(Errors.E201.format(name="TF-IDF"))
    matrix = vectorizer.transform(texts)

    def backprop(d_output):
        # Fitted statistics, not learned weights: there is nothing to update.
        return []

    return matrix, backprop
