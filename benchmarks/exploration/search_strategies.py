#!/usr/bin/env python
"""Triplet-Search's search strategies (seed 003) for one trained encoder, on one corpus.

What is indexed (O: the dictionary's names, D: the training mentions, OD: both), how
(T: one vector per text, C: one mean vector per concept), and the sieve (search D
first, keep its answer at cosine >= a threshold, else search O/OD). The names are
encoded once; each strategy rebuilds only the index over those vectors, so a dense
encoder's 76k MEDIC names are not encoded once per row of the table.

The linker is built as `python -m spacy_biolink init-linker OUT --dictionary DICT
--encoder DIR --augment TRAIN [--augment DEV] [--spelling-map MAP]` builds it, and scored
with the code behind `python -m spacy_biolink evaluate` (both composite rules).

    python benchmarks/exploration/search_strategies.py --data-dir ../shared/data --corpus ncbi \
        --encoder training/triplet --output benchmarks/results/search_triplet_ncbi.md

Without --encoder, the default TF-IDF encoder.
"""
import argparse
import json
import logging
import time
import warnings
from pathlib import Path
from typing import Optional

from normalization_ablation import corpus_settings

from spacy_biolink.linker.policy import LinkingPolicy
from spacy_biolink.evaluation import evaluate_gold_mentions
from spacy_biolink.linker.pipeline import init_linker

# (label, index_sources, index_level, sieve_threshold)
STRATEGIES = (
    ("O-T", "O", "name", None),
    ("O-C", "O", "concept", None),
    ("OD-T", "OD", "name", None),
    ("OD-C", "OD", "concept", None),
    ("D-T", "D", "name", None),
    ("D-T+O-T sieve 0.95", "O", "name", 0.95),
    ("D-T+OD-T sieve 0.95", "OD", "name", 0.95),
)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", type=Path, required=True)
    p.add_argument("--corpus", default="ncbi", help="ncbi | bc5cdr-disease | bc5cdr-chemical")
    p.add_argument("--split", default="test", help="test (train + dev mentions are D) or dev (train)")
    p.add_argument("--encoder", type=Path, default=None, help="a trained encoder directory")
    p.add_argument("--output", type=Path, default=None, help="Markdown table")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    settings = corpus_settings(args.data_dir, args.corpus, args.output.parent if args.output else Path("."))
    augment = [settings["train"]] + ([settings["dev"]] if args.split == "test" else [])
    # Keep the name vectors initialize() computes, to rebuild each strategy's index from.
    captured = {}
    build_search = LinkingPolicy._build_search

    def keep_vectors(linker, dictionary, name_vectors):
        captured["vectors"] = name_vectors
        return build_search(linker, dictionary, name_vectors)

    start = time.perf_counter()
    LinkingPolicy._build_search = keep_vectors
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nlp = init_linker(None, settings["dictionary"], augment=augment,
                              spelling_map=settings["spelling"], encoder=args.encoder)
    finally:
        LinkingPolicy._build_search = build_search
    linker, vectors = nlp.get_pipe("bio_linker"), captured["vectors"]
    encode_seconds = time.perf_counter() - start
    rows = ["| search | lenient acc@1 | lenient acc@5 | strict acc@1 | strict acc@5 |",
            "|---|---:|---:|---:|---:|"]
    results = {}
    for label, sources, level, sieve in STRATEGIES:
        linker.linker.configure(index_sources=sources, index_level=level, sieve_threshold=sieve)
        # Rebuilding the search over the same vectors is what initialize() does after
        # encoding; only the index (and the sieve's exact index) change between rows.
        linker.linker._build_search(linker.dictionary, vectors)
        result = evaluate_gold_mentions(nlp, settings[args.split], types=settings["types"])
        results[label] = result
        rows.append(f"| {label} | {result['lenient']['acc@1']:.4f} | {result['lenient']['acc@5']:.4f} | "
                    f"{result['strict']['acc@1']:.4f} | {result['strict']['acc@5']:.4f} |")
        print(rows[-1], flush=True)
    encoder = str(args.encoder) if args.encoder else "TF-IDF (default)"
    text = "\n".join([f"{args.corpus} {args.split}, encoder {encoder}, "
                      f"{linker.dictionary.n_names} names (built and encoded once in {encode_seconds:.0f} s)",
                      "", *rows, ""])
    print(text)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.output.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.replace(args.output)
        json_path = args.output.with_suffix(".json")
        json_path.with_suffix(".tmp").write_text(json.dumps(results, indent=1))
        json_path.with_suffix(".tmp").replace(json_path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
