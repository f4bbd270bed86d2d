"""The registered names: one version of each in the package proper, the superseded ones
in legacy/, each registered beside the code it builds, and setup.cfg's entry points
exactly the names the code registers (so configs resolve with no import)."""
import configparser
import importlib
import re
from collections import defaultdict
from pathlib import Path

import pytest
from spacy.util import registry

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "spacy_biolink"
REGISTERED = re.compile(r'@registry\.(\w+)\("(spacy-biolink\.[^"]+)"\)\s*\ndef (\w+)')
GROUPS = {"architectures": "spacy_architectures", "misc": "spacy_misc",
          "scorers": "spacy_scorers", "augmenters": "spacy_augmenters",
          "tokenizers": "spacy_tokenizers"}


def registered_in_code():
    """(entry point group, name) -> "module:function", from the decorators in the source."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for kind, name, function in REGISTERED.findall(path.read_text(encoding="utf8")):
            found[(GROUPS[kind], name)] = f"{module}:{function}"
    return found


def entry_points():
    parser = configparser.ConfigParser()
    parser.read(ROOT / "setup.cfg", encoding="utf8")
    found = {}
    for group in GROUPS.values():
        for line in parser["options.entry_points"].get(group, "").strip().splitlines():
            name, target = (part.strip() for part in line.split("="))
            assert (group, name) not in found, f"{name} listed twice in setup.cfg"
            found[(group, name)] = target
    return found


def family(name: str) -> str:
    return name.rpartition(".v")[0]


def test_setup_cfg_lists_exactly_the_names_the_code_registers():
    assert entry_points() == registered_in_code()


@pytest.mark.parametrize("group_name", sorted(registered_in_code()), ids=lambda gn: gn[1])
def test_each_entry_point_resolves_to_its_builder(group_name):
    group, name = group_name
    module, function = registered_in_code()[group_name].split(":")
    builder = getattr(importlib.import_module(module), function)
    kind = next(kind for kind, g in GROUPS.items() if g == group)
    assert getattr(registry, kind).get(name) is builder


def test_the_package_proper_registers_one_version_of_each_name():
    versions = defaultdict(list)
    for (_, name), target in registered_in_code().items():
        if not target.startswith("spacy_biolink.legacy."):
            versions[family(name)].append(name)
    assert {f: v for f, v in versions.items() if len(v) > 1} == {}


def test_legacy_holds_only_superseded_versions():
    current = {}
    for (_, name), target in registered_in_code().items():
        if not target.startswith("spacy_biolink.legacy."):
            current[family(name)] = int(name.rpartition(".v")[2])
    for (_, name), target in registered_in_code().items():
        if target.startswith("spacy_biolink.legacy."):
            assert int(name.rpartition(".v")[2]) < current.get(family(name), 0), name


def test_builders_live_in_their_rooms_registry_modules():
    """Each room registers its own builders in its registry.py (spacy-llm's layout);
    nothing registers as a side effect of importing an unrelated module."""
    for target in registered_in_code().values():
        module = target.split(":")[0]
        assert module.endswith(".registry") or module.startswith("spacy_biolink.legacy."), target
