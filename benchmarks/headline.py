#!/usr/bin/env python
"""The headline benchmarks: benchmarks/figures.json, measured again in one command.

    python -m spacy project run bench

runs project.yml's `bench` workflow: the `all` workflow's convert, init-linker, evaluate,
train-ner, assemble and evaluate-e2e (skipped where they are up to date), then the three
steps of this script:

    python benchmarks/headline.py bc5cdr --dictionary MEDIC --data-dir ../shared/data \\
        --linker training/bench/bc5cdr_tfidf --output metrics/bench/bc5cdr_tfidf_test.json
    python benchmarks/headline.py speed --dictionary MEDIC --corpus NCBItestset_corpus.txt \\
        --repeats 10 --output metrics/bench/vs_scispacy.json
    python benchmarks/headline.py report --metrics metrics --output metrics/bench.md

`bc5cdr` builds the BC5CDR-disease TF-IDF linker with `python -m spacy_biolink init-linker`
and scores the test set with `python -m spacy_biolink evaluate`; where the corpus is not in
--data-dir it writes {"skipped": ...} instead. `speed` runs benchmarks/bench_vs_scispacy.py,
with --ours-only where scispaCy (an optional extra that pins numpy < 2) is not installed.
`report` writes the table (metrics/bench.md, and metrics/bench.json beside it): every
figure measured beside the one benchmarks/figures.json records (BENCHMARKS.md's headline
table shows the same values), with the command that reproduces it; a row whose input is
missing or skipped says so. The scale row (10M names) is too long for the suite: it is a
pointer to its command.
"""
import argparse
import importlib.util
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

HERE = Path(__file__).resolve().parent
BC5CDR = ("bc5cdr/CDR_TrainingSet.PubTator.txt.gz", "bc5cdr/CDR_DevelopmentSet.PubTator.txt.gz",
          "bc5cdr/CDR_TestSet.PubTator.txt.gz")

# What each headline figure was recorded at, and where the suite's run keeps its measurement,
# live in benchmarks/figures.json (BENCHMARKS.md's headline table shows the same values:
# tests/test_benchmarks_reference.py keeps the two in step). A row: id, group, figure,
# recorded, kind ("exact": an accuracy, which must reproduce to the digit; "timing": a speed,
# which moves with the machine's load; "pointer": too long for the suite), command, date,
# source ({"file": under --metrics, "keys": into its JSON}; not for pointers), needs.
FIGURES = HERE / "figures.json"


def load_rows(path: Path = FIGURES) -> List[Dict]:
    """The recorded headline figures, `source` as (file under --metrics, keys into its JSON)."""
    rows = []
    for row in json.loads(Path(path).read_text(encoding="utf8"))["rows"]:
        row = dict(row)
        if "source" in row:
            row["source"] = (row["source"]["file"], list(row["source"]["keys"]))
        rows.append(row)
    return rows


ROWS: List[Dict] = load_rows()


def log(msg: str) -> None:
    print(f"[headline {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def write_json(path: Path, data: Dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf8")
    log(f"Wrote {path}")


def run(cmd: List[str]) -> None:
    log(" ".join(cmd))
    subprocess.run(cmd, check=True)


# Steps -------------------------------------------------------------------------------

def bc5cdr(args) -> int:
    """BC5CDR-disease test acc@k of the TF-IDF linker over MEDIC + BC5CDR train + dev
    mentions (paper-normalization's first linker), or a note saying why it was skipped."""
    train, dev, test = (args.data_dir / name for name in BC5CDR)
    missing = [str(p) for p in (train, dev, test) if not p.is_file()]
    if missing:
        reason = f"skipped: BC5CDR not found ({', '.join(missing)})"
        log(reason)
        write_json(args.output, {"skipped": reason})
        return 0
    run([sys.executable, "-m", "spacy_biolink", "init-linker", str(args.linker),
         "--dictionary", str(args.dictionary), "--augment", str(train), "--augment", str(dev), "--force"])
    run([sys.executable, "-m", "spacy_biolink", "evaluate", str(args.linker), str(test),
         "--types", "Disease", "--output", str(args.output)])
    return 0


def scispacy_installed() -> bool:
    return importlib.util.find_spec("scispacy") is not None


def speed(args) -> int:
    """benchmarks/bench_vs_scispacy.py on MEDIC; ours alone where scispaCy is absent."""
    cmd = [sys.executable, str(HERE / "bench_vs_scispacy.py"), "--dictionary", str(args.dictionary),
           "--corpus", str(args.corpus), "--repeats", str(args.repeats), "--output", str(args.output)]
    if not scispacy_installed():
        log("skipped: scispacy not installed (pip install -e '.[scispacy]'): timing ours alone")
        cmd.append("--ours-only")
    run(cmd)
    data = json.loads(args.output.read_text(encoding="utf8"))
    if data.get("scispacy") is None:
        data["skipped"] = "skipped: scispacy not installed"
    else:
        data["ratio"] = {r["metric"]: r["ratio_ours_over_scispacy"] for r in data["table"]}
    write_json(args.output, data)
    return 0


# Report ------------------------------------------------------------------------------

def _lookup(data: Dict, keys: List[str]):
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def measure(row: Dict, metrics: Path) -> Dict:
    """The row with its measured value, or the reason there is none."""
    out = {k: v for k, v in row.items() if k != "source"}
    out["measured"] = None
    if row["kind"] == "pointer":
        out["status"] = "not run by the suite (too long): its own command"
        return out
    name, keys = row["source"]
    path = metrics / name
    out["file"] = str(path)
    if not path.is_file():
        out["status"] = f"skipped: {path} not found (run the step that writes it)"
        return out
    data = json.loads(path.read_text(encoding="utf8"))
    if "skipped" in data and (row.get("needs") == "scispacy" or len(data) == 1):
        out["status"] = data["skipped"]
        return out
    value = _lookup(data, keys)
    if value is None:
        out["status"] = f"skipped: no {'.'.join(keys)} in {path}"
        return out
    out["measured"] = value
    if row["kind"] == "exact":
        same = round(value, 4) == round(row["recorded"], 4)
        out["status"] = "reproduced" if same else f"differs by {value - row['recorded']:+.4f}"
    else:
        out["status"] = f"{value / row['recorded']:.2f}x the recorded figure (a timing: moves with the load)"
    return out


def _fmt(value, row: Dict) -> str:
    """Accuracies to 4 digits, ratios and seconds to 2, speeds as whole numbers."""
    if value is None:
        return "-"
    if row["id"].startswith("speed_ratio"):
        return f"{value:.2f}x"
    if row["id"] in ("build_s", "load_s"):
        return f"{value:.2f}"
    if isinstance(row["recorded"], float):
        return f"{value:.4f}"
    return f"{value:,.0f}"


def machine() -> Dict:
    cpu = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = None
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "platform": platform.platform(), "load_average_at_report": load,
            "scispacy_installed": scispacy_installed()}


def table(rows: List[Dict]) -> str:
    lines = ["| what | figure | recorded | measured | status | command |",
             "|---|---|---:|---:|---|---|"]
    previous = None
    for r in rows:
        group, previous = ("" if r["group"] == previous else r["group"]), r["group"]
        lines.append(f"| {group} | {r['figure']} | {_fmt(r['recorded'], r)} | "
                     f"{_fmt(r['measured'], r)} | {r['status']} | `{r['command']}` |")
    return "\n".join(lines)


def report(args) -> int:
    recorded = ROWS if args.figures == FIGURES else load_rows(args.figures)
    rows = [measure(row, args.metrics) for row in recorded]
    info = machine()
    skipped = [r["id"] for r in rows if r["measured"] is None and r["kind"] != "pointer"]
    differing = [r["id"] for r in rows if r["kind"] == "exact" and r["measured"] is not None
                 and r["status"] != "reproduced"]
    text = "\n".join([
        "# Headline benchmarks (spacy project run bench)", "",
        f"Machine: {info['cpu']}, {info['cores']} cores, Python {info['python']}, "
        f"load average {info['load_average_at_report']} at report time; "
        f"scispaCy installed: {info['scispacy_installed']}.", "",
        table(rows), "",
        f"Skipped rows: {', '.join(skipped) or 'none'}.",
        f"Accuracy rows that did not reproduce: {', '.join(differing) or 'none'}.", ""])
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf8")
    print(text)
    write_json(args.output.with_suffix(".json"), {"machine": info, "rows": rows, "skipped": skipped,
                                                  "not_reproduced": differing})
    log(f"Wrote {args.output}")
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    p = sub.add_parser("bc5cdr", help="BC5CDR-disease test acc@k of the TF-IDF linker")
    p.add_argument("--dictionary", type=Path, required=True)
    p.add_argument("--data-dir", type=Path, required=True)
    p.add_argument("--linker", type=Path, required=True, help="where the linker is built")
    p.add_argument("--output", type=Path, required=True)
    p = sub.add_parser("speed", help="linking speed on MEDIC, and its ratio to scispaCy")
    p.add_argument("--dictionary", type=Path, required=True)
    p.add_argument("--corpus", type=Path, required=True)
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--output", type=Path, required=True)
    p = sub.add_parser("report", help="measured beside recorded: metrics/bench.md and .json")
    p.add_argument("--metrics", type=Path, default=Path("metrics"))
    p.add_argument("--output", type=Path, default=Path("metrics/bench.md"))
    p.add_argument("--figures", type=Path, default=FIGURES,
                   help="the recorded figures to compare with (default: benchmarks/figures.json)")
    args = parser.parse_args(argv)
    return {"bc5cdr": bc5cdr, "speed": speed, "report": report}[args.step](args)


if __name__ == "__main__":
    sys.exit(main())
