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
from typing import Any, Iterator, Mapping, Tuple

from ..errors import BioLinkError, Errors

ENCODER_ARCHITECTURES = (
    "spacy-biolink.TfidfEncoder.v1",
    "spacy-biolink.DanEncoder.v1",
    "spacy-biolink.HybridEncoder.v1",
    "spacy-biolink.TransformerEncoder.v1",
    "spacy-biolink.BioSynEncoder.v1",
    "spacy-biolink.BneEncoder.v1",
    "spacy-biolink.FastNameEncoder.v1",
    "spacy-biolink.FastNameEncoder.v2",
    "spacy-biolink.FastNameEncoderNumpy.v1",
)
VERIFIER_ARCHITECTURES = ("spacy-biolink.SiameseVerifier.v1", "spacy-biolink.SiameseVerifier.v2")
RERANKER_ARCHITECTURES = ("spacy-biolink.CrossEncoderReranker.v1",)
ARCHITECTURES = {"encoder": ENCODER_ARCHITECTURES, "verifier": VERIFIER_ARCHITECTURES,
                 "reranker": RERANKER_ARCHITECTURES}

# The thinc node names the architectures above build (their outer Model), per role.
ROOT_LAYERS = {
    "encoder": ("tfidf_encoder", "dan_encoder", "hybrid_encoder", "transformer_encoder",
                "biosyn_encoder", "bne_encoder", "fast_name_encoder", "fast_name_encoder_numpy"),
    "verifier": ("siamese_verifier",),
    "reranker": ("cross_encoder_reranker",),
}
# thinc's PyTorchWrapper node: allowed inside ours when its shim reads safetensors.
TORCH_LAYER = "pytorch"

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


# spacy-transformers' `transformer` component ------------------------------------------
# Its saved `model` file is thinc msgpack whose HF shim holds the Hugging Face config,
# the tokenizer's files with the keyword arguments to load them, and the weights as
# torch.save bytes. spacy-transformers 1.4 reads those with AutoTokenizer.from_pretrained
# (**the saved kwargs: trust_remote_code=True imports a .py file shipped beside them) and
# with torch.load without weights_only (pickle, when torch < 2.6 or
# TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1). A `model` directory (its 1.0 layout) is read with
# from_pretrained and the config's settings. So each saved transformer is checked here,
# before spaCy reads a byte of it.
TRANSFORMER_FACTORY = "transformer"
_TOKENIZER_KWARGS = {"use_fast"}
_TOKENIZER_FILE_ENDINGS = (".json", ".txt", ".model")


def check_saved_transformers(pipeline_dir: Any) -> None:
    """Refuse a saved pipeline directory whose spacy-transformers components could run
    code when loaded (E510) or whose weights torch cannot read with weights_only=True
    (E511). Reads each transformer's `model` file; other components are left to spaCy
    and, for bio_linker, to check_model_config / check_model."""
    from pathlib import Path

    from spacy import util

    pipeline_dir = Path(pipeline_dir)
    try:
        config = util.load_config(pipeline_dir / "config.cfg", interpolate=False)
    except Exception:  # a config spaCy cannot read: spacy.load says why
        return
    for name, block in config.get("components", {}).items():
        if isinstance(block, Mapping) and block.get("factory") == TRANSFORMER_FACTORY:
            check_saved_transformer(pipeline_dir / name / "model")


def check_saved_transformer(path: Any) -> None:
    """Check one spacy-transformers `model` file (see check_saved_transformers)."""
    from pathlib import Path

    import srsly

    path = Path(path)
    if path.is_dir():
        raise BioLinkError(Errors.E510.format(
            path=path, reason="its model is a directory (spacy-transformers 1.0's layout), "
            "which is read with Hugging Face's from_pretrained and the config's settings"))
    if not path.is_file():
        return  # spaCy names the missing file
    try:
        msg = srsly.msgpack_loads(path.read_bytes())
        shims = [srsly.msgpack_loads(shim) for node in msg["shims"] for shim in node]
    except Exception as err:
        raise BioLinkError(Errors.E510.format(path=path, reason=f"it is not thinc msgpack "
                                              f"({type(err).__name__})")) from None
    for shim in shims:
        reason = _unsafe_hf_shim(shim)
        if reason is not None:
            raise BioLinkError(Errors.E510.format(path=path, reason=reason))
        _check_weights(shim.get("state") or b"", path)


def _unsafe_hf_shim(shim: Any) -> Any:
    if not isinstance(shim, Mapping):
        return "its saved transformer is not the mapping spacy-transformers writes"
    tokenizer = shim.get("tokenizer") or {}
    if not isinstance(tokenizer, Mapping):
        return "its tokenizer is not the mapping spacy-transformers writes"
    kwargs = tokenizer.get("kwargs") or {}
    if not isinstance(kwargs, Mapping) or set(kwargs) - _TOKENIZER_KWARGS:
        return (f"its tokenizer is loaded with {sorted(kwargs) if isinstance(kwargs, Mapping) else kwargs!r}, "
                f"and spacy-transformers writes only {sorted(_TOKENIZER_KWARGS)}")
    for file_name, content in tokenizer.items():
        if file_name == "kwargs":
            continue
        if not str(file_name).endswith(_TOKENIZER_FILE_ENDINGS) or "/" in str(file_name) \
                or "\\" in str(file_name):
            return f"its tokenizer ships {file_name!r}, not a tokenizer data file"
        if str(file_name).endswith(".json") and _names_code(content):
            return f"its tokenizer's {file_name} names code to import (auto_map)"
    if _names_code(shim.get("config")):
        return "its Hugging Face config names code to import (auto_map)"
    for key in ("_init_tokenizer_config", "_init_transformer_config"):
        settings = shim.get(key) or {}
        if isinstance(settings, Mapping) and settings.get("trust_remote_code"):
            return f"its {key} sets trust_remote_code"
    return None


def _names_code(content: Any) -> bool:
    import json

    if isinstance(content, (bytes, str)):
        try:
            content = json.loads(content)
        except ValueError:
            return False
    return isinstance(content, Mapping) and ("auto_map" in content
                                             or "trust_remote_code" in content)


def _check_weights(state: bytes, path: Any) -> None:
    # spacy-transformers calls torch.load without weights_only; bytes that load with
    # weights_only=True hold only tensors and plain containers, so its load of the same
    # bytes can call nothing else whatever torch's default is.
    if not state:
        return
    import io

    import torch

    try:
        torch.load(io.BytesIO(state), map_location="cpu", weights_only=True)
    except Exception as err:
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise BioLinkError(Errors.E511.format(path=path, reason=reason[:200])) from None
