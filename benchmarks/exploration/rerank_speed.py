#!/usr/bin/env python
"""Linking speed with the cross-encoder reranker (issue 20), for several k, cold caches.

    python benchmarks/exploration/rerank_speed.py PIPELINE CORPUS.PubTator --mentions 200 --ks 5,10,20 \
        [--threads 2] [--output speed.json]

PIPELINE is a saved bio_linker with a reranker (init-linker --reranker DIR). The first
--mentions gold mentions of CORPUS are linked through nlp.pipe-sized batches of
`link` (what bio_linker.pipe runs), first without the reranker (the retriever
alone), then with it at each k: all in this one process, one after another, every pass
with the retriever's and the reranker's caches emptied, so the ratios compare like with
like. Reported: mentions/s, (context, candidate) pairs scored, the load average.
"""
import argparse
import json
import os
import time
from pathlib import Path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("pipeline", type=Path)
    p.add_argument("corpus", type=Path)
    p.add_argument("--mentions", type=int, default=200)
    p.add_argument("--ks", default="5,10,20")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=64, help="documents per batch")
    p.add_argument("--output", type=Path)
    args = p.parse_args(argv)

    import torch

    from spacy_biolink.linker.policy import Mention
    from spacy_biolink.corpora.pubtator import read_pubtator
    from spacy_biolink.evaluation.gold_mentions import find_linker
    from spacy_biolink.linker.pipeline import load_linker_pipeline

    torch.set_num_threads(args.threads)
    nlp = load_linker_pipeline(args.pipeline)
    linker = find_linker(nlp)
    reranker = linker.reranker
    if reranker is None:
        raise SystemExit(f"{args.pipeline} has no reranker (init-linker --reranker DIR)")
    batches, n = [], 0
    for pubtator_doc in read_pubtator(args.corpus):
        if n >= args.mentions:
            break
        doc = nlp.make_doc(pubtator_doc.text)
        mentions = [Mention(doc, m.start, m.end, m.text) for m in pubtator_doc.mentions]
        mentions = mentions[:args.mentions - n]
        n += len(mentions)
        if not batches or len(batches[-1]) >= args.batch_size * 5:
            batches.append([])
        batches[-1].extend(mentions)

    def run(k, with_reranker):
        linker.linker.clear_cache()
        reranker._cache.clear()
        reranker.n_scored = 0
        reranker.k = k
        linker.reranker = reranker if with_reranker else None
        start = time.perf_counter()
        for batch in batches:
            linker.link(batch, k)
        seconds = time.perf_counter() - start
        return {"k": k, "reranker": with_reranker, "mentions": n, "seconds": seconds,
                "mentions_per_s": n / seconds, "pairs_scored": reranker.n_scored,
                "load": os.getloadavg()}

    ks = [int(k) for k in args.ks.split(",")]
    results = [run(max(ks), False)] + [run(k, True) for k in ks]
    print(f"| stage | k | mentions | pairs scored | mentions/s | load (1 min) |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in results:
        print(f"| {'TF-IDF + reranker' if r['reranker'] else 'TF-IDF alone'} | {r['k']} | "
              f"{r['mentions']} | {r['pairs_scored']} | {r['mentions_per_s']:.1f} | "
              f"{r['load'][0]:.2f} |")
    print(f"torch threads {torch.get_num_threads()}")
    if args.output:
        args.output.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
