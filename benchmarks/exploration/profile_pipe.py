#!/usr/bin/env python
"""cProfile of the linking pass that bench_vs_scispacy.py times (`nlp.pipe` over docs whose
doc.ents are the gold mentions, LRU cache cleared), on a saved pipeline.

    python benchmarks/exploration/profile_pipe.py --pipeline DIR \
        --corpus ../shared/data/ncbi_disease/NCBItestset_corpus.txt [--dictionary FILE]

Builds and saves the default pipeline to DIR first if DIR does not exist (--dictionary).
Prints the best-of-N wall time of the pass, then the profile of one more pass.
"""
import argparse
import cProfile
import gc
import pstats
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench_vs_scispacy.py
from bench_vs_scispacy import make_docs, prepare_mentions  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pipeline", type=Path, required=True)
    p.add_argument("--corpus", type=Path, required=True)
    p.add_argument("--dictionary", type=Path)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--top", type=int, default=30)
    args = p.parse_args(argv)

    import spacy

    if not args.pipeline.exists():
        from spacy_biolink.linker.pipeline import init_linker

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            init_linker(None, args.dictionary).to_disk(args.pipeline)
    nlp = spacy.load(args.pipeline)
    linker = nlp.get_pipe("bio_linker")
    texts, per_doc, stats = prepare_mentions(args.corpus, nlp.make_doc)

    def one_pass():
        docs = make_docs(nlp.make_doc, texts, per_doc)
        linker.linker.clear_cache()
        gc.collect()
        t = time.perf_counter()
        list(nlp.pipe(docs, batch_size=args.batch_size))
        return time.perf_counter() - t

    one_pass()  # warm-up (first search call: numba import and compile or cache load)
    best = min(one_pass() for _ in range(args.repeats))
    n = stats["mentions"]
    print(f"{n} mentions: best of {args.repeats} {best * 1e3:.1f} ms = {n / best:,.0f} mentions/s")

    docs = make_docs(nlp.make_doc, texts, per_doc)
    linker.linker.clear_cache()
    gc.collect()
    prof = cProfile.Profile()
    prof.enable()
    list(nlp.pipe(docs, batch_size=args.batch_size))
    prof.disable()
    pstats.Stats(prof).sort_stats("cumulative").print_stats(args.top)
    pstats.Stats(prof).sort_stats("tottime").print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
