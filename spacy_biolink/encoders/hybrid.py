"""Any dense encoder plus a TF-IDF encoder, scored by a weighted sum of both cosines.

Each text becomes one CSR row [sqrt(w_dense) * dense, sqrt(w_sparse) * tfidf]; with both
parts L2-normalised, the inner product of two rows is
    w_dense * cos_dense + w_sparse * cos_tfidf,
so the exact SparseIndex searches the combined score over the whole dictionary with no
candidate cut-off (the trick BioSyn's encoder uses). The dense part is any model giving
float rows (DAN, BNE, a transformer); its output should be L2-normalised for the sum to
be a sum of cosines. Config:

    [components.bio_linker.encoder]
    @architectures = "spacy-biolink.HybridEncoder.v1"
    dense_weight = 1.0
    sparse_weight = 0.5

    [components.bio_linker.encoder.dense]
    @architectures = "spacy-biolink.DanEncoder.v1"
    ...

    [components.bio_linker.encoder.sparse]
    @architectures = "spacy-biolink.TfidfEncoder.v1"

Use it with "spacy-biolink.SparseIndex.v1". initialize(X=names) initializes both parts: a
trained dense encoder keeps its weights, the TF-IDF is fitted on the names.
"""
import math
from typing import List, Optional

import numpy
from scipy import sparse
from thinc.api import Model

from ..errors import BioLinkError, Errors


def hybrid_encoder(dense: Model, sparse_encoder: Model, dense_weight: float = 1.0,
                   sparse_weight: float = 1.0) -> Model[List[str], sparse.csr_matrix]:
    """An encoder whose rows join a dense encoder's rows and a sparse one's, scaled so that a dot
    product is dense_weight * dense score + sparse_weight * sparse score. Weights must be >= 0."""
    if dense_weight < 0 or sparse_weight < 0:
        raise BioLinkError(Errors.E625.format(dense=dense_weight, sparse=sparse_weight))
    return Model(
        "hybrid_encoder",
        _hybrid_forward,
        init=_hybrid_init,
        layers=[dense, sparse_encoder],
        attrs={"output": "sparse", "similarity": "weighted cosine",
               "dense_weight": float(dense_weight), "sparse_weight": float(sparse_weight)},
    )


def set_weights(model: Model, dense_weight: float, sparse_weight: float) -> None:
    """Change the mix (e.g. after fitting it on dev); a built index must be rebuilt, and
    the config that rebuilds the model (encoder.cfg's [model], a pipeline's
    [components.bio_linker.encoder]) must say the same weights: its values are the ones a
    loaded model uses, and over a saved index a difference stops the load (E126)."""
    model.attrs["dense_weight"] = float(dense_weight)
    model.attrs["sparse_weight"] = float(sparse_weight)


def _hybrid_init(model: Model, X: Optional[List[str]] = None, Y=None) -> None:
    for layer in model.layers:
        layer.initialize(X=X)


def _hybrid_forward(model: Model, texts: List[str], is_train: bool):
    dense_model, sparse_model = model.layers
    dense_rows = dense_model.predict(texts)
    if sparse.issparse(dense_rows):
        raise BioLinkError(Errors.E626.format(name=dense_model.name))
    sparse_rows = sparse.csr_matrix(sparse_model.predict(texts))
    dense_rows = numpy.asarray(dense_rows, dtype=numpy.float32)
    dense_part = sparse.csr_matrix(dense_rows * math.sqrt(model.attrs["dense_weight"]))
    sparse_part = sparse_rows * numpy.float32(math.sqrt(model.attrs["sparse_weight"]))
    combined = sparse.hstack([dense_part, sparse_part], format="csr", dtype=numpy.float32)

    def backprop(d_output):
        raise BioLinkError(Errors.E623)

    return combined, backprop
