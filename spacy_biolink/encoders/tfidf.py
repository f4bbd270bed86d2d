"""Character (or word) n-gram TF-IDF name encoder.

BioSyn's sparse encoder is TF-IDF over char 1-2-grams; scispaCy's candidate generator
uses char_wb 3-grams. Both are this encoder with other settings. The vocabulary and idf
weights are fitted on the dictionary's names and saved as plain msgpack (strings and
floats), never pickled, so opening a model someone sent you runs none of their code.
"""
import math
import re
from array import array
from collections import Counter, defaultdict
from itertools import chain
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
import srsly
from scipy import sparse
from thinc.api import Model
from thinc.model import deserialize_attr, serialize_attr

from ..errors import Errors

ANALYZERS = ("char", "char_wb", "word")
_WHITESPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+")
# char_wb n-grams never cross words, so transform caches each word's feature ids (names
# and mentions repeat words a lot); cleared when it reaches this size.
WORD_CACHE_SIZE = 50_000
# fit and transform work on this many texts at a time: their numpy intermediates (a few
# int64 per n-gram occurrence) stay small at 10M names.
TEXT_CHUNK = 200_000


def _expand(token_rows: numpy.ndarray, words: numpy.ndarray, indptr: numpy.ndarray,
            values: numpy.ndarray) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Each token's (row, value) pairs: the values[indptr[w]:indptr[w + 1]] of its word w,
    in token order, as two flat arrays."""
    starts = indptr[words]
    sizes = indptr[words + 1] - starts
    # positions: starts[t] + 0, 1, ..., sizes[t] - 1 for each token t, in token order.
    shift = numpy.repeat(starts - (numpy.cumsum(sizes) - sizes), sizes)
    return numpy.repeat(token_rows, sizes), values[numpy.arange(int(sizes.sum())) + shift]


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
        self._word_ids: Dict[str, Tuple[int, ...]] = {}

    @property
    def is_fitted(self) -> bool:
        """True once `fit` has seen names (the vocab is not empty)."""
        return bool(self.vocab)

    @property
    def n_features(self) -> int:
        """The number of n-grams in the vocab, i.e. the width of `transform`'s rows."""
        return len(self.vocab)

    def ngrams(self, text: str) -> List[str]:
        """The n-grams of `text` for the configured analyzer (word, char, or char_wb: character
        n-grams inside padded words, as scikit-learn's TfidfVectorizer makes them)."""
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
            grams.extend(self._word_ngrams(word))
        return grams

    def _word_ngrams(self, word: str) -> List[str]:
        """char_wb n-grams of one word (of text already lowercased if configured)."""
        grams = []
        padded = f" {word} "
        for n in range(self.ngram_range[0], self.ngram_range[1] + 1):
            if len(padded) <= n:
                # A word no longer than n counts once, whole (sklearn's char_wb rule).
                grams.append(padded)
                break
            grams.extend(padded[i:i + n] for i in range(len(padded) - n + 1))
        return grams

    def _feature_ids(self, text: str) -> List[int]:
        """The vocabulary ids of a text's n-grams, in n-gram order, unknown ones dropped."""
        vocab = self.vocab
        if self.analyzer != "char_wb":
            return [vocab[g] for g in self.ngrams(text) if g in vocab]
        if self.lowercase:
            text = text.lower()
        cache = self._word_ids
        ids: List[int] = []
        for word in text.split():
            word_ids = cache.get(word)
            if word_ids is None:
                word_ids = tuple(vocab[g] for g in self._word_ngrams(word) if g in vocab)
                if len(cache) >= WORD_CACHE_SIZE:
                    cache.clear()
                cache[word] = word_ids
            ids.extend(word_ids)
        return ids

    def fit(self, texts: Sequence[str]) -> "CharNgramTfidf":
        """Learn the n-gram vocab and smoothed idf weights from `texts` (n-grams in fewer than
        `min_df` texts are dropped) and return self."""
        if self.analyzer == "char_wb":
            grams, counts = self._char_wb_doc_freq(texts)
            doc_freq = dict(zip(grams, counts.tolist()))
        else:
            doc_freq = Counter()
            for text in texts:
                doc_freq.update(set(self.ngrams(text)))
        kept = sorted(g for g, df in doc_freq.items() if df >= self.min_df)
        self.vocab = {g: i for i, g in enumerate(kept)}
        self._word_ids = {}
        n_docs = len(texts)
        df = numpy.array([doc_freq[g] for g in kept], dtype=numpy.float64)
        self.idf = (numpy.log((1.0 + n_docs) / (1.0 + df)) + 1.0).astype(numpy.float32)
        return self

    def _tokens(self, texts: Iterable[str]) -> Tuple[numpy.ndarray, numpy.ndarray, List[str]]:
        """Each text's number of words, every word as an index into the distinct words, and
        the distinct words in first-seen order. char_wb n-grams never cross words, so
        n-grams are then worked out once per distinct word instead of once per text."""
        # One flat list of words: a list per text, kept, would make the cyclic garbage
        # collector walk millions of them, which costs more than the splitting.
        lengths = array("q")
        flat: List[str] = []
        lower = self.lowercase
        for text in texts:
            words = (text.lower() if lower else text).split()
            lengths.append(len(words))
            flat += words
        index: Dict[str, int] = defaultdict(lambda: len(index))
        words = numpy.fromiter(map(index.__getitem__, flat), dtype=numpy.int64, count=len(flat))
        return numpy.array(lengths, dtype=numpy.int64), words, list(index)

    def _char_wb_doc_freq(self, texts: Sequence[str]) -> Tuple[List[str], numpy.ndarray]:
        """The char_wb n-grams of `texts` and the number of texts holding each, counted
        with numpy over (text, n-gram) pairs, TEXT_CHUNK texts at a time."""
        gram_index: Dict[str, int] = defaultdict(lambda: len(gram_index))
        slots: Dict[str, int] = {}  # word -> its place in word_indptr
        word_grams = array("q")  # each distinct word's distinct n-grams, concatenated
        word_indptr = array("q", [0])
        df = numpy.zeros(0, dtype=numpy.int64)
        for start in range(0, len(texts), TEXT_CHUNK):
            lengths, words, new_words = self._tokens(texts[start:start + TEXT_CHUNK])
            # The chunk's word indices are its own: map them onto the running word list.
            local = numpy.empty(len(new_words), dtype=numpy.int64)
            for i, word in enumerate(new_words):
                slot = slots.get(word)
                if slot is None:
                    slot = slots[word] = len(word_indptr) - 1
                    word_grams.extend(gram_index[g]
                                      for g in dict.fromkeys(self._word_ngrams(word)))
                    word_indptr.append(len(word_grams))
                local[i] = slot
            rows, grams = _expand(numpy.repeat(numpy.arange(len(lengths)), lengths),
                                  local[words], numpy.frombuffer(word_indptr, dtype=numpy.int64),
                                  numpy.frombuffer(word_grams, dtype=numpy.int64))
            n_grams = len(gram_index)
            # A text counts once per n-gram, however many of its words hold it.
            counts = numpy.bincount(numpy.unique(rows * n_grams + grams) % n_grams,
                                    minlength=n_grams)
            df = numpy.concatenate([df, numpy.zeros(n_grams - len(df), numpy.int64)]) + counts
        return list(gram_index), df

    def _char_wb_feature_ids(self, texts: Sequence[str]) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """Per text, its number of known n-grams, and all their vocabulary ids in n-gram
        order (as _feature_ids gives them), from each distinct word's ids (cached)."""
        lengths, words, distinct = self._tokens(texts)
        vocab, cache = self.vocab, self._word_ids
        per_word = []
        for word in distinct:
            word_ids = cache.get(word)
            if word_ids is None:
                word_ids = tuple(vocab[g] for g in self._word_ngrams(word) if g in vocab)
                if len(cache) >= WORD_CACHE_SIZE:
                    cache.clear()
                cache[word] = word_ids
            per_word.append(word_ids)
        indptr = numpy.zeros(len(per_word) + 1, dtype=numpy.int64)
        numpy.cumsum(numpy.fromiter(map(len, per_word), dtype=numpy.int64, count=len(per_word)),
                     out=indptr[1:])
        flat = numpy.fromiter(chain.from_iterable(per_word), dtype=numpy.int64,
                              count=int(indptr[-1]))
        rows, ids = _expand(numpy.repeat(numpy.arange(len(lengths)), lengths), words, indptr, flat)
        return numpy.bincount(rows, minlength=len(lengths)), ids

    def transform(self, texts: Sequence[str]) -> sparse.csr_matrix:
        """The L2-normalized TF-IDF rows of `texts` as a CSR matrix; n-grams not in the vocab
        are ignored."""
        if len(texts) > TEXT_CHUNK:
            return sparse.vstack([self.transform(texts[start:start + TEXT_CHUNK])
                                  for start in range(0, len(texts), TEXT_CHUNK)], format="csr")
        n_texts, n_features = len(texts), len(self.vocab)
        if self.analyzer == "char_wb":
            lengths, ids = self._char_wb_feature_ids(texts)
        else:
            per_text = [self._feature_ids(text) for text in texts]
            lengths = numpy.fromiter(map(len, per_text), dtype=numpy.int64, count=n_texts)
            ids = numpy.fromiter(chain.from_iterable(per_text), dtype=numpy.int64,
                                 count=int(lengths.sum()))
        # Sorted unique (row, feature) pairs and their counts: each row's term counts in
        # ascending feature order, as a canonical CSR matrix.
        keys, counts = numpy.unique(numpy.repeat(numpy.arange(n_texts), lengths) * n_features
                                    + ids, return_counts=True)
        rows = keys // max(n_features, 1)
        indptr = numpy.zeros(n_texts + 1, dtype=numpy.int64)
        numpy.cumsum(numpy.bincount(rows, minlength=n_texts), out=indptr[1:])
        if self.sublinear_tf:
            # math.log, as before: numpy's log may differ in the last bit.
            distinct, where = numpy.unique(counts, return_inverse=True)
            values = numpy.array([1.0 + math.log(c) for c in distinct.tolist()])[where]
        else:
            values = counts
        matrix = sparse.csr_matrix(
            (numpy.asarray(values, dtype=numpy.float32),
             (keys - rows * n_features).astype(numpy.int32), indptr),
            shape=(n_texts, n_features))
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
        """Settings, vocab and idf as msgpack bytes (no pickle)."""
        return srsly.msgpack_dumps({
            "analyzer": self.analyzer, "ngram_range": list(self.ngram_range),
            "lowercase": self.lowercase, "sublinear_tf": self.sublinear_tf,
            "min_df": self.min_df,
            "vocab": sorted(self.vocab, key=self.vocab.__getitem__),
            "idf": self.idf.tolist(),
        })

    def from_bytes(self, data: bytes) -> "CharNgramTfidf":
        """Load a vectorizer saved by `to_bytes` into this one and return it."""
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


def additive_vectorizer(model) -> Optional[CharNgramTfidf]:
    """The CharNgramTfidf of a plain TF-IDF encoder whose rows are sums over words
    (char_wb analyzer, raw tf), or None for any other encoder: the vectorizer the word
    postings (index/word_postings.py) can split over words."""
    if model is None or getattr(model, "name", None) != "tfidf_encoder":
        return None
    vectorizer = model.attrs.get("vectorizer")
    if not isinstance(vectorizer, CharNgramTfidf) or not vectorizer.is_fitted:
        return None
    if vectorizer.analyzer != "char_wb" or vectorizer.sublinear_tf:
        return None
    return vectorizer


def _tfidf_init(model: Model, X: Optional[List[str]] = None, Y=None) -> None:
    if X is not None:
        # A Sequence (a packed table of names) is read a slice at a time, not copied.
        model.attrs["vectorizer"].fit(X if isinstance(X, Sequence) else list(X))


def _tfidf_forward(model: Model, texts: List[str], is_train: bool):
    vectorizer: CharNgramTfidf = model.attrs["vectorizer"]
    if not vectorizer.is_fitted:
        raise ValueError(Errors.E201.format(name="TF-IDF"))
    matrix = vectorizer.transform(texts)

    def backprop(d_output):
        # Fitted statistics, not learned weights: there is nothing to update.
        return []

    return matrix, backprop
