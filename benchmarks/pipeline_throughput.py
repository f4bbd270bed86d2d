#!/usr/bin/env python
"""Throughput of a saved NER + bio_linker pipeline with nlp.pipe, on raw PubTator texts.

    python benchmarks/pipeline_throughput.py --pipeline training/pipeline \
        --corpus assets/ncbi_disease/NCBItestset_corpus.txt [--repeats 3] [--n-process 1 2]

Reports documents/s and mentions/s (mentions = entities the NER found) for the whole
pipeline, the NER alone (every linker, the term ruler and the NIL drop disabled) and,
from the difference, the linkers' share; every linker's LRU cache is cleared before every
pass, so every pass is cold. Several `--n-process` values are timed in the same run, their
passes interleaved, each keeping its best; a pass with workers includes forking them, as a
`link --n-process N` run does. The 1-minute load average before and after is recorded: on a
shared box, rerun on a quiet one for the pipeline's own speed.
"""
import argparse
import json
import os
import platform
import resource
import sys
import time
from pathlib import Path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pipeline", type=Path, required=True)
    p.add_argument("--corpus", type=Path, required=True)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--n-process", type=int, nargs="+", default=[1],
                   help="nlp.pipe worker processes; several values are compared in one run")
    p.add_argument("--output", type=Path)
    args = p.parse_args(argv)

    import spacy

    from spacy_biolink.corpora.pubtator import read_pubtator

    texts = [d.text for d in read_pubtator(args.corpus)]
    from spacy_biolink.linker.find import linker_pipes

    nlp = spacy.load(args.pipeline)
    linkers = linker_pipes(nlp)
    # what follows the NER in the bc5cdr pipeline: the term ruler and the NIL drop
    after_ner = [name for name, _ in linkers] + [
        name for name in nlp.pipe_names if name in ("term_ruler", "bio_drop_nil")]
    load_before = os.getloadavg()[0]
    list(nlp.pipe(texts[:5]))  # first-call costs (numba kernel load) out of the timing

    def one_pass(n_process, disable=()):
        for _, pipe in linkers:
            pipe.linker.clear_cache()
        start = time.perf_counter()
        with nlp.select_pipes(disable=list(disable)):
            docs = list(nlp.pipe(texts, batch_size=args.batch_size, n_process=n_process))
        return time.perf_counter() - start, sum(len(d.ents) for d in docs)

    # The settings and the two kinds of pass alternate, so that a change of load between
    # them moves all of them; each keeps its best.
    best = {n: {"full": float("inf"), "ner": float("inf")} for n in args.n_process}
    for _ in range(args.repeats):
        for n in args.n_process:
            elapsed, mentions = one_pass(n)
            best[n]["full"] = min(best[n]["full"], elapsed)
            best[n]["ner"] = min(best[n]["ner"], one_pass(n, disable=after_ner)[0])
    runs = []
    for n in args.n_process:
        full_s, ner_s = best[n]["full"], best[n]["ner"]
        linker_s = full_s - ner_s
        runs.append({
            "n_process": n,
            "with_linker": {"seconds": full_s, "docs_per_s": len(texts) / full_s,
                            "mentions_per_s": mentions / full_s},
            "ner_only": {"seconds": ner_s, "docs_per_s": len(texts) / ner_s,
                         "mentions_per_s": mentions / ner_s},
            "linker_share_s": linker_s,
            # a share within the passes' noise (not above zero) gives no rate, not an absurd one
            "linker_only_mentions_per_s": mentions / linker_s if linker_s > 0 else None,
            "whole_pipeline_speedup_vs_first": best[args.n_process[0]]["full"] / full_s,
        })
    rusage = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    result = {
        "command": " ".join([Path(sys.executable).name] + sys.argv),
        "machine": {"platform": platform.platform(), "python": platform.python_version(),
                    "cpu_count": os.cpu_count(),
                    "load_1min_before_after": [load_before, os.getloadavg()[0]]},
        "docs": len(texts), "mentions_found": mentions, "pipes": nlp.pipe_names,
        # ru_maxrss is in KiB on Linux; a forked worker's RSS counts the pages it still
        # shares with the parent, so parent + worker overstates what the two hold together
        "peak_rss_mb": {"parent": rusage[0].ru_maxrss / 1024,
                        "largest_worker": rusage[1].ru_maxrss / 1024},
        "runs": runs,
    }
    print(json.dumps(result, indent=2))
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
