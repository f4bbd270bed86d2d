"""Checking `--section.key value` overrides against the config they change.

thinc adds an unknown key silently (`--paths.dictonary X` sets a new, unused variable)
or spaCy fails late with a validation traceback (`--components.bio_linker.tresh 0.5`).
Checked first against the config filled with every default, a misspelled key is an
error that names the keys next to it.
"""
import difflib
from typing import Dict, Iterable, Mapping

from ..errors import BioLinkError, Errors


def check_overrides(overrides: Mapping[str, object], config: Mapping,
                    skip_prefixes: Iterable[str] = ()) -> None:
    """Raise E460 for the first override whose dotted key is not in `config`.

    A key under a section whose function (`@architectures`, `@misc`, ...) is itself
    overridden is not checked: the new function has other settings.
    """
    skip_prefixes = tuple(skip_prefixes)
    replaced = {key.rsplit(".", 1)[0] + "." for key in overrides
                if key.rsplit(".", 1)[-1].startswith("@")}
    for key in overrides:
        if key.startswith(skip_prefixes) or any(key.startswith(p) for p in replaced):
            continue
        node: object = config
        parts = key.split(".")
        for depth, part in enumerate(parts):
            if not isinstance(node, Mapping):
                break  # a value that is itself overridden with a dict; leave it to spaCy
            if part not in node:
                section = ".".join(parts[:depth]) or "the config"
                raise BioLinkError(_unknown(key, section, part, node))
            node = node[part]


def _unknown(key: str, section: str, name: str, node: Mapping) -> str:
    valid = sorted(str(k) for k in node if not str(k).startswith("@"))
    close = difflib.get_close_matches(name, valid, n=3, cutoff=0.6)
    prefix = key[: len(key) - len(name)]
    hint = (" Did you mean " + " or ".join(f"--{prefix}{c}" for c in close) + "?") if close else ""
    shown = ", ".join(valid[:30]) + (", ..." if len(valid) > 30 else "")
    return Errors.E460.format(key=f"--{key}", section=f"[{section}]" if section != "the config"
                              else section, name=name, hint=hint, valid=shown or "(none)")


def fill_function_blocks(config: Dict) -> Dict:
    """`config` with every top-level block that names a registered function filled with
    that function's defaults, so that a default setting counts as known. A block that
    cannot be filled (an unknown function) is left as it is."""
    from spacy import util

    filled = dict(config)
    for name, block in config.items():
        if isinstance(block, dict) and any(str(k).startswith("@") for k in block):
            try:
                filled[name] = util.registry.fill({name: block}, validate=False)[name]
            except Exception:  # noqa: BLE001 - the real resolve reports it properly
                pass
    return filled
