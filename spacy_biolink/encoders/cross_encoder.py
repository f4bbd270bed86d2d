"""The cross-encoder reranker's thinc Model: List[(query, candidate)] -> one logit per pair.

Like the transformer name encoders (transformer.py), a saved reranker is self-contained:
the backbone's config sits in the architecture block, the tokenizer (tokenizer.json as a
string) goes into the model bytes as msgpack, the weights as safetensors.
"""
from typing import List, Optional, Sequence, Tuple

import numpy
from thinc.api import Model
from thinc.model import deserialize_attr, serialize_attr

from ..errors import BioLinkError, Errors
from .torch_wrapper import torch_module, wrap_torch_module
from .transformer import NameTokenizer, _init_noop, _no_backprop

Pair = Tuple[str, str]


class PairTokenizer(NameTokenizer):
    """A fast tokenizer over text pairs: [CLS] query [SEP] candidate [SEP] for BERT-like
    backbones, the longer side cut first when the pair exceeds max_length (the query
    starts with the mention itself, so a cut eats the far context, not the mention)."""

    def _get(self):
        tokenizer = super()._get()
        tokenizer.enable_truncation(self.max_length, strategy="longest_first")
        return tokenizer

    def pairs(self, pairs: Sequence[Pair]) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
        """(input_ids, attention_mask, token_type_ids), int64, padded to the longest pair."""
        encodings = self._get().encode_batch([(a, b) for a, b in pairs])
        width = max((len(e.ids) for e in encodings), default=1)
        ids = numpy.full((len(encodings), width), self._pad_id, dtype=numpy.int64)
        mask = numpy.zeros((len(encodings), width), dtype=numpy.int64)
        types = numpy.zeros((len(encodings), width), dtype=numpy.int64)
        for row, encoding in enumerate(encodings):
            n = len(encoding.ids)
            ids[row, :n] = encoding.ids
            mask[row, :n] = 1
            types[row, :n] = encoding.type_ids
        return ids, mask, types


@serialize_attr.register(PairTokenizer)
def _serialize_pair_tokenizer(_, value: PairTokenizer, name: str, model: Model) -> bytes:
    return value.to_bytes()


@deserialize_attr.register(PairTokenizer)
def _deserialize_pair_tokenizer(_, value: bytes, name: str, model: Model) -> PairTokenizer:
    return PairTokenizer(0).from_bytes(value)


def cross_encoder_reranker(backbone_config: Optional[dict], max_length: int = 64,
                           use_context: bool = True, batch_size: int = 64
                           ) -> Model[List[Pair], numpy.ndarray]:
    """List[(query, candidate)] -> float32 (n,) logits (without the retriever's score).
    use_context: the query holds the mention's sentence (False: the mention alone)."""
    if not backbone_config:
        raise BioLinkError(Errors.E652.format(name="CrossEncoderReranker"))
    from .layers.cross_encoder import CrossEncoderScorer

    module = CrossEncoderScorer(backbone_config)
    return Model("cross_encoder_reranker", _forward, layers=[wrap_torch_module(module)],
                 init=_init_noop,
                 attrs={"tokenizer": PairTokenizer(max_length), "use_context": use_context,
                        "batch_size": batch_size})


def pair_logits(model: Model, pairs: Sequence[Pair],
                retriever_scores: Optional[Sequence[float]] = None) -> numpy.ndarray:
    """Logits of `pairs` without gradients, in batches of attrs["batch_size"], pairs of
    similar length together (less padding). With `retriever_scores`, each logit gains
    the learned retriever_weight times its pair's score."""
    import torch

    module = torch_module(model)
    tokenizer: PairTokenizer = model.attrs["tokenizer"]
    batch_size = model.attrs["batch_size"]
    device = next(module.parameters()).device
    scores = None if retriever_scores is None else numpy.asarray(retriever_scores, numpy.float32)
    was_training = module.training
    module.eval()
    out = numpy.zeros((len(pairs),), dtype=numpy.float32)
    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
    with torch.no_grad():
        for start in range(0, len(order), batch_size):
            rows = order[start:start + batch_size]
            ids, mask, types = tokenizer.pairs([pairs[i] for i in rows])
            extra = None if scores is None else torch.from_numpy(scores[rows]).to(device)
            logits = module(torch.from_numpy(ids).to(device), torch.from_numpy(mask).to(device),
                            torch.from_numpy(types).to(device), extra)
            out[rows] = logits.float().cpu().numpy()
    module.train(was_training)
    return out


def pair_logits_with_grad(model: Model, pairs: Sequence[Pair], retriever_scores=None):
    """Logits of `pairs` through the torch module with gradients on (the training step)."""
    import torch

    module = torch_module(model)
    device = next(module.parameters()).device
    ids, mask, types = model.attrs["tokenizer"].pairs(pairs)
    extra = None if retriever_scores is None else \
        torch.as_tensor(numpy.asarray(retriever_scores, numpy.float32)).to(device)
    return module(torch.from_numpy(ids).to(device), torch.from_numpy(mask).to(device),
                  torch.from_numpy(types).to(device), extra)


def retriever_weight(model: Model) -> float:
    """The learned weight of the retriever's score beside the cross-encoder's logit."""
    return float(torch_module(model).retriever_weight.detach().cpu())


def _forward(model: Model, pairs: List[Pair], is_train: bool):
    return pair_logits(model, list(pairs)), _no_backprop
