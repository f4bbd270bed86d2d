"""The Siamese synonymy verifier as a thinc Model: List[(name, name)] -> float32 probabilities.

The word list lives in the model as a serialized attr (no pickle) and the weights in the
wrapped torch module (safetensors), so `model.from_bytes` restores everything; the
config block (`spacy-biolink.SiameseVerifier.v1`) fixes every shape.

`spacy-biolink.SiameseVerifier.v2` (seed 004's input-embedding variants) adds:
- inputs = "subwords": names are cut into a transformer tokenizer's WordPiece units
  (the tokenizer JSON is a serialized attr, SubwordVocab), so an unseen inflection
  ("hypercalcemic") shares most units with a known one ("hypercalcemia"). The embedding
  rows are static token vectors extracted once from the transformer at training time
  (encoders/token_embeddings.py) and saved with the weights: linking never runs it.
- tfidf_feature: the TF-IDF character-trigram cosine of the two names (a vectorizer
  fitted on the training names, a serialized attr) as an input of the output unit.
"""
from typing import List, Sequence, Tuple

import numpy
import srsly
from thinc.api import ArgsKwargs, Model
from thinc.model import deserialize_attr, serialize_attr

from ..errors import BioLinkError, Errors
from .wordvectors import tokenize
from .tfidf import CharNgramTfidf

PAD_ID = 0
UNK_ID = 1
N_RESERVED = 2  # padding and unknown word come before the vocabulary
MAX_WORDS = 32

Pair = Tuple[str, str]


class WordVocab:
    """word -> embedding row (rows 0 and 1 are padding and unknown)."""

    def __init__(self, words: Sequence[str] = ()):
        self.words: List[str] = list(words)
        self.index = {w: i + N_RESERVED for i, w in enumerate(self.words)}

    def __len__(self) -> int:
        return len(self.words)

    def ids(self, text: str) -> List[int]:
        """Every word of `text` (unknown ones as UNK_ID), at least one, at most MAX_WORDS."""
        ids = [self.index.get(w, UNK_ID) for w in tokenize(text)[:MAX_WORDS]]
        return ids or [UNK_ID]

    def batch(self, texts: Sequence[str]) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """Padded (n, longest) int64 ids and (n,) lengths."""
        return _padded([self.ids(t) for t in texts])

    def to_bytes(self) -> bytes:
        """The word list as msgpack bytes."""
        return srsly.msgpack_dumps({"words": self.words})

    def from_bytes(self, data: bytes) -> "WordVocab":
        """Load a word list saved by `to_bytes` into this vocab and return it."""
        self.__init__(srsly.msgpack_loads(data)["words"])
        return self


def _padded(rows: List[List[int]]) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Rows of ids as a (n, longest) int64 array padded with PAD_ID, and their lengths."""
    lengths = numpy.asarray([len(r) for r in rows], dtype=numpy.int64)
    out = numpy.full((len(rows), int(lengths.max()) if rows else 1), PAD_ID, numpy.int64)
    for i, row in enumerate(rows):
        out[i, :len(row)] = row
    return out, lengths


@serialize_attr.register(WordVocab)
def _serialize_vocab(_, value: WordVocab, name: str, model: Model) -> bytes:
    return value.to_bytes()


@deserialize_attr.register(WordVocab)
def _deserialize_vocab(_, value: bytes, name: str, model: Model) -> WordVocab:
    return WordVocab().from_bytes(value)


class SubwordVocab:
    """name -> subword ids of a transformer tokenizer (kept as its JSON string, safe to
    save and load), without the [CLS]/[SEP] marks: the rows of the extracted table."""

    def __init__(self, tokenizer_json: str = ""):
        self.tokenizer_json = tokenizer_json
        self._tokenizer = None

    def __len__(self) -> int:
        return self._get().get_vocab_size() if self.tokenizer_json else 0

    def _get(self):
        if self._tokenizer is None:
            if not self.tokenizer_json:
                raise BioLinkError(Errors.E660)
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_str(self.tokenizer_json)
            tokenizer.no_padding()
            tokenizer.no_truncation()
            self._tokenizer = tokenizer
            self._unk = next((tokenizer.token_to_id(t) for t in ("[UNK]", "<unk>")
                              if tokenizer.token_to_id(t) is not None), UNK_ID)
        return self._tokenizer

    def batch(self, texts: Sequence[str]) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """Padded (n, longest) int64 subword ids and (n,) lengths (at least one unit, at
        most 4 * MAX_WORDS, as WordVocab.batch)."""
        tokenizer = self._get()
        encodings = tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return _padded([e.ids[:4 * MAX_WORDS] or [self._unk] for e in encodings])

    def to_bytes(self) -> bytes:
        """The tokenizer JSON as msgpack bytes."""
        return srsly.msgpack_dumps({"tokenizer_json": self.tokenizer_json})

    def from_bytes(self, data: bytes) -> "SubwordVocab":
        """Load a tokenizer saved by `to_bytes` into this vocab and return it."""
        self.__init__(srsly.msgpack_loads(data)["tokenizer_json"])
        return self


@serialize_attr.register(SubwordVocab)
def _serialize_subwords(_, value: SubwordVocab, name: str, model: Model) -> bytes:
    return value.to_bytes()


@deserialize_attr.register(SubwordVocab)
def _deserialize_subwords(_, value: bytes, name: str, model: Model) -> SubwordVocab:
    return SubwordVocab().from_bytes(value)


def pair_arrays(vocab, pairs: Sequence[Pair]) -> Tuple[numpy.ndarray, ...]:
    """The (ids, lengths) arrays of the left and the right names of `pairs`, for the network
    (`vocab`: a WordVocab or a SubwordVocab)."""
    left_ids, left_lengths = vocab.batch([a for a, _ in pairs])
    right_ids, right_lengths = vocab.batch([b for _, b in pairs])
    return left_ids, left_lengths, right_ids, right_lengths


def tfidf_cosines(vectorizer: CharNgramTfidf, pairs: Sequence[Pair]) -> numpy.ndarray:
    """The TF-IDF cosine of each pair's two names, float32 (rows are L2-normalised)."""
    if not pairs:
        return numpy.zeros((0,), numpy.float32)
    left = vectorizer.transform([a for a, _ in pairs])
    right = vectorizer.transform([b for _, b in pairs])
    return numpy.asarray(left.multiply(right).sum(axis=1), dtype=numpy.float32).ravel()


def pair_inputs(model: Model, pairs: Sequence[Pair]) -> Tuple[numpy.ndarray, ...]:
    """What the verifier's network takes for `pairs`: pair_arrays, then the TF-IDF
    cosines when the model was built with tfidf_feature."""
    arrays = pair_arrays(model.attrs["vocab"], pairs)
    vectorizer = model.attrs.get("tfidf")
    if vectorizer is None:
        return arrays
    if not vectorizer.is_fitted:
        raise BioLinkError(Errors.E661)
    return arrays + (tfidf_cosines(vectorizer, pairs),)


def _convert_inputs(model: Model, arrays, is_train: bool):
    import torch

    tensors = tuple(torch.as_tensor(a) for a in arrays)
    return ArgsKwargs(args=tensors, kwargs={}), lambda d_inputs: arrays


def _convert_outputs(model: Model, inputs_outputs, is_train: bool):
    import torch

    _, probs = inputs_outputs

    def backprop(d_probs) -> ArgsKwargs:
        return ArgsKwargs(args=(probs,), kwargs={"grad_tensors": (torch.as_tensor(d_probs),)})

    return probs.detach().cpu().numpy().astype(numpy.float32), backprop


INPUTS = ("words", "subwords")


def siamese_verifier_v2(n_vocab: int, embed_dim: int, lstm_hidden: int,
                        dense_sizes: Sequence[int], attention: bool, dropout: float,
                        batch_size: int, inputs: str = "subwords",
                        tfidf_feature: bool = False) -> Model[List[Pair], numpy.ndarray]:
    """A thinc model scoring (mention, candidate name) pairs with a siamese LSTM network:
    the probability that both name the same concept. `inputs`: its units, "words" (a
    word vocab) or "subwords" (a transformer tokenizer's); with `tfidf_feature`, the
    names' TF-IDF character-trigram cosine beside the learnt distance. The vocab, the
    table and the TF-IDF are set by the trainer."""
    from .layers.siamese import SiameseNet
    from .torch_wrapper import wrap_torch_module

    if inputs not in INPUTS:
        raise BioLinkError(Errors.E662.format(value=inputs, options=", ".join(INPUTS)))
    net = wrap_torch_module(SiameseNet(n_vocab, embed_dim, lstm_hidden, tuple(dense_sizes),
                                       attention, dropout, string_feature=tfidf_feature),
                            convert_inputs=_convert_inputs, convert_outputs=_convert_outputs)
    attrs = {"vocab": WordVocab() if inputs == "words" else SubwordVocab(),
             "batch_size": batch_size, "output": "probability", "inputs": inputs}
    if tfidf_feature:
        attrs["tfidf"] = CharNgramTfidf("char_wb", (3, 3))
    return Model("siamese_verifier", _forward, layers=[net], attrs=attrs)


def _forward(model: Model, pairs: List[Pair], is_train: bool):
    net = model.layers[0]
    if is_train:
        probs, backprop_net = net(pair_inputs(model, pairs), is_train)
        return probs, lambda d_probs: (backprop_net(d_probs), pairs)[1]
    batch_size = model.attrs["batch_size"]
    chunks = [net.predict(pair_inputs(model, pairs[i:i + batch_size]))
              for i in range(0, len(pairs), batch_size)]
    probs = numpy.concatenate(chunks) if chunks else numpy.zeros((0,), numpy.float32)
    return probs, lambda d_probs: pairs
