"""The fast name encoder without torch: layers/fast.py's residual CNN, forward only, in
numpy, so that a linker over a trained fast encoder runs where torch is not installed
(the core install and the packaged pipelines; decision 0010).

`train` writes the torch encoder; `init-linker --encoder DIR` builds the linker over this
one, its weights copied from DIR's (`torch_free_block`, `copy_weights`), so only the
build needs torch. The weights are thinc params (msgpack arrays, no pickle), the
tokenizer the same `tokenizers` JSON as the torch encoder's. Texts are encoded grouped by
token count, as FastNameEncoder.v2 does, so no position is padding; the vectors equal
the torch encoder's up to float rounding (tests/test_fast_numpy.py).
"""
from typing import Dict, List, Optional, Tuple

import numpy
from thinc.api import Model

from ..errors import BioLinkError, Errors
from .transformer import NameTokenizer, _no_backprop

NUMPY_ARCHITECTURE = "spacy-biolink.FastNameEncoderNumpy.v1"
# The torch architectures whose trained weights this one runs (same sizes, same forward).
TORCH_ARCHITECTURES = ("spacy-biolink.FastNameEncoder.v1", "spacy-biolink.FastNameEncoder.v2")
HYBRID_ARCHITECTURE = "spacy-biolink.HybridEncoder.v1"


def fast_name_encoder_numpy(vocab_size: int = 0, hidden_width: int = 128, width: int = 128,
                            n_layers: int = 2, kernel_size: int = 3, max_length: int = 25,
                            normalize: bool = True, batch_size: int = 1024
                            ) -> Model[List[str], numpy.ndarray]:
    """The fast encoder's forward pass in numpy; the sizes are the trained encoder's, the
    weights are set by `copy_weights` (or read with the pipeline). Its token table is the
    trained one already mapped to hidden_width (embedding times the input layer, plus its
    bias): a lookup then stands for the trained encoder's first matrix product."""
    if vocab_size < 1:
        raise BioLinkError(Errors.E690.format(vocab_size=vocab_size))
    if min(hidden_width, width, n_layers + 1, kernel_size) < 1 or kernel_size % 2 == 0:
        raise BioLinkError(Errors.E691.format(embed_dim="-", hidden_width=hidden_width,
                                              width=width, n_layers=n_layers,
                                              kernel_size=kernel_size))
    params: Dict[str, Optional[numpy.ndarray]] = {"embedding": None, "output_W": None,
                                                  "output_b": None}
    for i in range(n_layers):
        params.update({f"conv{i}_W": None, f"conv{i}_b": None})
    return Model("fast_name_encoder_numpy", _forward, init=_init, params=params,
                 dims={"vocab_size": vocab_size, "hidden_width": hidden_width, "width": width,
                       "n_layers": n_layers, "kernel_size": kernel_size},
                 attrs={"tokenizer": NameTokenizer(max_length), "output": "dense",
                        "similarity": "cosine" if normalize else "inner_product",
                        "normalize": normalize, "batch_size": batch_size})


def _init(model: Model, X=None, Y=None) -> None:
    # Nothing to learn here: the weights come from a trained torch encoder.
    if not model.attrs["tokenizer"].is_set or not model.has_param("embedding"):
        raise BioLinkError(Errors.E698)


def _forward(model: Model, texts: List[str], is_train: bool):
    if is_train:
        raise BioLinkError(Errors.E655)
    return embed_numpy(model, list(texts)), _no_backprop


def embed_numpy(model: Model, texts: List[str]) -> numpy.ndarray:
    """One float32 row per text (L2-normalised when the model says so), texts of one token
    count encoded together in batches of attrs["batch_size"]."""
    out = numpy.zeros((len(texts), model.get_dim("width")), dtype=numpy.float32)
    if not texts:
        return out
    ids, _, lengths, groups = groups_by_token_count(model, texts)
    batch_size = model.attrs["batch_size"]
    for group in groups:
        length = int(lengths[group[0]])
        for start in range(0, len(group), batch_size):
            rows = group[start:start + batch_size]
            out[rows] = _encode(model, ids[rows, :length])
    if model.attrs["normalize"]:
        # torch.nn.functional.normalize's rule: x / max(|x|, 1e-12)
        out /= numpy.maximum(numpy.linalg.norm(out, axis=1, keepdims=True), 1e-12)
    return out


def groups_by_token_count(model: Model, texts: List[str]
                          ) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray,
                                     List[numpy.ndarray]]:
    """The texts' token ids and mask (padded to the longest), their token counts, and
    their positions grouped by token count, fewest first: a pass over one group pads
    nothing (the torch encoder's embed_by_length groups the same way)."""
    ids, mask = model.attrs["tokenizer"](texts)
    lengths = mask.sum(axis=1)
    order = numpy.argsort(lengths, kind="stable")
    bounds = numpy.flatnonzero(numpy.diff(lengths[order])) + 1
    return ids, mask, lengths, numpy.split(order, bounds)


def _encode(model: Model, ids: numpy.ndarray) -> numpy.ndarray:
    """Unnormalised vectors of a (batch, length) block of token ids, none of them padding."""
    batch, length = ids.shape
    hidden = model.get_dim("hidden_width")
    if length == 0:
        pooled = numpy.zeros((batch, 2 * hidden), dtype=numpy.float32)
    else:
        # Every product is one 2-D matrix product over the block's batch x length rows:
        # numpy multiplies stacked 3-D arrays slice by slice, ten times slower.
        h = model.get_param("embedding")[ids.reshape(-1)]
        kernel = model.get_dim("kernel_size")
        pad = kernel // 2
        for i in range(model.get_dim("n_layers")):
            weights, bias = model.get_param(f"conv{i}_W"), model.get_param(f"conv{i}_b")
            padded = numpy.zeros((batch, length + 2 * pad, hidden), dtype=numpy.float32)
            padded[:, pad:pad + length] = h.reshape(batch, length, hidden)
            # torch's Conv1d is a cross-correlation: output t sees inputs t-pad .. t+pad,
            # laid side by side (batch x length, kernel x hidden) for one product.
            windows = numpy.concatenate([padded[:, j:j + length] for j in range(kernel)],
                                        axis=2).reshape(batch * length, kernel * hidden)
            stacked = weights.transpose(2, 1, 0).reshape(kernel * hidden, hidden)
            h = h + numpy.maximum(windows @ stacked + bias, 0.0)
        h = h.reshape(batch, length, hidden)
        pooled = numpy.concatenate([h.max(axis=1), h.mean(axis=1)], axis=1)
    return pooled @ model.get_param("output_W").T + model.get_param("output_b")


def torch_free_block(block: Dict) -> Optional[Dict]:
    """The [model] block that runs `block`'s trained fast encoder without torch (a fast
    encoder alone, or as the dense part of a hybrid), or None when it holds none."""
    name = block.get("@architectures")
    if name in TORCH_ARCHITECTURES:
        return {"@architectures": NUMPY_ARCHITECTURE,
                **{key: value for key, value in block.items()
                   if key not in ("@architectures", "dropout", "embed_dim")}}
    if name == HYBRID_ARCHITECTURE and isinstance(block.get("dense"), dict):
        dense = torch_free_block(block["dense"])
        return {**block, "dense": dense} if dense is not None else None
    return None


def copy_weights(trained: Model, target: Model) -> None:
    """Give `target` (built from `torch_free_block`'s block) the weights and tokenizer of
    `trained` (the torch model that block came from), node by node."""
    from .torch_wrapper import torch_module

    # The torch encoder's node holds its PyTorchWrapper as a layer, so the two trees are
    # paired by their fast encoders, in walk order.
    sources = [node for node in trained.walk() if node.name == "fast_name_encoder"]
    targets = [node for node in target.walk() if node.name == "fast_name_encoder_numpy"]
    if not targets or len(sources) != len(targets):
        raise BioLinkError(Errors.E699.format(source=trained.name, target=target.name))
    for source, node in zip(sources, targets):
        module = torch_module(source)
        state = {key: value.detach().cpu().float().numpy()
                 for key, value in module.state_dict().items()}
        table = state["embedding.weight"]
        if "input.weight" in state:  # layers/fast.py maps embed_dim to hidden_width
            table = table @ state["input.weight"].T + state["input.bias"]
        node.set_param("embedding", numpy.ascontiguousarray(table, dtype=numpy.float32))
        for i in range(node.get_dim("n_layers")):
            node.set_param(f"conv{i}_W", state[f"convolutions.{i}.weight"].copy())
            node.set_param(f"conv{i}_b", state[f"convolutions.{i}.bias"].copy())
        node.set_param("output_W", state["output.weight"].copy())
        node.set_param("output_b", state["output.bias"].copy())
        tokenizer = source.attrs["tokenizer"]
        node.attrs["tokenizer"] = NameTokenizer(node.attrs["tokenizer"].max_length,
                                                tokenizer.tokenizer_json)
