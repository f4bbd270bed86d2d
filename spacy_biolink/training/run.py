"""Reading a training config and handing it to its registered trainer."""
import logging
from pathlib import Path
from typing import Dict, Optional, Protocol

from spacy import util
from confection import ConfigValidationError
from thinc.api import Config, fix_random_seed

from ..errors import BioLinkError, Errors
from ..io.util import PathLike

logger = logging.getLogger("spacy_biolink")


class Trainer(Protocol):
    """What a `[training]` block resolves to.

    config: the whole interpolated training config ([paths], [encoder], [training], ...).
    output_dir: where to write the trained encoder (encoders.saved.save_encoder), the
        training log, plots and checkpoints.
    resume: continue from the last checkpoint in output_dir instead of starting over.
    Returns the meta that was saved (method, dev scores, settings).
    """

    def __call__(self, config: Config, output_dir: Path, *, resume: bool = False) -> Dict:
        """Train an encoder from `config` into `output_dir` and return the saved meta."""


def train_from_config(config_path: PathLike, output_dir: PathLike, *,
                      overrides: Optional[Dict] = None, resume: bool = False) -> Dict:
    """Train an encoder as the config file's [training] block says and return the saved meta.
    `overrides` (e.g. {"paths.train": ...}) are checked against the config; a missing file,
    bad override or config without [training] raises BioLinkError."""
    from ..io.config_overrides import check_overrides, fill_function_blocks
    from ..io.files import read_config

    config_path = Path(config_path)
    if not config_path.exists():
        raise BioLinkError(Errors.E502.format(path=config_path, reason="no such file"))
    raw = read_config(config_path, interpolate=False)
    check_overrides(overrides or {}, fill_function_blocks(raw))
    try:
        config = Config().from_str(raw.to_str(), overrides=overrides or {}, interpolate=True)
    except ConfigValidationError as err:
        raise BioLinkError(Errors.E502.format(path=config_path,
                                              reason=" ".join(str(err).split()))) from None
    if "training" not in config:
        raise BioLinkError(Errors.E502.format(path=config_path, reason="no [training] block"))
    seed = config.get("system", {}).get("seed", 0)
    fix_random_seed(seed)  # random, numpy and torch
    trainer = util.registry.resolve({"training": config["training"]})["training"]
    config["__path__"] = str(config_path)
    logger.info("training with %s from %s (seed %s) into %s",
                config["training"].get("@misc"), config_path, seed, output_dir)
    return trainer(config, Path(output_dir), resume=resume)


def require_path(config: Config, key: str) -> Path:
    """[paths] KEY as a Path; an error naming the override to pass when it is unset."""
    value = config.get("paths", {}).get(key)
    where = config.get("__path__", "<config>")
    if value in (None, "", "null"):
        raise BioLinkError(Errors.E503.format(path=where, key=key))
    path = Path(value)
    if not path.exists():
        raise BioLinkError(Errors.E502.format(path=where,
                                              reason=f"[paths] {key} = {value}: no such file"))
    return path
