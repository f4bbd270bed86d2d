"""The Siamese synonymy verifier as a thinc Model: List[(name, name)] -> float32 probabilities.

The word list lives in the model as a serialized attr (no pickle) and the weights in the
wrapped torch module (safetensors), so `model.from_bytes` restores everything; the
config block (`spacy-biolink.SiameseVerifier.v1`) fixes every shape.
"""
from typing import List, Sequence, Tuple

import numpy
import srsly
from thinc.api import ArgsKwargs, Model
from thinc.model import deserialize_attr, serialize_attr

from ..wordvectors import tokenize

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
        rows = [self.ids(t) for t in texts]
        lengths = numpy.asarray([len(r) for r in rows], dtype=numpy.int64)
        out = numpy.full((len(rows), int(lengths.max()) if rows else 1), PAD_ID, numpy.int64)
        for i, row in enumerate(rows):
            out[i, :len(row)] = row
        return out, lengths

    def to_bytes(self) -> bytes:
        """The word list as msgpack bytes."""
        return srsly.msgpack_dumps({"words": self.words})

    def from_bytes(self, data: bytes) -> "WordVocab":
        """Load a word list saved by `to_bytes` into this vocab and return it."""
        self.__init__(srsly.msgpack_loads(data)["words"])
        return self


@serialize_attr.register(WordVocab)
def _serialize_vocab(_, value: WordVocab, name: str, model: Model) -> bytes:
    return value.to_bytes()


@deserialize_attr.register(WordVocab)
def _deserialize_vocab(_, value: bytes, name: str, model: Model) -> WordVocab:
    return WordVocab().from_bytes(value)


def pair_arrays(vocab: WordVocab, pairs: Sequence[Pair]) -> Tuple[numpy.ndarray, ...]:
    """The (ids, lengths) arrays of the left and the right names of `pairs`, for the network."""
    left_ids, left_lengths = vocab.batch([a for a, _ in pairs])
    right_ids, right_lengths = vocab.batch([b for _, b in pairs])
    return left_ids, left_lengths, right_ids, right_lengths


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


def siamese_verifier(n_vocab: int, embed_dim: int, lstm_hidden: int,
                     dense_sizes: Sequence[int], attention: bool, dropout: float,
                     batch_size: int) -> Model[List[Pair], numpy.ndarray]:
    """A thinc model scoring (mention, candidate name) pairs with a siamese LSTM network:
    the probability that both name the same concept. Its word vocab is set when training."""
    from .torch_modules.siamese import SiameseNet
    from .torch_wrapper import wrap_torch_module

    net = wrap_torch_module(SiameseNet(n_vocab, embed_dim, lstm_hidden, tuple(dense_sizes),
                                       attention, dropout),
                            convert_inputs=_convert_inputs, convert_outputs=_convert_outputs)
    return Model("siamese_verifier", _forward, layers=[net],
                 attrs={"vocab": WordVocab(), "batch_size": batch_size, "output": "probability"})


def _forward(model: Model, pairs: List[Pair], is_train: bool):
    vocab: WordVocab = model.attrs["vocab"]
    net = model.layers[0]
    if is_train:
        probs, backprop_net = net(pair_arrays(vocab, pairs), is_train)
        return probs, lambda d_probs: (backprop_net(d_probs), pairs)[1]
    batch_size = model.attrs["batch_size"]
    chunks = [net.predict(pair_arrays(vocab, pairs[i:i + batch_size]))
              for i in range(0, len(pairs), batch_size)]
    probs = numpy.concatenate(chunks) if chunks else numpy.zeros((0,), numpy.float32)
    return probs, lambda d_probs: pairs
