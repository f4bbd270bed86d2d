"""An encoder's config settings survive loading its weights.

The registered architectures keep some of their config arguments in the thinc Model's
attrs (a hybrid's `sparse_weight`, `normalize`, `batch_size`, the tokenizer's
`max_length`), and thinc's from_bytes / from_disk restore every attr from the saved
bytes. Without this module the saved values would silently replace the config's: a
`spacy.load(path, config={"components": {"bio_linker": {"encoder": {"sparse_weight": 2.0}}}})`
would report 2.0 in nlp.config and link at the saved weight.

So a config-built model is loaded with `keeping_config_settings`: the values its config
gave are put back after the weights are read. Where an index was built from the saved
model's vectors, a setting that changes those vectors (all but `batch_size`) cannot
simply be put back: the names in the index would have been encoded one way and the
mentions another. That raises E126, as a changed index setting raises E124.
"""
import math
from contextlib import contextmanager
from typing import Any, Dict, Iterator, Tuple

from thinc.api import Model

from ..errors import BioLinkError, Errors

# The tokenizer attr's max_length is a config argument too, kept in the tokenizer.
TOKENIZER_SETTING = "max_length"
# Config arguments the names' vectors depend on: attrs, and the tokenizer's max_length.
VECTOR_SETTINGS = ("dense_weight", "sparse_weight", "normalize", "max_word_length",
                   "use_context", TOKENIZER_SETTING)
# Attrs the registered architectures set from a config argument. "similarity" follows
# "normalize" (cosine or inner product), so only "normalize" is ever reported; batch_size
# is how many texts are encoded at once, which the vectors do not depend on.
ATTR_SETTINGS = tuple(k for k in VECTOR_SETTINGS if k != TOKENIZER_SETTING) + (
    "similarity", "batch_size")

Settings = Dict[Tuple[int, str], Any]


def config_settings(model: Model) -> Settings:
    """The config-given settings of every layer of `model`: (layer number in model.walk(),
    setting) -> value; the tokenizer's max_length is read from the tokenizer attr."""
    settings: Settings = {}
    for number, node in enumerate(model.walk()):
        for key in ATTR_SETTINGS:
            if key in node.attrs:
                settings[(number, key)] = node.attrs[key]
        if hasattr(node.attrs.get("tokenizer"), TOKENIZER_SETTING):
            settings[(number, TOKENIZER_SETTING)] = node.attrs["tokenizer"].max_length
    return settings


def restore_config_settings(model: Model, settings: Settings, *, index_built: bool,
                            where: str) -> None:
    """Put the `settings` config_settings read before loading back into `model`. With
    `index_built`, a setting the index's vectors depend on that differs from the loaded
    one raises E126 (where: the file or part loaded, for the message)."""
    nodes = list(model.walk())
    for (number, key), config_value in settings.items():
        node = nodes[number]
        loaded = _get(node, key)
        if _same(loaded, config_value):
            continue
        if index_built and key in VECTOR_SETTINGS:
            raise BioLinkError(Errors.E126.format(where=where, layer=node.name, key=key,
                                                  saved=loaded, config=config_value))
        _set(node, key, config_value)


@contextmanager
def keeping_config_settings(model: Model, *, index_built: bool = False,
                            where: str = "encoder") -> Iterator[None]:
    """Around a from_bytes / from_disk of `model` (built from its config): the config's
    settings are the ones used afterwards (see the module docstring)."""
    settings = config_settings(model)
    yield
    restore_config_settings(model, settings, index_built=index_built, where=where)


def _get(node: Model, key: str) -> Any:
    if key == TOKENIZER_SETTING:
        return node.attrs["tokenizer"].max_length
    return node.attrs[key]


def _set(node: Model, key: str, value: Any) -> None:
    if key == TOKENIZER_SETTING:
        node.attrs["tokenizer"].set_max_length(value)
    else:
        node.attrs[key] = value


def _same(a: Any, b: Any) -> bool:
    # A float goes through the config's text and back; a learned weight must not fail on
    # its last bit.
    if isinstance(a, float) or isinstance(b, float):
        try:
            return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
        except (TypeError, ValueError):
            return False
    return a == b
