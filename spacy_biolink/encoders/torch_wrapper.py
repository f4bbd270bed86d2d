"""PyTorch modules as thinc Models whose weights are saved as safetensors.

thinc's PyTorchShim writes weights with `torch.save`, i.e. pickle: opening a model
directory someone sent you would run their code. Every torch encoder in this package
goes through `wrap_torch_module`, which stores the state dict as safetensors instead.
"""
from typing import Any, Callable, Optional

from thinc.api import Model, PyTorchWrapper_v3



def serialize_state(module) -> bytes:
    """A torch module's weights as safetensors bytes (no pickle, so loading runs no code)."""
    from safetensors.torch import save

    # safetensors refuses shared or non-contiguous storage (tied embeddings, views).
    state = {key: value.detach().cpu().contiguous().clone()
             for key, value in module.state_dict().items()}
    return save(state)


def deserialize_state(module, data: bytes, device) -> Any:
    """Load safetensors bytes from `serialize_state` into `module`, move it to `device`
    and return it."""
    from safetensors.torch import load

    module.load_state_dict(load(data))
    module.to(device)
    return module


def wrap_torch_module(module, *, convert_inputs: Optional[Callable] = None,
                      convert_outputs: Optional[Callable] = None) -> Model:
    """thinc's PyTorchWrapper over `module`, serialized with safetensors."""
    return PyTorchWrapper_v3(module, convert_inputs=convert_inputs,
                             convert_outputs=convert_outputs,
                             serialize_model=serialize_state,
                             deserialize_model=deserialize_state)


def torch_module(model: Model):
    """The nn.Module inside a model built by `wrap_torch_module` (or any layer of it)."""
    for node in model.walk():
        for shim in node.shims:
            return shim._model
    raise ValueError(f"model {model.name!r} wraps no PyTorch module")
