#!/usr/bin/env python
"""Mentions/s of several saved linkers in one process, their passes interleaved (issue 35:
MeSH 2024 beside MEDIC), each on one thread and on the index's default threads; then,
with --profile, where one pipeline's pass spends its time (cProfile, one thread).

    python benchmarks/exploration/link_speed_side_by_side.py \
        --corpus ../shared/data/ncbi_disease/NCBItestset_corpus.txt \
        --pipeline medic=/tmp/i35/linker_source \
        --pipeline 'mesh=/tmp/i35/linker_real_mesh={"@misc": "spacy-biolink.AutoSparseIndex.v4", "word_threshold": 0.2}' \
        --repeats 5 --profile mesh

Issue 32/33 (fast encoder, its TF-IDF hybrid before and after the batched rescoring, the
hybrid with the learned reranker, and the triplet network, ratios to the triplet's speed):

    V2='{"components.bio_linker.encoder.dense.@architectures": "spacy-biolink.FastNameEncoder.v2"}'
    OMP_NUM_THREADS=1 python benchmarks/exploration/link_speed_side_by_side.py \
        --corpus ../shared/data/ncbi_disease/NCBItestset_corpus.txt \
        --pipeline tfidf=/tmp/i32/tfidf_dict --pipeline fast_hnsw=/tmp/i32/L_vocab_dict_hnsw \
        --pipeline hybrid=/tmp/i32/L_ncbi_hybrid_dict --per-row hybrid_per_row=hybrid \
        --pipeline hybrid_v2=/tmp/i32/L_ncbi_hybrid_dict --config "hybrid_v2=$V2" \
        --pipeline rr20=/tmp/s16_33/H_strict_rr --per-row rr20_per_row=rr20 \
        --pipeline rr20_v2=/tmp/s16_33/H_strict_rr --config "rr20_v2=$V2" \
        --pipeline triplet=/tmp/s16_32b/L_tri_ncbi_dict --ratio-to triplet --repeats 5

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
    p.add_argument("--per-row", action="append", default=[], metavar="LABEL=SOURCE",
                   help="pipeline SOURCE loaded again, its HybridIndex rescoring each query's "
                        "candidates in its own numpy loop, as before the batched rescoring")
    p.add_argument("--config", action="append", default=[], metavar="LABEL=JSON",
                   help="dotted config overrides for spacy.load of LABEL's pipeline, e.g. "
                        "'{\"components.bio_linker.encoder.dense.@architectures\": "
                        "\"spacy-biolink.FastNameEncoder.v2\"}'")
    p.add_argument("--ratio-to", default=None, help="a LABEL: each best speed / its best")
    p.add_argument("--json", type=Path, default=None, help="write the best speeds here")
    args = p.parse_args(argv)
    import spacy

    pipelines = {}
    overrides = {spec.split("=", 1)[0]: json.loads(spec.split("=", 1)[1]) for spec in args.config}
    for spec in args.pipeline:
        label, path, *settings = spec.split("=", 2)
        index = json.loads(settings[0]) if settings else {}
        config = {"components": {"bio_linker": {"index": index}}} if index else {}
        config.update(overrides.get(label, {}))
        nlp = spacy.load(path, config=config)
        pipelines[label] = nlp
    paths = {spec.split("=", 2)[0]: spec.split("=", 2)[1] for spec in args.pipeline}
    per_row = set()
    for spec in args.per_row:
        label, source = spec.split("=", 1)
        per_row.add(label)
        nlp = spacy.load(paths[source])
        index = nlp.get_pipe("bio_linker").index
        index.search = per_row_search.__get__(index)
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
        if label in per_row:
            settings.append((label, 1, index))  # it searches its parts one after the other
        elif hasattr(index, "n_threads"):
            settings += [(label, 1, index), (label, index.n_threads, index)]
        else:
            # its threads are faiss's and torch's: OMP_NUM_THREADS sets them
            settings.append((label, None, None))
        one_pass(nlp)  # warm-up: numba compile or cache load, first-touch of the arrays
    best = {}
    for _ in range(args.repeats):
        for label, threads, index in settings:
            if index is not None:
                index.n_threads = threads
            dt = one_pass(pipelines[label])
            key = (label, threads)
            best[key] = min(best.get(key, dt), dt)
    print(f"{n} mentions, {args.repeats} rounds, load average "
          f"{' '.join(open('/proc/loadavg').read().split()[:3])}, {os.cpu_count()} CPUs")
    reference = None
    if args.ratio_to:
        reference = min(dt for (label, _), dt in best.items() if label == args.ratio_to)
    for (label, threads), dt in best.items():
        ratio = f", {reference / dt:.2f}x {args.ratio_to}" if reference else ""
        threads = f"index n_threads {threads}" if threads is not None else \
            f"OMP_NUM_THREADS {os.environ.get('OMP_NUM_THREADS', 'unset')}"
        print(f"{label}: {threads}: {n / dt:,.0f} mentions/s (best {dt * 1e3:.1f} ms){ratio}")
    if args.json:
        args.json.write_text(json.dumps({
            "mentions": n, "load": open("/proc/loadavg").read().split()[:3],
            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
            "best_mentions_per_s": {f"{label} {threads}": n / dt
                                    for (label, threads), dt in best.items()}}, indent=1))
    for label in args.profile:
        nlp = pipelines[label]
        index = nlp.get_pipe("bio_linker").index
        if hasattr(index, "n_threads"):
            index.n_threads = 1
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


def per_row_search(self, queries, k):
    """HybridIndex.search as it was before its rescoring was batched (commit 8ab5968):
    per query row, numpy.unique of the union, the dense rows reconstructed and multiplied,
    the sparse part summed feature by feature with searchsorted, then top_k."""
    import numpy

    from spacy_biolink.index.sparse import _empty_result, top_k

    dense_queries, sparse_queries = self._split(queries)
    scores, ids = _empty_result(dense_queries.shape[0], k)
    if k == 0 or self.n_vectors == 0:
        return scores, ids
    take = max(k, self.candidates)
    _, dense_ids = self.dense.search(dense_queries, take)
    _, sparse_ids = self.sparse.search(sparse_queries, take)
    both = numpy.concatenate([dense_ids, sparse_ids], axis=1)
    for row, names in enumerate(numpy.unique(r[r >= 0]) for r in both):
        if not len(names):
            continue
        exact = self.dense.index.reconstruct_batch(names) @ dense_queries[row] + \
            self._sparse_scores(sparse_queries, row, names)
        found, found_ids = top_k(exact, names, k)
        scores[row, :len(found)] = found
        ids[row, :len(found)] = found_ids
    return scores, ids


if __name__ == "__main__":
    sys.exit(main())
