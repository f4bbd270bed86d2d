"""Checks on a received encoder, verifier or reranker model, before anything is read into
it: its layers must be this package's architectures (io/safe_models.py says which) and
its torch weights must be read as safetensors (torch_wrapper.py), never unpickled."""
from typing import Any, Iterable

from ..errors import BioLinkError, Errors
from ..io.safe_models import ARCHITECTURES, ROOT_LAYERS, TORCH_LAYER
from .torch_wrapper import deserialize_state


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
    inner = set(ROOT_LAYERS["encoder"]) | {TORCH_LAYER}
    for node in model.walk():
        allowed = ROOT_LAYERS[role] if node is model else inner
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
