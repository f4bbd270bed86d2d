#!/usr/bin/env python
"""`link --engine local` (one process) against `link --engine ray --num-workers N`, same run.

    python benchmarks/distributed_throughput.py --docs 20000 --workers 2 \
        --output metrics/distributed_throughput.json

The corpus: the titles + abstracts of NCBI-disease and BC5CDR (train, dev, test; from
--data-dir) repeated under fresh ids up to --docs, written once as one .jsonl (for the local
engine) and as --shards shard files (for Ray). The pipeline: --pipeline (default
training/pipeline, the NER + linker of `spacy project run all`); when it does not exist, a
stand-in is built from --linker (default training/linker_tfidf_test): an entity_ruler whose
phrase patterns are the linker dictionary's names (lowercase match), before the linker.

Both engines run as the CLI a user types (a subprocess each), timed wall-clock end to end.
Also reported: steady-state docs/s, without start-up (the local engine timed in-process
after spacy.load; Ray from the busiest worker's linking seconds in _report.json), each
worker's peak RSS, and the cost of 36M abstracts projected from the steady-state rate.
The two engines run one after the other on the same machine; run it on a quiet one.
"""
import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PUBTATOR_FILES = ["ncbi_disease/NCBItrainset_corpus.txt.gz", "ncbi_disease/NCBIdevelopset_corpus.txt",
                  "ncbi_disease/NCBItestset_corpus.txt", "bc5cdr/CDR_TrainingSet.PubTator.txt.gz",
                  "bc5cdr/CDR_DevelopmentSet.PubTator.txt.gz", "bc5cdr/CDR_TestSet.PubTator.txt.gz"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--docs", type=int, default=20000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--shards", type=int, default=20, help="Shard files for Ray")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--pipeline", type=Path, default=Path("training/pipeline"))
    p.add_argument("--linker", type=Path, default=Path("training/linker_tfidf_test"),
                   help="Linker for the stand-in pipeline when --pipeline does not exist")
    p.add_argument("--data-dir", type=Path,
                   default=Path(__file__).resolve().parents[2] / "shared" / "data")
    p.add_argument("--workdir", type=Path, help="Keep the corpus and outputs here")
    p.add_argument("--corpus-size", type=float, default=36e6, help="Abstracts to project for")
    p.add_argument("--price-per-worker-hour", type=float, default=0.0425,
                   help="USD per worker (1 vCPU) hour: AWS c6i.xlarge on demand, 4 vCPU "
                        "for 0.17/h, us-east-1, 2024")
    p.add_argument("--output", type=Path)
    args = p.parse_args(argv)

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="distributed_throughput."))
    workdir.mkdir(parents=True, exist_ok=True)
    pipeline, pipeline_kind = resolve_pipeline(args, workdir)
    corpus, shards = write_corpus(args, workdir)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(__file__).resolve().parents[1])] + os.environ.get("PYTHONPATH", "").split(os.pathsep)))

    local_out = workdir / "local.jsonl"
    local_wall = run([sys.executable, "-m", "spacy_biolink", "link", corpus, "--model", pipeline,
                      "--output", local_out, "--batch-size", args.batch_size], env)
    local_rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    ray_out = workdir / "ray"
    shutil.rmtree(ray_out, ignore_errors=True)
    ray_wall = run([sys.executable, "-m", "spacy_biolink", "link", shards, "--model", pipeline,
                    "--output", ray_out, "--engine", "ray", "--num-workers", args.workers,
                    "--batch-size", args.batch_size], env)
    report = json.loads((ray_out / "_report.json").read_text(encoding="utf8"))
    check_same_documents(local_out, ray_out)
    local_steady = local_steady_state(pipeline, corpus, args.batch_size)

    busy = {}
    for shard in report["shards"]:
        busy[shard["pid"]] = busy.get(shard["pid"], 0.0) + shard["seconds"]
    ray_steady = args.docs / max(busy.values())
    per_worker = ray_steady / args.workers
    hours = {n: args.corpus_size / (per_worker * n) / 3600 for n in (2, 16, 64, 256)}
    result = {
        "command": " ".join([Path(sys.executable).name] + sys.argv),
        "machine": {"platform": platform.platform(), "python": platform.python_version(),
                    "cpus": os.cpu_count()},
        "pipeline": str(pipeline), "pipeline_kind": pipeline_kind,
        "docs": args.docs, "shards": args.shards, "workers": args.workers,
        "batch_size": args.batch_size,
        "end_to_end": {"local_seconds": round(local_wall, 1), "ray_seconds": round(ray_wall, 1),
                       "local_docs_per_s": round(args.docs / local_wall, 1),
                       "ray_docs_per_s": round(args.docs / ray_wall, 1),
                       "speedup": round(local_wall / ray_wall, 2)},
        "steady_state": {"local_docs_per_s": round(local_steady, 1),
                         "ray_docs_per_s": round(ray_steady, 1),
                         "speedup": round(ray_steady / local_steady, 2),
                         "ray_worker_busy_seconds": {str(k): round(v, 1) for k, v in busy.items()}},
        "peak_rss_mb": {"local_process": round(local_rss_mb, 1),
                        "ray_workers": report["worker_peak_rss_mb"]},
        "projection": {
            "corpus_size": args.corpus_size,
            "docs_per_s_per_worker": round(per_worker, 1),
            "hours_on_n_workers": {str(n): round(h, 2) for n, h in hours.items()},
            "worker_hours": round(args.corpus_size / per_worker / 3600, 1),
            "usd": round(args.corpus_size / per_worker / 3600 * args.price_per_worker_hour, 2),
            "assumptions": "each worker is one vCPU running one actor at this machine's "
                           "measured steady-state per-worker rate; throughput grows linearly "
                           "with workers (shards >> workers, input/output on a shared file "
                           "system that keeps up); abstracts as long as NCBI/BC5CDR's; start-up "
                           "(about a minute per cluster) and the driver are left out; price "
                           f"{args.price_per_worker_hour} USD per worker-hour",
        },
        "report_seconds": report["seconds"],
    }
    print(json.dumps(result, indent=2))
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf8")
    return 0


def resolve_pipeline(args, workdir: Path):
    if (args.pipeline / "config.cfg").is_file():
        return args.pipeline.resolve(), "ner+linker (--pipeline)"
    import spacy

    from spacy_biolink.linker.pipeline import load_linker_pipeline

    nlp = load_linker_pipeline(args.linker)
    dictionary = nlp.get_pipe("bio_linker").dictionary
    ruler = nlp.add_pipe("entity_ruler", before="bio_linker", config={"phrase_matcher_attr": "LOWER"})
    names = sorted({name.lower() for name in dictionary.names if len(name) >= 4})
    ruler.add_patterns([{"label": "Disease", "pattern": name} for name in names])
    path = workdir / "pipeline"
    nlp.to_disk(path)
    spacy.load(path)  # fail here, not in both engines, if it does not round-trip
    return path.resolve(), (f"stand-in: entity_ruler over {len(names)} dictionary names "
                            f"(lowercase) + {args.linker}")


def write_corpus(args, workdir: Path):
    from spacy_biolink.corpora.pubtator import read_pubtator

    texts = [doc.text for name in PUBTATOR_FILES for doc in read_pubtator(args.data_dir / name)]
    corpus, shards = workdir / "corpus.jsonl", workdir / "shards"
    shutil.rmtree(shards, ignore_errors=True)
    shards.mkdir()
    per_shard = -(-args.docs // args.shards)
    lines = [json.dumps({"id": f"doc-{i}", "text": texts[i % len(texts)]}) + "\n"
             for i in range(args.docs)]
    corpus.write_text("".join(lines), encoding="utf8")
    for shard, start in enumerate(range(0, args.docs, per_shard)):
        (shards / f"part-{shard:04d}.jsonl").write_text("".join(lines[start:start + per_shard]),
                                                        encoding="utf8")
    return corpus, shards


def run(command, env) -> float:
    started = time.perf_counter()
    subprocess.run([str(c) for c in command], check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def check_same_documents(local_out: Path, ray_out: Path) -> None:
    """Same records, order aside: a speed figure for wrong output is worth nothing."""
    def records(paths):
        return sorted(line for path in paths for line in path.read_text(encoding="utf8").splitlines())

    if records([local_out]) != records(sorted(ray_out.glob("part-*.jsonl"))):
        raise SystemExit("The Ray output differs from the local output")


def local_steady_state(pipeline: Path, corpus: Path, batch_size: int) -> float:
    import spacy

    from spacy_biolink.runners.local import link_file

    nlp = spacy.load(pipeline)
    started = time.perf_counter()
    stats = link_file(nlp, corpus, corpus.with_name("local_steady.jsonl"), batch_size=batch_size,
                      progress=False)
    return stats.docs / (time.perf_counter() - started)


if __name__ == "__main__":
    sys.exit(main())
