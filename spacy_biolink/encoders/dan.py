"""CCA+DAN name encoder (Fivez et al., 2021): mean word vector -> CCA -> DAN.

A name's input is the mean of its words' pre-trained vectors (spacy_biolink.encoders.wordvectors).
CCA, fitted between name vectors and their concepts' prototypes (mean name vectors),
projects the input; a deep averaging network (Linear -> ReLU -> dropout -> Linear,
layers/dan.py) maps it to the output space, which is compared by cosine.

Everything a trained encoder needs is in its model bytes: the word-vector table as a thinc
attr (msgpack), the CCA projections and weights as safetensors. The [model] block holds
the sizes (width = the vectors' dimension, hidden_width), so spacy.load rebuilds it.
"""
from typing import List, Optional, Tuple

import numpy
from thinc.api import Model

from ..errors import BioLinkError, Errors
from .wordvectors import WordVectors
from .torch_wrapper import torch_module, wrap_torch_module


def dan_encoder(width: int, hidden_width: int, dropout: float = 0.5, normalize: bool = True
                ) -> Model[List[str], numpy.ndarray]:
    """A thinc Model: List[str] -> float32 rows (L2-normalised if `normalize`).

    It has no word vectors until trained (`python -m spacy_biolink train configs/dan.cfg`)
    or loaded (from_bytes / init-linker --encoder DIR); width must equal their dimension.
    """
    if width < 1 or hidden_width < 1:
        raise BioLinkError(Errors.E620.format(width=width, hidden_width=hidden_width))
    from .layers.dan import DeepAveragingNetwork

    network = wrap_torch_module(DeepAveragingNetwork(width, hidden_width, dropout))
    return Model(
        "dan_encoder",
        _dan_forward,
        init=_dan_init,
        layers=[network],
        attrs={"vectors": WordVectors(), "output": "dense", "similarity": "cosine",
               "normalize": normalize},
        dims={"nO": width},
    )


def dan_network(model: Model):
    """The DeepAveragingNetwork nn.Module of a dan_encoder (for the trainer)."""
    return torch_module(model)


def set_word_vectors(model: Model, vectors: WordVectors) -> None:
    """Give a DAN encoder its word vectors; their width must match the model's output width
    (BioLinkError otherwise)."""
    if vectors.dim != model.get_dim("nO"):
        raise BioLinkError(Errors.E621.format(dim=vectors.dim, width=model.get_dim("nO")))
    model.attrs["vectors"] = vectors


def _dan_init(model: Model, X: Optional[List[str]] = None, Y=None) -> None:
    # A trained encoder keeps everything: bio_linker calls initialize(X=names) on it.
    if not len(model.attrs["vectors"]):
        raise BioLinkError(Errors.E622)


def _dan_forward(model: Model, texts: List[str], is_train: bool):
    if is_train:
        raise BioLinkError(Errors.E623)
    vectors: WordVectors = model.attrs["vectors"]
    if not len(vectors):
        raise BioLinkError(Errors.E622)
    inputs = vectors.mean_many(list(texts))
    if not len(inputs):
        return numpy.zeros((0, model.get_dim("nO")), numpy.float32), _no_backprop
    outputs = numpy.asarray(model.layers[0].predict(inputs), dtype=numpy.float32)
    if model.attrs["normalize"]:
        outputs = l2_normalize(outputs)
    return outputs, _no_backprop


def _no_backprop(d_output):
    raise BioLinkError(Errors.E623)


def l2_normalize(rows: numpy.ndarray) -> numpy.ndarray:
    """Rows scaled to unit length; all-zero rows (no known word) stay zero."""
    norms = numpy.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (rows / norms).astype(numpy.float32)


# CCA ------------------------------------------------------------------------

def fit_cca(names: numpy.ndarray, prototypes: numpy.ndarray, *, regularization: float = 1e-3
            ) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray, numpy.ndarray]:
    """Canonical correlation analysis between paired rows, keeping every dimension.

    names, prototypes: (n, d) arrays, row i = a name's vector and its concept's prototype.
    regularization: ridge added to each covariance, relative to its mean variance (the
        prototypes of one-name concepts equal their names, so the covariances can be
        near singular).
    Returns (name_mean, name_projection, prototype_mean, prototype_projection) such that
    (X - mean) @ projection gives the canonical variates, most correlated first.
    """
    x = numpy.asarray(names, dtype=numpy.float64)
    y = numpy.asarray(prototypes, dtype=numpy.float64)
    if x.shape != y.shape or x.ndim != 2 or len(x) < 2:
        raise BioLinkError(Errors.E624.format(names=x.shape, prototypes=y.shape))
    x_mean, y_mean = x.mean(axis=0), y.mean(axis=0)
    xc, yc = x - x_mean, y - y_mean
    n = len(x)
    cxx, cyy, cxy = xc.T @ xc / n, yc.T @ yc / n, xc.T @ yc / n
    x_whiten = _inverse_sqrt(cxx, regularization)
    y_whiten = _inverse_sqrt(cyy, regularization)
    left, _, right_t = numpy.linalg.svd(x_whiten @ cxy @ y_whiten)
    return (x_mean.astype(numpy.float32), (x_whiten @ left).astype(numpy.float32),
            y_mean.astype(numpy.float32), (y_whiten @ right_t.T).astype(numpy.float32))


def _inverse_sqrt(covariance: numpy.ndarray, regularization: float) -> numpy.ndarray:
    ridge = regularization * max(float(numpy.trace(covariance)) / len(covariance), 1e-12)
    values, vectors = numpy.linalg.eigh(covariance + ridge * numpy.eye(len(covariance)))
    return (vectors / numpy.sqrt(numpy.maximum(values, 1e-12))) @ vectors.T


def project(rows: numpy.ndarray, mean: numpy.ndarray, projection: numpy.ndarray) -> numpy.ndarray:
    """Center `rows` on `mean` and project them (a CCA projection), as float32."""
    return ((numpy.asarray(rows, numpy.float32) - mean) @ projection).astype(numpy.float32)
