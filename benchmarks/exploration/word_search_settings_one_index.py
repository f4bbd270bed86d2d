#!/usr/bin/env python
"""AutoSparseIndex.v4's `candidates` and `word_coverage` switched on ONE loaded index
(issue 35: a 10M-name pipeline takes ~4 GB while linking, so loading it once per setting
did not fit): recall@10 and top-1 against the exact search, search q/s on one thread
(settings interleaved, best of --rounds), the RSS after load / first query / all queries,
and the n-gram -> word postings the word step reads per query. Choose on dev.

    python benchmarks/exploration/word_search_settings_one_index.py \
        /tmp/s16_35/linker_real_10000000 ../shared/data/ncbi_disease/NCBIdevelopset_corpus.txt \
        --setting 256:0.8 --setting 512:0.8 --setting 1024:0.8 --setting 256:0.9

A pipeline saved with another index is loaded as AutoSparseIndex.v4 (word_threshold 0.2).
"""
import argparse
import sys
import time


def rss_gb() -> float:
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1e6
    return float("nan")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("corpus")
    p.add_argument("--setting", action="append", default=[],
                   help="CANDIDATES:WORD_COVERAGE (default: the saved 256:0.8)")
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args(argv)
    import numpy
    import spacy

    from spacy_biolink.corpora import read_pubtator
    from spacy_biolink.evaluation.search_recall import tie_aware_recall
    from spacy_biolink.index import SparseIndex

    before = rss_gb()
    nlp = spacy.load(args.model, config={"components": {"bio_linker": {"index": {
        "@misc": "spacy-biolink.AutoSparseIndex.v4", "word_threshold": 0.2, "n_threads": 1}}}})
    linker = nlp.get_pipe("bio_linker")
    approximate = linker.index.approximate
    loaded = rss_gb()
    docs = list(read_pubtator(args.corpus))
    texts = sorted({linker.normalizer.mention(d.text[m.start:m.end])
                    for d in docs for m in d.mentions})
    queries = linker.linker.encode(texts)
    t = time.perf_counter()
    linker.index.search(queries[:1], 10)
    first_s = time.perf_counter() - t
    first = rss_gb()
    settings = [(int(c), float(w)) for c, w in (s.split(":") for s in args.setting)] or \
        [(approximate.candidates, approximate.source.word_coverage)]

    def apply(candidates, coverage):
        approximate.candidates = candidates
        approximate.source.word_coverage = coverage

    exact = SparseIndex(n_threads=1)
    exact.names_t = linker.index.names_t
    t = time.perf_counter()
    e_scores, e_ids = exact.search(queries, 10)
    exact_qps = len(texts) / (time.perf_counter() - t)
    quality = {}
    for setting in settings:
        apply(*setting)
        scores, ids = linker.index.search(queries, 10)
        recall = tie_aware_recall(scores, e_scores, e_ids, 10, ids=ids, tolerance=0.0)
        top1 = float(numpy.mean([ids[r, 0] == e_ids[r, 0] or scores[r, 0] == e_scores[r, 0]
                                 for r in range(len(texts))]))
        quality[setting] = (recall, top1)
    best = {}
    for r in range(args.rounds):
        for setting in settings if r % 2 == 0 else settings[::-1]:
            apply(*setting)
            t = time.perf_counter()
            linker.index.search(queries, 10)
            dt = time.perf_counter() - t
            best[setting] = min(best.get(setting, dt), dt)
    grams = approximate.words.grams
    df = numpy.diff(grams.indptr)
    read = []
    for r in range(queries.shape[0]):
        feats = queries.indices[queries.indptr[r]:queries.indptr[r + 1]]
        weights = queries.data[queries.indptr[r]:queries.indptr[r + 1]] ** 2
        order = numpy.argsort(df[feats], kind="stable")
        # word_kernels.word_cosines_pruned's choice: rarest first until `coverage` of the
        # squared weight is read (at least one), at the first setting's coverage.
        held = numpy.concatenate([[0.0], numpy.cumsum(weights[order])[:-1]])
        chosen = order[(held < settings[0][1] * weights.sum()) | (numpy.arange(len(order)) == 0)]
        read.append(int(df[feats[chosen]].sum()))
    print(f"{args.model}: {linker.index.n_vectors:,} names, {grams.shape[1]:,} words; "
          f"{len(texts)} distinct texts; load average "
          f"{' '.join(open('/proc/loadavg').read().split()[:3])}")
    print(f"RSS GB: {before:.2f} after imports, {loaded:.2f} after spacy.load, {first:.2f} "
          f"after the first query ({first_s:.1f} s), {rss_gb():.2f} after all")
    print(f"word step (coverage {settings[0][1]}): n-gram -> word postings per query mean "
          f"{numpy.mean(read):,.0f}, median {numpy.median(read):,.0f}")
    print(f"exact: {exact_qps:.1f} q/s")
    for setting in settings:
        recall, top1 = quality[setting]
        print(f"candidates {setting[0]}, word_coverage {setting[1]}: recall@10 {recall:.4f}, "
              f"top-1 as exact {top1:.4f}, {len(texts) / best[setting]:.1f} q/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
