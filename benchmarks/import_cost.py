#!/usr/bin/env python
"""What torch being importable costs a TF-IDF linker's worker: `import spacy` time and
RSS, and `nlp.pipe(n_process=2)` start-up, each in fresh processes.

thinc imports torch at `import spacy` when torch is installed, whether or not a pipeline
uses it. Each configuration runs in its own interpreter:

* `--python PY` (repeatable): an environment's interpreter, e.g. the main one (with the
  `encoders` extra, so torch) and a core-install venv (`pip install -e ".[test]"`, no torch);
* with `--block-torch`, also the first interpreter with torch made unimportable
  (`sys.modules["torch"] = None` in a sitecustomize, so in spawned workers too): the same
  packages, minus torch.

Measured per configuration, best (min) and median of --repeats runs:
1. `import spacy`: wall seconds and the process's peak RSS (VmHWM, MB) right after;
2. `spacy.load(DIR)` of a TF-IDF bio_linker over a 6-concept dictionary, then
   `nlp.pipe(4 docs, n_process=2)`: wall seconds of the whole script, with the `fork`
   and `spawn` start methods (spawned workers import spacy again).

With `--spacy-transformers` (issue 22), what the `transformers` extra costs a pipeline
that does not use it: spaCy imports spacy-transformers (and with it transformers) through
its entry points at `spacy.load` of any pipeline. Measured in the first interpreter, fresh
processes: `import spacy` + `spacy.load(DIR)` of the TF-IDF linker + one doc, wall seconds
and peak RSS, with spacy-transformers' entry points visible (installed) against hidden
from catalogue (as if not installed; torch stays importable in both).

Usage, from the repository root:

    python benchmarks/import_cost.py --python python --python /tmp/np2/bin/python \
        --block-torch --repeats 5
    python benchmarks/import_cost.py --python python --spacy-transformers --repeats 5
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SITECUSTOMIZE = """
import os, sys
if os.environ.get("IMPORT_COST_BLOCK_TORCH"):
    sys.modules["torch"] = None
"""

IMPORT = """
import sys, time
start = time.perf_counter()
import spacy
seconds = time.perf_counter() - start
import json
# VmHWM, not ru_maxrss: a child started by a big parent inherits the parent's ru_maxrss.
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
print(json.dumps({"seconds": seconds, "rss_mb": int(status["VmHWM"].split()[0]) / 1024,
                  "torch_loaded": sys.modules.get("torch") is not None}))
"""

PIPE = """
import json, multiprocessing, sys, time
start = time.perf_counter()
import spacy
if __name__ == "__main__":
    multiprocessing.set_start_method(sys.argv[2], force=True)
    nlp = spacy.load(sys.argv[1])
    docs = []
    for text in ["NIDDM.", "Huntington disease.", "Breast cancer.", "Type 2 diabetes."]:
        doc = nlp.make_doc(text)
        doc.ents = [doc.char_span(0, len(text) - 1, label="Disease")]
        docs.append(doc)
    out = list(nlp.pipe(docs, n_process=2, batch_size=2))
    print(json.dumps({"seconds": time.perf_counter() - start,
                      "linked": sum(bool(e.kb_id_) for d in out for e in d.ents)}))
"""

LOAD = """
import json, os, sys, time
start = time.perf_counter()
if os.environ.get("IMPORT_COST_HIDE_SPACY_TRANSFORMERS"):
    # catalogue reads the entry points once, at its import: hide spacy-transformers' there
    import importlib.metadata as md
    import catalogue
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Python < 3.12: the groups' dict interface
        groups = md.entry_points()
        every = [ep for eps in groups.values() for ep in eps] if isinstance(groups, dict) \
            else list(groups)
    catalogue.AVAILABLE_ENTRY_POINTS = md.EntryPoints(
        ep for ep in every if not ep.value.startswith("spacy_transformers"))
import spacy
nlp = spacy.load(sys.argv[1])
doc = nlp.make_doc("NIDDM.")
doc.ents = [doc.char_span(0, 5, label="Disease")]
doc = nlp(doc)
seconds = time.perf_counter() - start
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
print(json.dumps({"seconds": seconds, "rss_mb": int(status["VmHWM"].split()[0]) / 1024,
                  "linked": bool(doc.ents[0].kb_id_),
                  "spacy_transformers_loaded": "spacy_transformers" in sys.modules,
                  "transformers_loaded": "transformers" in sys.modules}))
"""


def run(python: str, code: str, *args, block: bool = False, site: Path,
        hide_spacy_transformers: bool = False) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(site)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    if block:
        env["IMPORT_COST_BLOCK_TORCH"] = "1"
    if hide_spacy_transformers:
        env["IMPORT_COST_HIDE_SPACY_TRANSFORMERS"] = "1"
    result = subprocess.run([python, "-c", code, *args], capture_output=True, text=True,
                            cwd=ROOT, env=env)
    if result.returncode != 0:
        raise SystemExit(f"{python} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def build_model(path: Path) -> None:
    import warnings

    import spacy

    from spacy_biolink import load_dictionary
    from tests.conftest import TINY_MEDIC

    (path.parent / "tiny_medic.txt").write_text(TINY_MEDIC, encoding="utf8")
    nlp = spacy.blank("en")
    nlp.add_pipe("bio_linker")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # W001: the tiny dictionary shares a name
        nlp.get_pipe("bio_linker").initialize(
            dictionary=load_dictionary(path.parent / "tiny_medic.txt"))
    nlp.to_disk(path)


def summary(values):
    return {"min": round(min(values), 3), "median": round(statistics.median(values), 3)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python", action="append", required=True,
                        help="interpreter of an environment (repeatable)")
    parser.add_argument("--block-torch", action="store_true",
                        help="also run the first interpreter with torch unimportable")
    parser.add_argument("--spacy-transformers", action="store_true",
                        help="instead: spacy.load of a TF-IDF linker with spacy-transformers' "
                        "entry points visible vs hidden (the first --python)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--output", type=Path, default=None, help="JSON of the figures")
    args = parser.parse_args(argv)
    if args.spacy_transformers:
        return spacy_transformers_cost(args)
    configurations = [(python, False) for python in args.python]
    if args.block_torch:
        configurations.insert(1, (args.python[0], True))
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "linker"
        build_model(model)
        site = Path(tmp) / "site"
        site.mkdir()
        (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
        for python, block in configurations:
            label = python + (" (torch blocked)" if block else "")
            imports = [run(python, IMPORT, block=block, site=site) for _ in range(args.repeats)]
            row = {"python": label, "torch_loaded": imports[0]["torch_loaded"],
                   "import_s": summary([r["seconds"] for r in imports]),
                   "rss_mb": summary([r["rss_mb"] for r in imports])}
            for method in ("fork", "spawn"):
                runs = [run(python, PIPE, str(model), method, block=block, site=site)
                        for _ in range(args.repeats)]
                assert all(r["linked"] == 4 for r in runs), runs
                row[f"pipe_n2_{method}_s"] = summary([r["seconds"] for r in runs])
            results.append(row)
            print(json.dumps(row), flush=True)
    print("\n| environment | torch loaded | import spacy s (min / median) | RSS MB (median) "
          "| load + pipe n_process=2, fork s | same, spawn s |")
    print("|---|---|---|---|---|---|")
    for row in results:
        print(f"| {row['python']} | {row['torch_loaded']} | {row['import_s']['min']:.2f} / "
              f"{row['import_s']['median']:.2f} | {row['rss_mb']['median']:.0f} | "
              f"{row['pipe_n2_fork_s']['median']:.2f} | {row['pipe_n2_spawn_s']['median']:.2f} |")
    if args.output:
        args.output.write_text(json.dumps(results, indent=2))
    return 0


def spacy_transformers_cost(args) -> int:
    """spacy.load of a TF-IDF linker, spacy-transformers' entry points visible vs hidden,
    alternating so that load drifts hit both alike."""
    python = args.python[0]
    runs = {"visible": [], "hidden": []}
    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "linker"
        build_model(model)
        site = Path(tmp) / "site"
        site.mkdir()
        (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
        for _ in range(args.repeats):
            for key in runs:
                result = run(python, LOAD, str(model), site=site,
                             hide_spacy_transformers=key == "hidden")
                assert result["linked"], result
                runs[key].append(result)
                print(json.dumps({key: result}), flush=True)
    rows = []
    for key, results in runs.items():
        rows.append({"spacy_transformers": key,
                     "spacy_transformers_loaded": results[0]["spacy_transformers_loaded"],
                     "transformers_loaded": results[0]["transformers_loaded"],
                     "load_s": summary([r["seconds"] for r in results]),
                     "rss_mb": summary([r["rss_mb"] for r in results])})
    print("\n| spacy-transformers entry points | spacy_transformers imported | transformers "
          "imported | import spacy + spacy.load + 1 doc, s (min / median) | peak RSS MB (median) |")
    print("|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['spacy_transformers']} | {row['spacy_transformers_loaded']} | "
              f"{row['transformers_loaded']} | {row['load_s']['min']:.2f} / "
              f"{row['load_s']['median']:.2f} | {row['rss_mb']['median']:.0f} |")
    visible, hidden = rows
    print(f"\nratio visible / hidden (median): {visible['load_s']['median'] / hidden['load_s']['median']:.2f}x "
          f"time, {visible['rss_mb']['median'] / hidden['rss_mb']['median']:.2f}x RSS")
    if args.output:
        args.output.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
