"""A trained encoder on disk: what `train` writes and `init-linker --encoder` reads.

    DIR/encoder.cfg   [model]: the registered architecture block, every size filled in
                      [index]: the index that suits its vectors (faiss for dense ones)
                      [normalizer]: optional, the folding its training texts had
    DIR/model         the thinc Model's bytes (weights as safetensors, fitted tables)
    DIR/meta.json     method, dev scores, training settings

The same [model] block goes into the pipeline's [components.bio_linker.encoder], so
`spacy.load` rebuilds the architecture from the pipeline config and reads the weights
from the pipe's own `encoder` file; nothing here is pickled.
"""
from pathlib import Path
from typing import Dict, Optional, Tuple

from spacy import util
from thinc.api import Config, Model

from ..errors import BioLinkError, Errors
from ..io.files import atomic_file, json_text, read_config, read_json
from ..io.util import PathLike
from .settings import keeping_config_settings

ENCODER_CFG = "encoder.cfg"
MODEL_FILE = "model"
META_FILE = "meta.json"


def save_encoder(output_dir: PathLike, model: Model, model_config: Dict, *,
                 index_config: Optional[Dict] = None, meta: Optional[Dict] = None) -> Path:
    """Write a trained encoder directory (atomically: complete or not at all).

    model_config: the [model] block that rebuilds `model`'s architecture, e.g.
        {"@architectures": "spacy-biolink.DanEncoder.v1", "n_hidden": 300, ...}.
    """
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    config = Config({"model": dict(model_config)})
    if index_config is not None:
        config["index"] = dict(index_config)
    # Each file is renamed into place when complete, encoder.cfg last: a directory with
    # an encoder.cfg holds a complete model (the trainer's logs and checkpoints stay).
    with atomic_file(output_dir / MODEL_FILE, "wb") as fileh:
        fileh.write(model.to_bytes())
    with atomic_file(output_dir / META_FILE) as fileh:
        fileh.write(json_text(meta or {}, indent=2))
    with atomic_file(output_dir / ENCODER_CFG) as fileh:
        fileh.write(config.to_str())
    return output_dir


def read_encoder_config(path: PathLike) -> Tuple[Dict, Optional[Dict], Dict]:
    """The [model] block, the [index] block (or None) and the meta of a saved encoder."""
    path = Path(path)
    if not path.is_dir():
        raise BioLinkError(Errors.E501.format(path=path, reason="no such directory"))
    for name in (ENCODER_CFG, MODEL_FILE):
        if not (path / name).is_file():
            raise BioLinkError(Errors.E501.format(path=path, reason=f"no {name}"))
    config = read_config(path / ENCODER_CFG, interpolate=False)
    if "model" not in config:
        raise BioLinkError(Errors.E501.format(path=path, reason=f"{ENCODER_CFG} has no [model]"))
    meta = (read_json(path / META_FILE, "Encoder meta.json", type=dict)
            if (path / META_FILE).is_file() else {})
    return dict(config["model"]), (dict(config["index"]) if "index" in config else None), meta


# What the trainers fold names and mentions with (MentionNormalizer's defaults): a linker
# should query an encoder with the text folding it learned from.
TRAINING_NORMALIZER = {"@misc": "spacy-biolink.MentionNormalizer.v1", "lowercase": True,
                       "remove_punctuation": True, "spelling_variants": False,
                       "strip_plurals": False}


def read_encoder_normalizer(path: PathLike) -> Dict:
    """The [normalizer] block of a saved encoder, or the trainers' folding."""
    config = read_config(Path(path) / ENCODER_CFG, interpolate=False)
    return dict(config["normalizer"]) if "normalizer" in config else dict(TRAINING_NORMALIZER)


def load_encoder(path: PathLike, *, role: str = "encoder") -> Tuple[Model, Dict]:
    """The trained thinc Model of a saved encoder, and its meta.

    role: "encoder" or "verifier"; the directory may have been sent by someone else, so
    its encoder.cfg may name only spacy-biolink's architectures for that role (checked
    before the weights are read, see safe_models.py).
    """
    from ..io.safe_models import check_model_config
    from .checks import check_model

    model_config, _, meta = read_encoder_config(path)
    check_model_config(model_config, role=role, where=str(Path(path) / ENCODER_CFG))
    model = util.registry.resolve({"model": model_config})["model"]
    check_model(model, role=role, where=str(Path(path) / MODEL_FILE))
    try:
        # encoder.cfg's settings are the ones used, not those the bytes were saved with.
        with keeping_config_settings(model, where=str(Path(path) / MODEL_FILE)):
            model.from_bytes((Path(path) / MODEL_FILE).read_bytes())
    except BioLinkError:
        raise
    except (ValueError, KeyError, OSError) as err:
        raise BioLinkError(Errors.E501.format(path=path, reason=f"model: {err}")) from None
    return model, meta
