#!/usr/bin/env python
"""Linking throughput of saved linkers with nlp.pipe, on gold entity spans, side by side.

    python benchmarks/linker_throughput.py --docs corpus/test.spacy \
        tfidf=training/linker_tfidf_test dan=training/linker_dan_test [--repeats 3]

--docs is a DocBin with doc.ents (`python -m spacy_biolink convert CORPUS OUT.spacy`),
so the NER is left out and every linker links the same mentions. Each linker runs in
this one process, one after another, and each pass starts cold (the linker's LRU cache
is cleared), so the figures compare encoders and not cache hits. Reported: mentions/s of
the first pass and the best of --repeats, distinct mention texts, torch threads.
"""
import argparse
import json
import platform
import time
from pathlib import Path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("linkers", nargs="+", help="NAME=DIR of a saved linker pipeline")
    p.add_argument("--docs", type=Path, required=True, help="DocBin with gold doc.ents")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--output", type=Path, help="JSON with every pass")
    args = p.parse_args(argv)

    import spacy
    import torch
    from spacy.tokens import DocBin

    from spacy_biolink.evaluation.gold_mentions import find_linker

    results = {}
    rows = ["| linker | mentions | distinct texts | first pass mentions/s | best of "
            f"{args.repeats} mentions/s | load s |", "|---|---:|---:|---:|---:|---:|"]
    for spec in args.linkers:
        name, _, path = spec.partition("=")
        start = time.perf_counter()
        nlp = spacy.load(path)
        load_seconds = time.perf_counter() - start
        linker = find_linker(nlp, path)
        doc_bin = DocBin().from_disk(args.docs)
        rates = []
        for _ in range(args.repeats):
            docs = list(doc_bin.get_docs(nlp.vocab))
            linker.linker.clear_cache()  # every pass cold: encode and search every distinct text
            start = time.perf_counter()
            docs = list(nlp.pipe(docs, batch_size=args.batch_size))
            seconds = time.perf_counter() - start
            n_mentions = sum(len(doc.ents) for doc in docs)
            rates.append(n_mentions / seconds)
        distinct = len({ent.text for doc in docs for ent in doc.ents})
        results[name] = {"path": path, "mentions": n_mentions, "distinct_texts": distinct,
                         "mentions_per_s": rates, "load_seconds": load_seconds}
        rows.append(f"| {name} | {n_mentions} | {distinct} | {rates[0]:,.0f} | {max(rates):,.0f} | "
                    f"{load_seconds:.2f} |")
        print(rows[-1], flush=True)
    machine = f"{platform.processor() or platform.machine()}, torch threads {torch.get_num_threads()}"
    print("\n".join([f"{args.docs}, batch size {args.batch_size}, {machine}", "", *rows]))
    if args.output:
        tmp = args.output.with_suffix(".tmp")
        tmp.write_text(json.dumps({"machine": machine, "linkers": results}, indent=1))
        tmp.replace(args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
