"""Every code block of README.md and of the docs/ site runs as written and prints what it
shows, and the site builds with `mkdocs build --strict`.

The pages run in one scratch directory that mirrors the repository root (its entries
linked in), in reading order: README.md first, then the docs pages in the order of
mkdocs.yml's nav, then any other page under docs/ (sorted). Within a page the blocks run
in order. So a later block or page may use what an earlier one wrote, as a reader
following the documentation would (the README saves `my_linker`, docs/cli.md builds
`my_tfidf_linker`), and each page says what it uses.

The set-up block (pip install + `spacy project run all`) is what CI itself runs first; it
is checked for being identical to .ci/run, not run twice. A `print(...)  # expected`
comment, and the comment lines right under a print, are checked against what was printed:
the parts around each `...` must appear, in order. Blocks marked ```text are illustrations
that need what no test machine has (a UMLS release, a Ray cluster); the Spark block runs in
tests/test_distributed.py (--slow, with pyspark, which is in no extra).
"""
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
from thinc.api import Config

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MKDOCS_YML = ROOT / "mkdocs.yml"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def nav_pages():
    """The pages mkdocs.yml's nav names, in order (paths relative to docs/)."""
    text = MKDOCS_YML.read_text(encoding="utf8")
    nav = text[text.index("\nnav:"):]
    pages = []
    for line in nav.splitlines()[2:]:
        if line and not line.startswith(" "):
            break
        match = re.match(r"\s*-\s*(?:[^:]+:\s*)?([\w./-]+\.md)\s*$", line)
        if match:
            pages.append(match.group(1))
    return pages


def pages():
    """README.md, the nav's pages, then the other pages under docs/: the reading order."""
    ordered = [README] + [DOCS / page for page in nav_pages()]
    rest = sorted(set(DOCS.rglob("*.md")) - set(ordered))
    return ordered + rest


def blocks(path: Path):
    return [(lang, body) for lang, body in FENCE.findall(path.read_text(encoding="utf8"))]


def all_blocks():
    return [(path, lang, body) for path in pages() for lang, body in blocks(path)]


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


def name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_the_nav_names_every_page_and_only_pages_that_exist():
    listed = nav_pages()
    assert listed[0] == "index.md"
    missing = [page for page in listed if not (DOCS / page).is_file()]
    assert not missing, f"mkdocs.yml's nav names pages that do not exist: {missing}"
    # Pages under docs/decisions/ are reached from decisions/index.md, not the nav.
    top = {path.name for path in DOCS.glob("*.md")}
    assert top <= set(listed), f"docs pages missing from mkdocs.yml's nav: {sorted(top - set(listed))}"


def test_blocks_are_of_known_kinds():
    langs = {lang for _, lang, _ in all_blocks()}
    assert langs <= {"bash", "python", "ini", "text"}, f"untested block kinds: {langs}"


def test_readme_is_a_front_door():
    """What it is, install, a runnable example on the first screen; no figures or history."""
    text = README.read_text(encoding="utf8")
    lines = text.splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines: user documentation goes to docs/"
    first_python = next(i for i, line in enumerate(lines) if line.startswith("```python"))
    assert first_python <= 40, f"{first_python} lines before README's first runnable example"
    assert 'spacy.blank("en")' in text and 'nlp.add_pipe("bio_linker"' in text
    for pattern in (r"\bsession \d", r"\bissue \d", r"\d\s*(?:minutes|min|seconds|s)\b",
                    r"docs/s\b", r"\d\s*[GM]i?B\b", r"\b\d+-core"):
        assert not re.search(pattern, text, re.IGNORECASE), \
            f"README.md has a timing, size or history ({pattern}): figures go to BENCHMARKS.md"
    assert "(BENCHMARKS.md)" in text
    for page in nav_pages():
        assert f"(docs/{page})" in text, f"README.md does not link docs/{page}"


def test_docs_carry_no_history():
    """History belongs in BENCHMARKS.md and the decision records (docs/decisions/), not in
    the user documentation."""
    for path in pages()[1:]:
        if "decisions" in path.relative_to(DOCS).parts:
            continue
        text = path.read_text(encoding="utf8")
        assert not re.search(r"\b(?:session|issue) \d", text, re.IGNORECASE), \
            f"{name(path)} tells history: that goes to BENCHMARKS.md or docs/decisions/"


def test_setup_block_is_what_ci_runs():
    setup = [(path, body) for path, lang, body in all_blocks() if lang == "bash" and is_setup(body)]
    assert len(setup) == 1 and setup[0][0] == README
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf8")
    commands = [line.strip() for line in setup[0][1].splitlines()
                if line.strip() and not line.strip().startswith("#")]
    for command in commands:
        assert command in ci, f"README set-up command not in .ci/run: {command}"


def test_ini_blocks_parse():
    """A config fragment parses once its parent sections are there, and resolves to the
    values it shows (inline comments are not part of a value)."""
    ini = [(path, body) for path, lang, body in all_blocks() if lang == "ini"]
    assert ini
    for path, body in ini:
        headers = re.findall(r"^\[([^\]]+)\]", body, re.MULTILINE)
        parents = {".".join(h.split(".")[:i]) for h in headers for i in range(1, h.count(".") + 1)}
        prefix = "".join(f"[{p}]\n" for p in sorted(parents, key=len) if p not in headers)
        config = Config().from_str(prefix + body, interpolate=False)
        for header in headers:
            section = config
            for part in header.split("."):
                section = section[part]
            for key, value in section.items():
                assert not (isinstance(value, str) and "#" in value), (name(path), header, key, value)


def test_blocks_run_as_written(tmp_path):
    for entry in ROOT.iterdir():
        if entry.name not in (".git",):
            (tmp_path / entry.name).symlink_to(entry)
    ran = set()
    for path in pages():
        for number, (lang, body) in enumerate(blocks(path)):
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
            where = f"{name(path)} block {number} ({lang}):\n{body}"
            assert result.returncode == 0, f"{where}\nfailed:\n{result.stderr[-3000:]}"
            for expected in expected_outputs(body):
                assert shows(expected, result.stdout), \
                    f"{where}\nshould print {expected!r}, printed:\n{result.stdout[-2000:]}"
            ran.add(path)
    assert README in ran and len(ran) >= 5


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None,
                    reason="mkdocs is not installed (the `test` extra brings it): "
                           "the docs site's build is not checked")
def test_the_site_builds_strict(tmp_path):
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict",
                             "--config-file", str(MKDOCS_YML), "--site-dir", str(tmp_path / "site")],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert (tmp_path / "site" / "index.html").is_file()


def documented_table(marker: str):
    """The rows between docs/settings.md's `marker` start and end comments, as cells."""
    text = (DOCS / "settings.md").read_text(encoding="utf8")
    start, end = f"<!-- {marker}:start -->", f"<!-- {marker}:end -->"
    assert text.count(start) == 1 and text.count(end) == 1
    table = text[text.index(start) + len(start):text.index(end)].strip().splitlines()
    rows = [re.split(r"(?<!\\)\|", line.strip())[1:-1] for line in table[2:]]
    return [[cell.strip() for cell in row] for row in rows]


def test_the_settings_tables_name_every_setting_in_one_line_each():
    """The blocks table and the flat settings table (generated from linker/settings.py,
    tests/test_settings.py) together name bio_linker's whole config."""
    from spacy.language import Language

    import spacy_biolink.linker.component  # noqa: F401  registers the factory

    rows = documented_table("blocks-table") + documented_table("settings-table")
    keys = [row[0].strip("`") for row in rows]
    defaults = Language.get_factory_meta("bio_linker").default_config
    assert sorted(keys) == sorted(defaults), \
        f"settings tables and bio_linker's config differ: {sorted(set(keys) ^ set(defaults))}"
    long = [(row[0], len(cell)) for row in rows for cell in row if len(cell) > 300]
    assert not long, f"table cells over 300 characters (the detail goes below the table): {long}"


def documented_layout():
    """The paths docs/architecture.md's Layout map names: (path, depth) for each `name/`
    or `name.py` at the start of an entry line, nested by indentation under
    `spacy_biolink/` (two spaces a level). A line indented to the description column is
    the description's continuation, not an entry."""
    text = (DOCS / "architecture.md").read_text(encoding="utf8")
    block = text[text.index("## Layout"):]
    body = FENCE.search(block).group(2)
    stack, paths = [], []
    for line in body.splitlines():
        match = re.match(r"^( +)([\w.]+/|[\w]+\.py)\s", line + " ")
        if not match or len(match.group(1)) > 12:
            continue
        depth = len(match.group(1)) // 2
        stack = stack[:depth - 1] + [match.group(2).rstrip("/")]
        paths.append(("/".join(stack), depth))
    return paths


def test_the_layout_matches_the_tree():
    package = ROOT / "spacy_biolink"
    listed = documented_layout()
    missing = [path for path, _ in listed if not (package / path).exists()]
    assert not missing, f"docs/architecture.md's Layout names paths that do not exist: {missing}"
    top = {path for path, depth in listed if depth == 1}
    actual = {p.name for p in package.iterdir()
              if p.suffix == ".py" or (p.is_dir() and p.name != "__pycache__")}
    assert top == actual, (f"docs/architecture.md's Layout and spacy_biolink/ differ: not listed "
                           f"{sorted(actual - top)}, listed but absent {sorted(top - actual)}")
    root_modules = {p.name for p in package.glob("*.py")}
    assert {"__init__.py", "__main__.py"} <= root_modules <= \
        {"__init__.py", "__main__.py", "errors.py", "registry.py"}, \
        f"only the public face stays at the package root, found {sorted(root_modules)}"
