"""Every code block of README.md runs as written and prints what it shows.

The blocks run in order, from a scratch directory that mirrors the repository root (its
entries linked in), so a later block may use what an earlier one wrote, as a reader
following the README would. The set-up block (pip install + `spacy project run all`) is
what CI itself runs first; it is checked for being identical to .ci/run, not run twice.
A `print(...)  # expected` comment, and the comment lines right under a print, are
checked against what was printed: the parts around each `...` must appear, in order.
Blocks marked ```text are illustrations that need what no test machine has (a UMLS
release, a Ray cluster); the Spark block runs in tests/test_distributed.py (--slow, with
pyspark, which is in no extra).
"""
import re
import subprocess
import sys
from pathlib import Path

import pytest
from thinc.api import Config

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def readme_blocks():
    return [(lang, body) for lang, body in FENCE.findall(README.read_text(encoding="utf8"))]


def is_setup(body: str) -> bool:
    return "python -m pip install" in body and "pytest" in body


def expected_outputs(body: str):
    """The comment after each `print(` line: what that print shows."""
    out = []
    under_print = False
    for line in body.splitlines():
        match = re.match(r"\s*print\(.*\)\s*#\s*(.+)$", line)
        if match:
            out.append(match.group(1).strip())
        elif under_print and line.lstrip().startswith("#"):
            out.append(line.lstrip()[1:].strip())
            continue
        under_print = bool(re.match(r"\s*print\(", line))
    return out


def shows(expected: str, output: str) -> bool:
    pattern = ".*?".join(re.escape(part.strip()) for part in expected.split("...") if part.strip())
    return re.search(pattern, output, re.DOTALL) is not None


def test_readme_has_runnable_blocks():
    langs = {lang for lang, _ in readme_blocks()}
    assert langs <= {"bash", "python", "ini", "text"}, f"untested block kinds: {langs}"
    assert sum(1 for lang, _ in readme_blocks() if lang == "python") >= 1


def test_setup_block_is_what_ci_runs():
    setup = [body for lang, body in readme_blocks() if lang == "bash" and is_setup(body)]
    assert len(setup) == 1
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf8")
    commands = [line.strip() for line in setup[0].splitlines()
                if line.strip() and not line.strip().startswith("#")]
    for command in commands:
        assert command in ci, f"README set-up command not in .ci/run: {command}"


def test_ini_blocks_parse():
    """A config fragment parses once its parent sections are there, and resolves to the
    values it shows (inline comments are not part of a value)."""
    for lang, body in readme_blocks():
        if lang != "ini":
            continue
        headers = re.findall(r"^\[([^\]]+)\]", body, re.MULTILINE)
        parents = {".".join(h.split(".")[:i]) for h in headers for i in range(1, h.count(".") + 1)}
        prefix = "".join(f"[{p}]\n" for p in sorted(parents, key=len) if p not in headers)
        config = Config().from_str(prefix + body, interpolate=False)
        for header in headers:
            section = config
            for part in header.split("."):
                section = section[part]
            for key, value in section.items():
                assert not (isinstance(value, str) and "#" in value), (header, key, value)


def test_readme_blocks_run_as_written(tmp_path):
    for entry in ROOT.iterdir():
        if entry.name not in (".git",):
            (tmp_path / entry.name).symlink_to(entry)
    ran = 0
    for number, (lang, body) in enumerate(readme_blocks()):
        if "pyspark" in body:
            continue
        if lang == "python":
            command = [sys.executable, "-c", body]
        elif lang == "bash" and not is_setup(body):
            command = ["bash", "-euo", "pipefail", "-c", body]
        else:
            continue
        result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True,
                                timeout=600)
        where = f"README block {number} ({lang}):\n{body}"
        assert result.returncode == 0, f"{where}\nfailed:\n{result.stderr[-3000:]}"
        for expected in expected_outputs(body):
            assert shows(expected, result.stdout), \
                f"{where}\nshould print {expected!r}, printed:\n{result.stdout[-2000:]}"
        ran += 1
    assert ran >= 1


def readme_layout():
    """The paths README's Layout map names: (path, depth) for each `name/` or `name.py`
    at the start of an entry line, nested by indentation under `spacy_biolink/`."""
    text = README.read_text(encoding="utf8")
    block = text[text.index("## Layout"):]
    body = FENCE.search(block).group(2)
    stack, paths = [], []
    for line in body.splitlines():
        match = re.match(r"^( +)([\w.]+/|[\w]+\.py)\s", line + " ")
        if not match:
            continue
        depth = len(match.group(1)) // 2
        stack = stack[:depth - 1] + [match.group(2).rstrip("/")]
        paths.append(("/".join(stack), depth))
    return paths


def test_readme_layout_matches_the_tree():
    package = ROOT / "spacy_biolink"
    listed = readme_layout()
    missing = [path for path, _ in listed if not (package / path).exists()]
    assert not missing, f"README's Layout names paths that do not exist: {missing}"
    top = {path for path, depth in listed if depth == 1}
    actual = {p.name for p in package.iterdir()
              if p.suffix == ".py" or (p.is_dir() and p.name != "__pycache__")}
    assert top == actual, (f"README's Layout and spacy_biolink/ differ: not listed "
                           f"{sorted(actual - top)}, listed but absent {sorted(top - actual)}")
    root_modules = {p.name for p in package.glob("*.py")}
    assert root_modules == {"__init__.py", "__main__.py", "errors.py", "registry.py"}, \
        f"only the public face stays at the package root, found {sorted(root_modules)}"
