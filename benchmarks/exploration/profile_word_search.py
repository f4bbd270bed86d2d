#!/usr/bin/env python
"""cProfile of a saved linker's word search (issue 35): the index as saved and each
--variant given at spacy.load over the same arrays, on a PubTator corpus's distinct
mention texts, one thread, in one process (so the ratios are comparable).

    python benchmarks/exploration/profile_word_search.py /tmp/i35/linker_real_mesh \
        ../shared/data/ncbi_disease/NCBItestset_corpus.txt \
        --variant 'v4={"@misc": "spacy-biolink.AutoSparseIndex.v4", "word_threshold": 0.2}'
"""
import argparse
import cProfile
import io
import json
import pstats
import sys
import time


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("corpus")
    p.add_argument("--variant", action="append", default=[], help="LABEL=JSON index settings")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--top", type=int, default=12)
    args = p.parse_args(argv)
    import spacy

    from spacy_biolink.corpora import read_pubtator
    from spacy_biolink.index import SparseIndex

    docs = list(read_pubtator(args.corpus))
    variants = [("saved", {})] + [(v.split("=", 1)[0], json.loads(v.split("=", 1)[1]))
                                  for v in args.variant]
    exact = None
    for label, settings in variants:
        settings = dict(settings, n_threads=1)
        nlp = spacy.load(args.model, config={"components": {"bio_linker": {"index": settings}}})
        linker = nlp.get_pipe("bio_linker")
        texts = sorted({linker.normalizer.mention(d.text[m.start:m.end])
                        for d in docs for m in d.mentions})
        queries = linker.linker.encode(texts)
        index = linker.index
        index.search(queries[:4], 10)
        if exact is None:
            exact = SparseIndex(n_threads=1)
            exact.names_t = index.names_t
            exact.search(queries[:4], 10)
            t = time.perf_counter()
            for _ in range(args.repeats):
                exact.search(queries, 10)
            print(f"exact: {len(texts) * args.repeats / (time.perf_counter() - t):.0f} q/s")
        profile = cProfile.Profile()
        t = time.perf_counter()
        profile.enable()
        for _ in range(args.repeats):
            index.search(queries, 10)
        profile.disable()
        dt = time.perf_counter() - t
        words = index.words.n_words if index.words is not None else 0
        print(f"{label}: {len(texts) * args.repeats / dt:.0f} q/s over {words} words "
              f"({len(texts)} queries x {args.repeats})")
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(args.top)
        print(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
