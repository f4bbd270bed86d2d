#!/usr/bin/env python
"""The word step's settings switched on ONE loaded index (issue 35: a 10M-name pipeline
takes ~4 GB while linking): v5's word_coverage search against WordSparseIndex.v3's
rare-gram search (rare_grams, rare_hits) and word_threshold. For each setting: recall@10
and top-1 against the exact search, the postings the word step reads per query and the
words it keeps; then the word step alone and the whole search, q/s on one thread,
settings interleaved, best of --rounds. Choose on dev.

    python benchmarks/exploration/rare_gram_word_search_one_index.py \
        /tmp/s16_35/linker_real_10000000 ../shared/data/ncbi_disease/NCBIdevelopset_corpus.txt \
        --setting coverage:0.8:0.2 --setting rare:4:2:0.2 --setting rare:4:2:0.3

A setting is coverage:WORD_COVERAGE:WORD_THRESHOLD or rare:RARE_GRAMS:RARE_HITS:
WORD_THRESHOLD. The pipeline is loaded as AutoSparseIndex.v5 (its candidates grow with
the names); rare settings then switch its word step, whatever rare_from says. The
rare-gram postings are derived once per RARE_GRAMS (kept for the run), as a saved v6
index built at that size would have saved them.
"""
import argparse
import sys
import time


def parse(setting: str) -> tuple:
    kind, *values = setting.split(":")
    if kind == "coverage" and len(values) == 2:
        return kind, float(values[0]), 0, float(values[1])
    if kind == "rare" and len(values) == 3:
        return kind, int(values[0]), int(values[1]), float(values[2])
    raise SystemExit(f"--setting {setting!r}: coverage:SHARE:THRESHOLD or "
                     "rare:GRAMS:HITS:THRESHOLD")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("corpus")
    p.add_argument("--setting", action="append", required=True)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args(argv)
    settings = [parse(s) for s in args.setting]
    import numpy
    import spacy

    from spacy_biolink.corpora import read_pubtator
    from spacy_biolink.evaluation.search_recall import tie_aware_recall
    from spacy_biolink.index import SparseIndex

    t = time.perf_counter()
    nlp = spacy.load(args.model, config={"components": {"bio_linker": {"index": {
        "@misc": "spacy-biolink.AutoSparseIndex.v5", "word_threshold": 0.2,
        "word_coverage": 0.8, "n_threads": 1}}}})
    load_s = time.perf_counter() - t
    linker = nlp.get_pipe("bio_linker")
    approximate = linker.index.approximate
    source, words = approximate.source, linker.index.words
    docs = list(read_pubtator(args.corpus))
    texts = sorted({linker.normalizer.mention(d.text[m.start:m.end])
                    for d in docs for m in d.mentions})
    queries = linker.linker.encode(texts)

    derived, derive_s = {}, {}
    for kind, grams, _, _ in settings:
        if kind == "rare" and grams not in derived:
            words._rare_cache = None
            t = time.perf_counter()
            derived[grams] = words.rare_gram_postings(grams)
            derive_s[grams] = time.perf_counter() - t
    words.rare_gram_postings = lambda grams: derived[grams]

    def apply(setting):
        kind, a, b, threshold = setting
        source.word_threshold = threshold
        source.rare_from = 0
        if kind == "rare":
            source.rare_grams, source.rare_hits = a, b
        else:
            source.rare_grams, source.word_coverage = None, a

    def word_step():
        return words.word_queries(queries, source.word_threshold,
                                  coverage=source.word_coverage,
                                  rare_grams=source.rare_grams, rare_hits=source.rare_hits)

    df = numpy.diff(words.grams.indptr)

    def postings_read(setting):
        kind, a, _, _ = setting
        if kind == "rare":
            return float(numpy.diff(derived[a][0])[queries.indices].sum()) / len(texts)
        total = 0
        for r in range(queries.shape[0]):
            feats = queries.indices[queries.indptr[r]:queries.indptr[r + 1]]
            weights = queries.data[queries.indptr[r]:queries.indptr[r + 1]] ** 2
            order = numpy.argsort(df[feats], kind="stable")
            held = numpy.concatenate([[0.0], numpy.cumsum(weights[order])[:-1]])
            chosen = order[(held < a * weights.sum()) | (numpy.arange(len(order)) == 0)]
            total += int(df[feats[chosen]].sum())
        return total / len(texts)

    exact = SparseIndex(n_threads=1)
    exact.names_t = linker.index.names_t
    t = time.perf_counter()
    e_scores, e_ids = exact.search(queries, 10)
    exact_qps = len(texts) / (time.perf_counter() - t)
    quality = {}
    for setting in settings:
        apply(setting)
        scores, ids = linker.index.search(queries, 10)
        recall = tie_aware_recall(scores, e_scores, e_ids, 10, ids=ids, tolerance=0.0)
        top1 = float(numpy.mean([ids[r, 0] == e_ids[r, 0] or scores[r, 0] == e_scores[r, 0]
                                 for r in range(len(texts))]))
        quality[setting] = (recall, top1, postings_read(setting), word_step().nnz / len(texts))
    step, search = {}, {}
    for r in range(args.rounds):
        for setting in settings if r % 2 == 0 else settings[::-1]:
            apply(setting)
            t = time.perf_counter()
            word_step()
            dt = time.perf_counter() - t
            step[setting] = min(step.get(setting, dt), dt)
            t = time.perf_counter()
            linker.index.search(queries, 10)
            dt = time.perf_counter() - t
            search[setting] = min(search.get(setting, dt), dt)
    print(f"{args.model}: {linker.index.n_vectors:,} names, {words.n_words:,} words, "
          f"{approximate.candidates_for(linker.index.n_vectors)} candidates; {len(texts)} "
          f"distinct texts; load {load_s:.1f} s; load average "
          f"{' '.join(open('/proc/loadavg').read().split()[:3])}")
    print(f"exact: {exact_qps:.1f} q/s; rare-gram postings derived in " + ", ".join(
        f"{s:.1f} s (rare_grams {g})" for g, s in derive_s.items()))
    for setting in settings:
        recall, top1, read, kept = quality[setting]
        print(f"{':'.join(str(v) for v in setting)}: recall@10 {recall:.4f}, top-1 as exact "
              f"{top1:.4f}, postings/query {read:,.0f}, words kept/query {kept:.0f}, word "
              f"step {len(texts) / step[setting]:.0f} q/s, search "
              f"{len(texts) / search[setting]:.0f} q/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
