"""BENCHMARKS.md, benchmarks/figures.json and docs/decisions/ kept in step.

The `bench` workflow compares its measurements with benchmarks/figures.json; BENCHMARKS.md's
headline table is the same figures for a reader. These tests fail when one is changed
without the other, when benchmarks/exploration/ holds a study no figure cites, or when a
decision record links to a file that is not there.
"""
import importlib.util
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "BENCHMARKS.md"
FIGURES = ROOT / "benchmarks" / "figures.json"
DECISIONS = ROOT / "docs" / "decisions"


def _headline():
    spec = importlib.util.spec_from_file_location("headline", ROOT / "benchmarks" / "headline.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _section(text: str, title: str) -> str:
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else None]


def _headline_table() -> dict:
    """id -> the value cell of BENCHMARKS.md's headline table, bold marks dropped."""
    cells = {}
    for line in _section(BENCHMARKS.read_text(encoding="utf8"), "Headline").splitlines():
        match = re.match(r"\|\s*`([a-z0-9_]+)`\s*\|", line)
        if match:
            columns = [c.strip() for c in line.strip().strip("|").split("|")]
            cells[match.group(1)] = columns[2].replace("**", "")
    return cells


def test_the_headline_table_and_figures_json_hold_the_same_figures():
    headline = _headline()
    rows = headline.load_rows(FIGURES)
    table = _headline_table()
    assert [r["id"] for r in rows] == list(table), "the same ids, in the same order"
    for row in rows:
        assert table[row["id"]] == headline._fmt(row["recorded"], row), row["id"]


def test_figures_json_rows_are_complete():
    doc = json.loads(FIGURES.read_text(encoding="utf8"))
    ids = [r["id"] for r in doc["rows"]]
    assert len(ids) == len(set(ids))
    for row in doc["rows"]:
        assert row["kind"] in ("exact", "timing", "pointer"), row["id"]
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", row["date"]), row["id"]
        assert row["command"] and row["group"] and row["figure"], row["id"]
        assert ("source" in row) == (row["kind"] != "pointer"), row["id"]


def test_headline_reads_its_recorded_figures_from_figures_json():
    headline = _headline()
    assert headline.ROWS == headline.load_rows(FIGURES)
    assert headline.ROWS[0]["source"] == ("tfidf_test.json", ["acc@1"])


def test_every_exploration_script_is_cited_or_imported_by_a_cited_one():
    text = BENCHMARKS.read_text(encoding="utf8")
    scripts = {p.stem: p for p in (ROOT / "benchmarks" / "exploration").glob("*.py")}
    cited = {name for name in scripts if f"benchmarks/exploration/{name}.py" in text}
    imported = {name for name in scripts for user in cited
                if re.search(rf"^\s*(from|import) {name}\b", scripts[user].read_text(encoding="utf8"), re.M)}
    assert sorted(set(scripts) - cited - imported) == []


def test_decision_records_link_only_to_files_that_exist():
    pages = sorted(DECISIONS.glob("*.md"))
    assert (DECISIONS / "index.md") in pages
    for page in pages:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf8")):
            if re.match(r"[a-z]+://", target):
                continue
            resolved = (page.parent / target).resolve()
            assert resolved.is_file(), f"{page.name} -> {target}"
            assert (ROOT / "docs") in resolved.parents, f"{page.name} -> {target}: outside docs/"
    listed = set(re.findall(r"\]\(([^)]+\.md)\)", (DECISIONS / "index.md").read_text(encoding="utf8")))
    assert listed == {p.name for p in pages if p.name != "index.md"}
