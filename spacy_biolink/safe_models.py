"""Which models a received directory may name: only those whose state loads without
unpickling.

A saved pipeline's config.cfg (or a trained encoder's encoder.cfg) says which registered
architecture to build, and the saved bytes are then read into it. Any registered layer
can be named there, including thinc's PyTorch layers, whose weights thinc reads with
`torch.load` (pickle: with torch < 2.6, or TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 set, a
payload in the file runs). So before any byte is deserialized, the model is checked two
ways: the config block may name only this package's architectures (ARCHITECTURES), and
the built model tree may hold only this package's layers, whose torch weights go through
safetensors (encoders/torch_wrapper.py) and whose other state is msgpack.
"""
from typing import Any, Iterable, Iterator, Mapping, Tuple

from .errors import BioLinkError, Errors

ENCODER_ARCHITECTURES = (
    "spacy-biolink.TfidfEncoder.v1",
    "spacy-biolink.DanEncoder.v1",
    "spacy-biolink.HybridEncoder.v1",
    "spacy-biolink.TransformerEncoder.v1",
    "spacy-biolink.BioSynEncoder.v1",
    "spacy-biolink.BneEncoder.v1",
)
VERIFIER_ARCHITECTURES = ("spacy-biolink.SiameseVerifier.v1",)
RERANKER_ARCHITECTURES = ("spacy-biolink.CrossEncoderReranker.v1",)
ARCHITECTURES = {"encoder": ENCODER_ARCHITECTURES, "verifier": VERIFIER_ARCHITECTURES,
                 "reranker": RERANKER_ARCHITECTURES}

# The thinc node names the architectures above build (their outer Model), per role.
_ROOT_LAYERS = {
    "encoder": ("tfidf_encoder", "dan_encoder", "hybrid_encoder", "transformer_encoder",
                "biosyn_encoder", "bne_encoder"),
    "verifier": ("siamese_verifier",),
    "reranker": ("cross_encoder_reranker",),
}
# thinc's PyTorchWrapper node: allowed inside ours when its shim reads safetensors.
_TORCH_LAYER = "pytorch"


def check_model_config(block: Mapping, *, role: str = "encoder", where: str = "bio_linker"
                       ) -> None:
    """Refuse a config block (e.g. [components.bio_linker.encoder]) that names anything but
    this package's architectures for `role`, nested blocks (HybridEncoder's dense and
    sparse) included. Raises BioLinkError naming the first offending function."""
    allowed = ARCHITECTURES[role]
    nested = ENCODER_ARCHITECTURES  # what may sit inside (HybridEncoder's parts)
    for depth, key, value in _registered_names(block):
        ok = key == "@architectures" and value in (allowed if depth == 0 else nested)
        if not ok:
            raise BioLinkError(Errors.E120.format(where=where, role=role,
                                                  name=f"{key} = {value!r}",
                                                  allowed=", ".join(allowed)))


def _registered_names(block: Any, depth: int = 0) -> Iterator[Tuple[int, str, Any]]:
    if isinstance(block, Mapping):
        for key, value in block.items():
            if isinstance(key, str) and key.startswith("@"):
                yield depth, key, value
        for key, value in block.items():
            if not (isinstance(key, str) and key.startswith("@")):
                yield from _registered_names(value, depth + 1)
    elif isinstance(block, (list, tuple)):
        for value in block:
            yield from _registered_names(value, depth + 1)


def check_model(model: Any, *, role: str = "encoder", where: str = "bio_linker") -> None:
    """Refuse a built model whose saved state could be read by unpickling: its outer layer
    must be one of this package's `role` architectures, every layer below one of ours or
    a PyTorch wrapper whose weights are read as safetensors, and no other shim (thinc's
    PyTorch, TensorFlow and MXNet shims read pickles or foreign formats by default).
    Call before deserializing anything into it."""
    from thinc.api import Model

    if not isinstance(model, Model):
        raise BioLinkError(Errors.E121.format(where=where, role=role, layer=type(model).__name__,
                                              reason="it is not a thinc Model",
                                              allowed=", ".join(ARCHITECTURES[role])))
    inner = set(_ROOT_LAYERS["encoder"]) | {_TORCH_LAYER}
    for node in model.walk():
        allowed = _ROOT_LAYERS[role] if node is model else inner
        reason = None
        if node.name not in allowed:
            reason = f"it was built by {_builder(node)}, not by a spacy-biolink architecture"
        else:
            reason = _unsafe_shim(node.shims)
        if reason is not None:
            raise BioLinkError(Errors.E121.format(where=where, role=role, layer=node.name,
                                                  reason=reason,
                                                  allowed=", ".join(ARCHITECTURES[role])))


def _unsafe_shim(shims: Iterable) -> Any:
    from thinc.shims import PyTorchShim

    from .encoders.torch_wrapper import deserialize_state

    for shim in shims:
        if not isinstance(shim, PyTorchShim):
            return f"it holds a {type(shim).__name__}, whose state spacy-biolink does not read"
        # thinc has no public accessor for the shim's reader; reading it is the only way to
        # tell our safetensors reader from thinc's torch.load default.
        if getattr(shim, "_deserialize_model", None) is not deserialize_state:
            return "its PyTorch weights would be read with torch.load (pickle), not safetensors"
    return None


def _builder(node: Any) -> str:
    func = getattr(node, "_func", None)
    module = getattr(func, "__module__", None)
    return f"{module}.{func.__qualname__}" if module else "an unknown function"


def check_index(index: Any, *, where: str = "bio_linker index") -> None:
    """Refuse an index object that is not one of this package's (SparseIndex, FaissIndex,
    HybridIndex): the index block is a registered function too, and its object reads the
    saved index. Ours read .npy files without pickle and msgpack."""
    from .index import NameIndex

    if not isinstance(index, NameIndex) or not type(index).__module__.startswith("spacy_biolink."):
        raise BioLinkError(Errors.E122.format(where=where, kind=type(index).__module__ + "."
                                              + type(index).__qualname__))
