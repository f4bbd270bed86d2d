#!/usr/bin/env python
"""The headline benchmarks: BENCHMARKS.md's first table, measured again in one command.

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
figure measured beside the one BENCHMARKS.md records, with the command that reproduces
it; a row whose input is missing or skipped says so. The scale rows (10M names) are too
long for the suite: they are pointers to their command.
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

# What BENCHMARKS.md records for each headline figure, and where the suite's run keeps its
# measurement: (file under --metrics, keys into its JSON). kind "exact": an accuracy, which
# must reproduce to the digit; "timing": a speed, which moves with the machine's load.
NCBI = "NCBI-disease test, 960 gold mentions, TF-IDF linker over MEDIC + train + dev mentions, spelling map"
NCBI_DEV = "NCBI-disease dev, 787 gold mentions, TF-IDF linker over MEDIC + train mentions, spelling map"
BC5 = "BC5CDR-disease test, 4,288 gold mentions, TF-IDF linker over MEDIC + BC5CDR train + dev mentions"
E2E = ("NCBI-disease test, raw text: CPU NER (MEDIC gazetteer as a feature, static vectors, averaged "
       "weights, up to 5,000 steps) + bio_propagate (abbreviations) + the TF-IDF linker + NIL drop at "
       "0.85, span and concept both right")
SPEED = ("MEDIC 2012 (76k names), NCBI-disease test gold mentions, 1 thread, best of 10 cold passes, "
         "TF-IDF linker over MEDIC alone")
CMD_ALL = "python -m spacy project run bench"  # its init-linker + evaluate steps, as `all` runs them
CMD_E2E = "python -m spacy project run bench"  # convert, ner-vectors-ncbi, train-ner, assemble, evaluate-e2e, as `all`
CMD_BC5 = "python -m spacy project run bench-bc5cdr"
CMD_SPEED = "python -m spacy project run bench-speed"  # benchmarks/bench_vs_scispacy.py --repeats 10

ROWS: List[Dict] = [
    {"id": "ncbi_test_acc1", "group": NCBI, "figure": "acc@1 (lenient)", "recorded": 0.8719,
     "source": ("tfidf_test.json", ["acc@1"]), "kind": "exact", "command": CMD_ALL},
    {"id": "ncbi_test_acc5", "group": NCBI, "figure": "acc@5 (lenient)", "recorded": 0.9396,
     "source": ("tfidf_test.json", ["acc@5"]), "kind": "exact", "command": CMD_ALL},
    {"id": "ncbi_test_strict_acc1", "group": NCBI, "figure": "acc@1 (strict)", "recorded": 0.8688,
     "source": ("tfidf_test.json", ["strict", "acc@1"]), "kind": "exact", "command": CMD_ALL},
    {"id": "ncbi_dev_acc1", "group": NCBI_DEV, "figure": "acc@1 (lenient)", "recorded": 0.8793,
     "source": ("tfidf_dev.json", ["acc@1"]), "kind": "exact", "command": CMD_ALL},
    {"id": "bc5cdr_test_acc1", "group": BC5, "figure": "acc@1 (lenient)", "recorded": 0.9219,
     "source": ("bench/bc5cdr_tfidf_test.json", ["acc@1"]), "kind": "exact", "command": CMD_BC5},
    {"id": "bc5cdr_test_acc5", "group": BC5, "figure": "acc@5 (lenient)", "recorded": 0.9606,
     "source": ("bench/bc5cdr_tfidf_test.json", ["acc@5"]), "kind": "exact", "command": CMD_BC5},
    {"id": "bc5cdr_test_strict_acc1", "group": BC5, "figure": "acc@1 (strict)", "recorded": 0.9174,
     "source": ("bench/bc5cdr_tfidf_test.json", ["strict", "acc@1"]), "kind": "exact",
     "command": CMD_BC5},
    {"id": "e2e_ner_f", "group": E2E, "figure": "NER F1", "recorded": 0.8253,
     "source": ("e2e_test.json", ["ner", "f"]), "kind": "exact", "command": CMD_E2E},
    {"id": "e2e_linking_f", "group": E2E, "figure": "end-to-end linking F1", "recorded": 0.7851,
     "source": ("e2e_test.json", ["linking", "f"]), "kind": "exact", "command": CMD_E2E},
    {"id": "speed_ours", "group": SPEED, "figure": "mentions/s, every stage on", "recorded": 8354,
     "source": ("bench/vs_scispacy.json", ["ours", "link", "best_mentions_per_s"]), "kind": "timing",
     "command": CMD_SPEED},
    {"id": "speed_ours_same_stages", "group": SPEED, "figure": "mentions/s, scispaCy's stages only",
     "recorded": 12234, "kind": "timing", "command": CMD_SPEED,
     "source": ("bench/vs_scispacy.json", ["ours", "link_same_stages", "best_mentions_per_s"])},
    {"id": "speed_ratio", "group": SPEED, "figure": "ours / scispaCy 0.6.2 mentions/s, every stage on",
     "recorded": 5.32, "kind": "timing", "command": CMD_SPEED, "needs": "scispacy",
     "source": ("bench/vs_scispacy.json", ["ratio", "link mentions/s, best"])},
    {"id": "speed_ratio_same_stages", "group": SPEED,
     "figure": "ours / scispaCy 0.6.2 mentions/s, the same stages", "recorded": 7.79, "kind": "timing",
     "command": CMD_SPEED, "needs": "scispacy",
     "source": ("bench/vs_scispacy.json", ["ratio", "link mentions/s, best, ours with scispaCy's stages only"])},
    {"id": "build_s", "group": SPEED, "figure": "build s (dictionary file -> index)", "recorded": 2.00,
     "source": ("bench/vs_scispacy.json", ["ours", "build_s"]), "kind": "timing", "command": CMD_SPEED},
    {"id": "load_s", "group": SPEED, "figure": "`spacy.load` s, fresh process, best", "recorded": 0.40,
     "source": ("bench/vs_scispacy.json", ["ours", "load", "best_s"]), "kind": "timing",
     "command": CMD_SPEED},
    {"id": "speed_acc1", "group": SPEED, "figure": "acc@1 of those mentions (MEDIC alone)",
     "recorded": 0.7646, "source": ("bench/vs_scispacy.json", ["ours", "accuracy", "acc_at_1"]),
     "kind": "exact", "command": CMD_SPEED},
    {"id": "scale_10m", "group": "8,060,645 synthetic MEDIC-style names (10M written), NCBI-disease test gold mentions",
     "figure": "mentions/s, 2 threads (build 259 s, peak RSS 7.12 GB, recall@10 0.9941)", "recorded": 3087,
     "kind": "pointer", "command": (
         "python benchmarks/scale.py --source ../shared/data/medic/medic_06Jul2012.txt.gz "
         "--corpus ../shared/data/ncbi_disease/NCBItestset_corpus.txt --sizes 0 10000000 "
         "--threads 0 1 2 --work /tmp/s17build --keep")},
]


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
    rows = [measure(row, args.metrics) for row in ROWS]
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
    args = parser.parse_args(argv)
    return {"bc5cdr": bc5cdr, "speed": speed, "report": report}[args.step](args)


if __name__ == "__main__":
    sys.exit(main())
