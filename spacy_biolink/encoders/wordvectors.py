"""A word-vector table (word -> float32 row), for the encoders that start from word
embeddings (BNE, CCA+DAN, the Siamese verifier).

The vectors are trained in spacy_biolink.training.wordvectors. Stored as a word list and a
float32 array, never pickled.
"""
import json
import re
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence

import numpy
import srsly
from thinc.model import deserialize_attr, serialize_attr
from thinc.api import Model

from ..errors import BioLinkError, Errors
from ..io.files import atomic_directory, read_text
from ..io.util import PathLike

_TOKEN = re.compile(r"[^\W_]+")
WORDS_FILE = "words.txt"
VECTORS_FILE = "vectors.npy"
META_FILE = "meta.json"


def tokenize(text: str) -> List[str]:
    """Lowercased alphanumeric runs: "X-linked Alport's" -> ["x", "linked", "alport", "s"],
    the same split as the linker's punctuation folding."""
    return _TOKEN.findall(text.lower())


class WordVectors:
    """A fixed table: word -> row of `vectors`. Unknown words have no vector."""

    def __init__(self, words: Sequence[str] = (), vectors: Optional[numpy.ndarray] = None):
        self.words: List[str] = list(words)
        dim = 0 if vectors is None else vectors.shape[1]
        self.vectors = (numpy.zeros((0, dim), numpy.float32) if vectors is None
                        else numpy.ascontiguousarray(vectors, dtype=numpy.float32))
        if len(self.words) != len(self.vectors):
            raise ValueError(f"{len(self.words)} words but {len(self.vectors)} vectors")
        self.index: Dict[str, int] = {w: i for i, w in enumerate(self.words)}

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: str) -> bool:
        return word in self.index

    @property
    def dim(self) -> int:
        """The width of the vectors."""
        return int(self.vectors.shape[1])

    def ids(self, text: str) -> List[int]:
        """Row ids of the known words of `text`, in order (unknown words left out)."""
        index = self.index
        return [index[w] for w in tokenize(text) if w in index]

    def mean(self, text: str) -> numpy.ndarray:
        """Mean vector of the known words (zeros when none is known)."""
        rows = self.ids(text)
        if not rows:
            return numpy.zeros(self.dim, numpy.float32)
        return self.vectors[rows].mean(axis=0)

    def mean_many(self, texts: Iterable[str]) -> numpy.ndarray:
        """`mean` of each text, stacked into an (n, dim) float32 array."""
        return numpy.stack([self.mean(t) for t in texts]) if texts else \
            numpy.zeros((0, self.dim), numpy.float32)

    def coverage(self, texts: Iterable[str]) -> float:
        """Share of the tokens of `texts` that have a vector."""
        known = total = 0
        for text in texts:
            tokens = tokenize(text)
            total += len(tokens)
            known += sum(t in self.index for t in tokens)
        return known / total if total else 0.0

    def to_bytes(self) -> bytes:
        """Words, width and vectors as msgpack bytes."""
        return srsly.msgpack_dumps({"words": self.words, "dim": self.dim,
                                    "vectors": self.vectors.tobytes()})

    def from_bytes(self, data: bytes) -> "WordVectors":
        """Load vectors saved by `to_bytes` into this object and return it."""
        msg = srsly.msgpack_loads(data)
        vectors = numpy.frombuffer(msg["vectors"], dtype=numpy.float32).reshape(-1, msg["dim"])
        self.__init__(msg["words"], vectors.copy())
        return self

    def to_disk(self, path: PathLike, meta: Optional[Dict] = None) -> None:
        """Save the words, vectors (.npy) and `meta` to directory `path`, atomically."""
        with atomic_directory(path, force=True) as tmp:
            (tmp / WORDS_FILE).write_text("\n".join(self.words) + "\n", encoding="utf8")
            numpy.save(tmp / VECTORS_FILE, self.vectors)
            (tmp / META_FILE).write_text(json.dumps(meta or {}, indent=2), encoding="utf8")

    @classmethod
    def from_disk(cls, path: PathLike) -> "WordVectors":
        """Load vectors saved by `to_disk` (never unpickling). Raises BioLinkError when a file
        is missing or words and vector rows differ in number."""
        path = Path(path)
        for name in (WORDS_FILE, VECTORS_FILE):
            if not (path / name).is_file():
                raise BioLinkError(Errors.E601.format(path=path, name=name))
        words = read_text(path / WORDS_FILE, "Word list").split("\n")[:-1]
        vectors = numpy.load(path / VECTORS_FILE, allow_pickle=False)
        if len(words) != len(vectors):
            raise BioLinkError(Errors.E602.format(path=path, words=len(words), rows=len(vectors)))
        return cls(words, vectors)


@serialize_attr.register(WordVectors)
def _serialize_vectors(_, value: WordVectors, name: str, model: Model) -> bytes:
    return value.to_bytes()


@deserialize_attr.register(WordVectors)
def _deserialize_vectors(_, value: bytes, name: str, model: Model) -> WordVectors:
    return WordVectors().from_bytes(value)


