#!/usr/bin/env python
"""Issue 17, search speed: the exact sparse search, PrunedSparseIndex.v1,
PrunedSparseIndex.v2 (candidates found block by block) and WordSparseIndex.v1 (candidates
from word postings, --word-settings) side by side in one process, on
saved TF-IDF pipelines of growing size: queries/s (wall and CPU), tie-aware recall@10
against the exact search, and whether v2 returns what v1 returns; with --link, the whole
linker's mentions/s with the exact index, AutoSparseIndex.v2 and (with --word-settings)
AutoSparseIndex.v3 swapped in.

    python benchmarks/exploration/blocked_search.py --pipeline /tmp/s17search/m1M_pipeline \\
        /tmp/s17search/m3M_pipeline --corpus ../shared/data/ncbi_disease/NCBItestset_corpus.txt \\
        --settings 0.8:256,0.8:512 --threads 1,2 --link

The queries are the corpus's distinct gold mention texts, normalized and encoded as the
linker does, searched at depth 40 (the linker asks k x 4 names). A pipeline saved with
any sparse index works: its postings are read memory-mapped, the rescoring rows are taken
from the save or transposed from the postings (a names x features copy: at 10M names run
this under the shared memory lock).
"""
import argparse
import json
import sys
import time
from pathlib import Path

from spacy_biolink.evaluation.search_recall import tie_aware_recall


def timed(fn, repeats):
    """(result, best wall s, CPU s of that pass)."""
    best = None
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        result = fn()
        w, c = time.perf_counter() - w, time.process_time() - c
        if best is None or w < best[0]:
            best = (w, c)
    return result, best[0], best[1]


def transposed_on_disk(names_t, directory: Path):
    """names_t's names x features copy (features ascending per name), written to .npy
    files in `directory` (reused when there) and memory-mapped: at 10M names the copy
    (1.7 GB) then takes no anonymous memory during the timed searches."""
    import numpy
    from numba import njit
    from scipy import sparse

    n_features, n_names = names_t.shape
    files = {k: directory / f"rows_{k}.npy" for k in ("indptr", "indices", "data")}
    if not all(f.exists() for f in files.values()):
        directory.mkdir(parents=True, exist_ok=True)

        @njit(nogil=True)
        def scatter(t_indptr, t_indices, t_data, nxt, r_indices, r_data):
            for f in range(t_indptr.shape[0] - 1):
                for p in range(t_indptr[f], t_indptr[f + 1]):
                    pos = nxt[t_indices[p]]
                    r_indices[pos] = f
                    r_data[pos] = t_data[p]
                    nxt[t_indices[p]] = pos + 1

        counts = numpy.bincount(names_t.indices, minlength=n_names)
        indptr = numpy.zeros(n_names + 1, dtype=numpy.int64)
        numpy.cumsum(counts, out=indptr[1:])
        # Built in memory and written in one pass: random writes into a memory-mapped
        # file make the kernel write the same pages back again and again.
        out = {"indices": numpy.empty(len(names_t.indices), dtype=numpy.int32),
               "data": numpy.empty(len(names_t.indices), dtype=numpy.float32)}
        scatter(names_t.indptr.astype(numpy.int64), names_t.indices, names_t.data,
                indptr[:-1].copy(), out["indices"], out["data"])
        for k in ("indices", "data"):
            numpy.save(str(files[k]) + ".tmp.npy", out.pop(k))
            Path(str(files[k]) + ".tmp.npy").rename(files[k])
        numpy.save(files["indptr"], indptr)
    arrays = {k: numpy.load(f, mmap_mode="r") for k, f in files.items()}
    return sparse.csr_matrix((arrays["data"], arrays["indices"], arrays["indptr"]),
                             shape=(n_names, n_features))


def gold_docs(nlp, corpus):
    import spacy

    from spacy_biolink.corpora import read_pubtator

    docs = []
    for d in read_pubtator(corpus):
        doc = nlp.make_doc(d.text)
        spans = [doc.char_span(m.start, m.end, label="Disease", alignment_mode="expand")
                 for m in d.mentions]
        doc.ents = spacy.util.filter_spans([s for s in spans if s is not None])
        docs.append(doc)
    return docs


def run_pipeline(path: Path, args) -> dict:
    import numpy
    import spacy
    from scipy import sparse

    from spacy_biolink.index import SparseIndex
    from spacy_biolink.index.registry import build_pruned_sparse_index_v2
    from spacy_biolink.legacy.index import (build_auto_sparse_index_v2,
                                            build_auto_sparse_index_v3,
                                            build_pruned_sparse_index, build_word_sparse_index)
    from spacy_biolink.encoders.tfidf import additive_vectorizer
    from spacy_biolink.index.word_postings import WordPostings

    nlp = spacy.load(path)
    linker = nlp.get_pipe("bio_linker")
    docs = gold_docs(nlp, args.corpus)
    texts = sorted({linker.normalizer.mention(e.text) for d in docs for e in d.ents})
    queries = sparse.csr_matrix(linker.linker.encode(texts), dtype=numpy.float32)
    names_t = linker.index.names_t
    rows = getattr(linker.index, "rows", None)
    if rows is None and args.rows_dir is not None:
        rows = transposed_on_disk(names_t, args.rows_dir / path.name)
    elif rows is None:
        rows = names_t.T.tocsr()
        rows.sort_indices()
    n_names = names_t.shape[1]
    out = {"pipeline": str(path), "names": n_names, "queries": len(texts), "rows": []}
    # (label, word postings) pairs: the saved ones, or one rebuild per --min-share value.
    word_sets = []
    saved = getattr(linker.index, "words", None)
    if args.word_settings and (saved is None or args.min_share):
        for share in args.min_share or [None]:
            started = time.perf_counter()
            built = WordPostings.from_names(
                (linker.normalizer.name(name) for name in linker.dictionary.names),
                additive_vectorizer(linker.model), rows,
                **({} if share is None else {"min_share": share}))
            label = "" if share is None else f"share {share} "
            print(f"word postings ({label.strip() or 'built'}): {built.n_words:,} words, "
                  f"{built.postings.nnz:,} postings ({time.perf_counter() - started:.0f} s)",
                  flush=True)
            word_sets.append((label, built))
    elif saved is not None:
        print(f"word postings (saved): {saved.n_words:,} words, {saved.postings.nnz:,} "
              "postings", flush=True)
        word_sets.append(("", saved))
    words = word_sets[-1][1] if word_sets else None
    print(f"\n{path}: {n_names:,} names, {len(texts)} queries, depth {args.depth}", flush=True)
    print("| threads | search | q/s wall | q/s CPU | x exact (wall) | recall@10 | = v1 |")
    print("|---:|---|---:|---:|---:|---:|---|")
    for threads in args.threads:
        exact = SparseIndex()
        exact.names_t, exact.n_threads = names_t, threads
        exact.search(queries[:64], args.depth)
        (e_scores, e_ids), e_wall, e_cpu = timed(lambda: exact.search(queries, args.depth),
                                                 args.repeats)
        line = {"threads": threads, "search": "exact", "wall_qps": len(texts) / e_wall,
                "cpu_qps": len(texts) / e_cpu, "speedup": 1.0, "recall_at_10": 1.0}
        out["rows"].append(line)
        print(f"| {threads} | exact (SparseIndex.v1) | {line['wall_qps']:.0f} | "
              f"{line['cpu_qps']:.0f} | 1.00x | 1.0000 | |", flush=True)
        for (label, words_used), (threshold, candidates) in (
                (w, setting) for w in word_sets for setting in args.word_settings):
            index = build_word_sparse_index(word_threshold=threshold, candidates=candidates)
            index.names_t, index.rows, index.words = names_t, rows, words_used
            index.n_threads = threads
            index.search(queries[:64], args.depth)
            result, wall, cpu = timed(lambda: index.search(queries, args.depth), args.repeats)
            recall = tie_aware_recall(result[0], e_scores, e_ids)
            kept = words_used.word_queries(queries, threshold)
            postings = int(numpy.diff(words_used.postings.indptr)[kept.indices].sum()) / len(texts)
            line = {"threads": threads, "search": f"word {label}{threshold}/{candidates}",
                    "wall_qps": len(texts) / wall, "cpu_qps": len(texts) / cpu,
                    "speedup": e_wall / wall, "recall_at_10": recall,
                    "postings_per_query": postings}
            out["rows"].append(line)
            print(f"| {threads} | WordSparseIndex.v1 {label}{threshold}/{candidates} | "
                  f"{line['wall_qps']:.0f} | {line['cpu_qps']:.0f} | {line['speedup']:.2f}x | "
                  f"{recall:.4f} | ({postings:,.0f} postings/query) |", flush=True)
        for coverage, candidates in args.settings:
            v1_result = None
            for name, cls in (("v1", build_pruned_sparse_index),
                              ("v2", build_pruned_sparse_index_v2)):
                if name == "v1" and args.skip_v1:
                    continue
                index = cls(coverage=coverage, candidates=candidates)
                index.names_t, index.rows, index.n_threads = names_t, rows, threads
                index.search(queries[:64], args.depth)
                result, wall, cpu = timed(lambda: index.search(queries, args.depth),
                                          args.repeats)
                same = ""
                if name == "v1":
                    v1_result = result
                elif v1_result is not None:
                    same = str(all(numpy.array_equal(a, b) for a, b in zip(result, v1_result)))
                recall = tie_aware_recall(result[0], e_scores, e_ids)
                line = {"threads": threads, "search": f"{name} {coverage}/{candidates}",
                        "wall_qps": len(texts) / wall, "cpu_qps": len(texts) / cpu,
                        "speedup": e_wall / wall, "recall_at_10": recall, "same_as_v1": same}
                out["rows"].append(line)
                print(f"| {threads} | PrunedSparseIndex.{name} {coverage}/{candidates} | "
                      f"{line['wall_qps']:.0f} | {line['cpu_qps']:.0f} | "
                      f"{line['speedup']:.2f}x | {recall:.4f} | {same} |", flush=True)
    if args.link:
        coverage, candidates = args.settings[-1]
        n_mentions = sum(len(d.ents) for d in docs)
        original = linker.index
        print(f"| threads | linker index | mentions/s ({n_mentions} mentions, cache cleared) |")
        print("|---:|---|---:|")
        for threads in args.threads:
            auto = build_auto_sparse_index_v2(coverage=coverage, candidates=candidates)
            auto.approximate.names_t, auto.approximate.rows = names_t, rows
            auto.pruning, auto.n_threads = True, threads
            exact = SparseIndex()
            exact.names_t, exact.n_threads = names_t, threads
            linked = [("exact", exact), (f"AutoSparseIndex.v2 {coverage}/{candidates}", auto)]
            if words is not None:
                threshold, word_candidates = args.word_settings[-1]
                auto_v3 = build_auto_sparse_index_v3(word_threshold=threshold,
                                                     candidates=word_candidates)
                approximate = auto_v3.approximate
                approximate.names_t, approximate.rows, approximate.words = names_t, rows, words
                auto_v3.pruning, auto_v3.n_threads = True, threads
                linked.append((f"AutoSparseIndex.v3 {threshold}/{word_candidates}", auto_v3))
            for label, index in linked:
                linker.linker.index = index

                def link():
                    linker.linker.clear_cache()
                    list(nlp.pipe([d.copy() for d in docs], batch_size=128))

                link()
                _, wall, _ = timed(link, args.repeats)
                out["rows"].append({"threads": threads, "link": label,
                                    "mentions_per_s": n_mentions / wall})
                print(f"| {threads} | {label} | {n_mentions / wall:.0f} |", flush=True)
        linker.linker.index = original
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pipeline", type=Path, nargs="+", required=True)
    p.add_argument("--corpus", type=Path, required=True)
    p.add_argument("--depth", type=int, default=40)
    p.add_argument("--settings", default="0.8:256,0.8:512",
                   help="coverage:candidates pairs; --link uses the last")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--word-settings", default="",
                   help="word_threshold:candidates pairs of WordSparseIndex.v1; --link uses the last")
    p.add_argument("--skip-v1", action="store_true", help="leave PrunedSparseIndex.v1 out")
    p.add_argument("--min-share", type=float, nargs="+", default=None,
                   help="rebuild the word postings once per value of min_share (0 posts "
                        "every word) instead of reading the saved ones, and compare them")
    p.add_argument("--link", action="store_true")
    p.add_argument("--rows-dir", type=Path,
                   help="write the rescoring rows here and memory-map them (large pipelines)")
    p.add_argument("--output", type=Path)
    args = p.parse_args(argv)
    args.settings = [(float(c), int(n)) for c, n in (s.split(":") for s in args.settings.split(","))]
    args.threads = [int(t) for t in args.threads.split(",")]
    args.word_settings = [(float(t), int(n)) for t, n in
                          (s.split(":") for s in args.word_settings.split(",") if s)]
    if not args.corpus.exists() or not all(path.exists() for path in args.pipeline):
        print("skipped: a pipeline or the corpus is absent")
        return 0
    results = [run_pipeline(path, args) for path in args.pipeline]
    if args.output:
        args.output.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
