#!/usr/bin/env python
"""Run a script or module against an older tree of the code, with that tree's own entry points.

    git worktree add OLD 515c7aa
    python benchmarks/exploration/with_old_tree.py OLD OLD/benchmarks/linker_throughput.py ARGS...
    python benchmarks/exploration/with_old_tree.py OLD -m spacy_biolink init-linker ARGS...

`PYTHONPATH=OLD` alone is not enough once the entry points have changed: spaCy loads every
registered factory through the installed package's entry points, which name the current
modules, and a module the old tree lacks fails the import. Here the old tree comes first
on sys.path and the registry sees the entry points of OLD/setup.cfg (or OLD/pyproject.toml)
in place of the installed ones.
"""
import configparser
import importlib.metadata as metadata
import runpy
import sys
from pathlib import Path

PACKAGE = "spacy_biolink"


def old_entry_points(tree: Path):
    """The entry points the old tree declares, as importlib.metadata.EntryPoint objects."""
    found = []
    setup_cfg = tree / "setup.cfg"
    if setup_cfg.exists():
        parser = configparser.ConfigParser()
        parser.read(setup_cfg)
        if parser.has_section("options.entry_points"):
            for group, block in parser["options.entry_points"].items():
                for line in block.strip().splitlines():
                    name, _, value = line.partition("=")
                    if value.strip():
                        found.append((group, name.strip(), value.strip()))
    pyproject = tree / "pyproject.toml"
    if pyproject.exists():
        import tomllib
        groups = tomllib.loads(pyproject.read_text()).get("project", {}).get("entry-points", {})
        found += [(group, name, value) for group, items in groups.items()
                  for name, value in items.items()]
    return [metadata.EntryPoint(name=n, value=v, group=g) for g, n, v in found]


def main() -> None:
    """Put the tree first, swap the registry's entry points, then run the script or module."""
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    tree = Path(sys.argv[1]).resolve()
    if not (tree / PACKAGE).is_dir():
        sys.exit(f"with_old_tree.py: {tree} has no {PACKAGE}/ folder; give the root of a tree")
    sys.path.insert(0, str(tree))
    import catalogue

    available = catalogue.AVAILABLE_ENTRY_POINTS
    if isinstance(available, dict):
        current = [ep for group in available.values() for ep in group]
    else:
        current = list(available)
    kept = [ep for ep in current if not ep.value.startswith(PACKAGE)] + old_entry_points(tree)
    by_group = {}
    for ep in kept:
        by_group.setdefault(ep.group, []).append(ep)
    catalogue.AVAILABLE_ENTRY_POINTS = {g: metadata.EntryPoints(eps) for g, eps in by_group.items()}
    import spacy_biolink
    if not Path(spacy_biolink.__file__).resolve().is_relative_to(tree):
        sys.exit(f"with_old_tree.py: {PACKAGE} comes from {spacy_biolink.__file__}, not {tree}")
    if sys.argv[2] == "-m":
        module = sys.argv[3]
        sys.argv = [module] + sys.argv[4:]
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    else:
        script = sys.argv[2]
        sys.argv = sys.argv[2:]
        sys.path.insert(0, str(Path(script).resolve().parent))
        runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
