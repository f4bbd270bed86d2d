#!/usr/bin/env python
"""Mentions/s of several saved linkers in one process, their passes interleaved (issue 35:
MeSH 2024 beside MEDIC), each on one thread and on the index's default threads; then,
with --profile, where one pipeline's pass spends its time (cProfile, one thread).

    python benchmarks/exploration/link_speed_side_by_side.py \
        --corpus ../shared/data/ncbi_disease/NCBItestset_corpus.txt \
        --pipeline medic=/tmp/i35/linker_source \
        --pipeline 'mesh=/tmp/i35/linker_real_mesh={"@misc": "spacy-biolink.AutoSparseIndex.v4", "word_threshold": 0.2}' \
        --repeats 5 --profile mesh

A pass is bench_vs_scispacy.py's: `nlp.pipe` over docs whose doc.ents are the corpus's
gold mentions, the linker's LRU cache cleared first. The speeds are best of --repeats per
setting, the settings taking turns in each round so that a change of load hits them alike.
"""
import argparse
import cProfile
import gc
import io
import json
import os
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench_vs_scispacy.py
from bench_vs_scispacy import make_docs, prepare_mentions  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", type=Path, required=True)
    p.add_argument("--pipeline", action="append", required=True,
                   help="LABEL=DIR or LABEL=DIR=JSON (index settings given at spacy.load)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--profile", action="append", default=[], help="a LABEL to profile")
    p.add_argument("--top", type=int, default=25)
    args = p.parse_args(argv)
    import spacy

    pipelines = {}
    for spec in args.pipeline:
        label, path, *settings = spec.split("=", 2)
        index = json.loads(settings[0]) if settings else {}
        config = {"components": {"bio_linker": {"index": index}}} if index else {}
        nlp = spacy.load(path, config=config)
        pipelines[label] = nlp
    first = next(iter(pipelines.values()))
    texts, per_doc, stats = prepare_mentions(args.corpus, first.make_doc)
    n = stats["mentions"]

    def one_pass(nlp):
        docs = make_docs(nlp.make_doc, texts, per_doc)
        nlp.get_pipe("bio_linker").linker.clear_cache()
        gc.collect()
        t = time.perf_counter()
        list(nlp.pipe(docs, batch_size=args.batch_size))
        return time.perf_counter() - t

    settings = []
    for label, nlp in pipelines.items():
        index = nlp.get_pipe("bio_linker").index
        default = index.n_threads
        settings += [(label, 1, index), (label, default, index)]
        one_pass(nlp)  # warm-up: numba compile or cache load, first-touch of the arrays
    best = {}
    for _ in range(args.repeats):
        for label, threads, index in settings:
            index.n_threads = threads
            dt = one_pass(pipelines[label])
            key = (label, threads)
            best[key] = min(best.get(key, dt), dt)
    print(f"{n} mentions, {args.repeats} rounds, load average "
          f"{' '.join(open('/proc/loadavg').read().split()[:3])}, {os.cpu_count()} CPUs")
    for (label, threads), dt in best.items():
        print(f"{label}: index n_threads {threads}: {n / dt:,.0f} mentions/s "
              f"(best {dt * 1e3:.1f} ms)")
    for label in args.profile:
        nlp = pipelines[label]
        nlp.get_pipe("bio_linker").index.n_threads = 1
        docs = make_docs(nlp.make_doc, texts, per_doc)
        nlp.get_pipe("bio_linker").linker.clear_cache()
        gc.collect()
        prof = cProfile.Profile()
        prof.enable()
        list(nlp.pipe(docs, batch_size=args.batch_size))
        prof.disable()
        for order in ("tottime", "cumulative"):
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats(order).print_stats(args.top)
            print(f"--- {label}, one thread, by {order}\n{out.getvalue()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
