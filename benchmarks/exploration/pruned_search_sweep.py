#!/usr/bin/env python
"""PrunedSparseIndex's coverage / candidates against exact search, on a saved TF-IDF
linker: queries/s of both (same process, same queries) and tie-aware recall@10.

    python benchmarks/exploration/pruned_search_sweep.py --pipeline /tmp/scale/linker_1000000 \
        --corpus ../shared/data/ncbi_disease/NCBItestset_corpus.txt [--depth 40]

The queries are the corpus's distinct gold mention texts, normalized and encoded as the
linker does; depth is the number of names asked per query (the linker asks k x 4 = 40).
"""
import argparse
import sys
import time
from pathlib import Path

from spacy_biolink.evaluation.search_recall import tie_aware_recall


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pipeline", type=Path, required=True)
    p.add_argument("--corpus", type=Path, required=True)
    p.add_argument("--depth", type=int, default=40)
    p.add_argument("--settings", default="0.9:128,0.8:128,0.8:256,0.7:256,0.6:512",
                   help="coverage:candidates pairs")
    args = p.parse_args(argv)
    if not args.corpus.exists() or not args.pipeline.exists():
        print("skipped: pipeline or corpus absent")
        return 0
    import spacy

    from spacy_biolink.corpora import read_pubtator
    from spacy_biolink.index import SparseIndex
    from spacy_biolink.registry import build_pruned_sparse_index

    linker = spacy.load(args.pipeline).get_pipe("bio_linker")
    texts = sorted({linker.normalizer.mention(d.text[m.start:m.end])
                    for d in read_pubtator(args.corpus) for m in d.mentions})
    queries = linker.linker.encode(texts)
    names_t = linker.index.names_t
    exact = SparseIndex()
    exact.names_t = names_t
    rows = names_t.T.tocsr()
    print(f"{names_t.shape[1]} names, {len(texts)} queries, depth {args.depth}")
    print("| coverage | candidates | exact q/s | pruned q/s | speed-up | recall@10 |")
    print("|---:|---:|---:|---:|---:|---:|")
    for setting in args.settings.split(","):
        coverage, candidates = setting.split(":")
        pruned = build_pruned_sparse_index(coverage=float(coverage), candidates=int(candidates))
        pruned.names_t = names_t
        pruned._build_rows(rows)
        exact.search(queries[:2], args.depth)
        pruned.search(queries[:2], args.depth)
        t = time.perf_counter()
        e_scores, e_ids = exact.search(queries, args.depth)
        exact_s = time.perf_counter() - t
        t = time.perf_counter()
        scores, ids = pruned.search(queries, args.depth)
        pruned_s = time.perf_counter() - t
        n = len(texts)
        print(f"| {coverage} | {candidates} | {n / exact_s:.0f} | {n / pruned_s:.0f} | "
              f"{exact_s / pruned_s:.2f}x | "
              f"{tie_aware_recall(scores, e_scores, e_ids, ids=ids):.4f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
