#!/usr/bin/env python
"""Issue 17, dense at scale: recall@10 and queries/s of a saved dense pipeline's IVF index
(spacy-biolink.AutoFaissIndex.v1, IVF-SQ8) by nprobe, against exact search over the same
names, and with the IVF's top `--rescore` names rescored by their exact vectors.

    python benchmarks/exploration/dense_nprobe_sweep.py --pipeline /tmp/s17build/linker_3000000_dan \
        --corpus ../shared/data/ncbi_disease/NCBIdevelopset_corpus.txt --nprobe 16 32 64 128

The queries are the corpus's distinct gold mention texts, normalized and encoded as the
linker does. Every name is encoded again (a chunk at a time) to give the exact search and
the exact scores of what the IVF returned: SQ8's own scores are approximate, and judging by
them counts right names as misses. Choose settings on a dev corpus, never on test.
"""
import argparse
import json
import sys
import time
from pathlib import Path

from spacy_biolink.evaluation.search_recall import tie_aware_recall


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pipeline", type=Path, required=True)
    p.add_argument("--corpus", type=Path, required=True)
    p.add_argument("--nprobe", type=int, nargs="+", default=[16, 32, 64, 128])
    p.add_argument("--rescore", type=int, nargs="*", default=[50],
                   help="IVF candidates rescored exactly (besides plain top 10)")
    p.add_argument("--output", type=Path)
    args = p.parse_args(argv)
    for path in (args.pipeline, args.corpus):
        if not path.exists():
            print(f"skipped: {path} is absent")
            return 0

    import faiss
    import numpy
    import spacy

    from spacy_biolink.corpora import read_pubtator

    nlp = spacy.load(args.pipeline)
    linker = nlp.get_pipe("bio_linker")
    if getattr(linker.index, "vector_kind", None) == "sparse":
        raise SystemExit(f"{args.pipeline}: its index is sparse; this sweep is for dense ones")
    ivf = faiss.extract_index_ivf(linker.index.index)
    texts = sorted({linker.normalizer.mention(m.text) for d in read_pubtator(args.corpus)
                    for m in d.mentions})
    queries = numpy.ascontiguousarray(linker.linker.encode(texts), dtype=numpy.float32)
    names = linker.linker.retriever.searched.names
    started = time.perf_counter()
    vectors = numpy.empty((len(names), queries.shape[1]), dtype=numpy.float32)
    for start in range(0, len(names), 200_000):
        vectors[start:start + 200_000] = linker.linker.encode(
            [linker.normalizer.name(n) for n in names[start:start + 200_000]])
    print(f"{len(names):,} names encoded in {time.perf_counter() - started:.0f} s; "
          f"{len(texts)} queries; nlist {ivf.nlist}", flush=True)
    flat = faiss.IndexFlatIP(vectors.shape[1])
    flat.add(vectors)
    started = time.perf_counter()
    exact_scores, exact_ids = flat.search(queries, 10)
    exact_qps = len(texts) / (time.perf_counter() - started)
    del flat

    def exact_top(ids, keep):
        """The exact scores of the returned names, best `keep` first (-1: empty)."""
        scores = numpy.full((len(texts), keep), -numpy.inf, dtype=numpy.float32)
        top = numpy.full((len(texts), keep), -1, dtype=numpy.int64)
        for row in range(len(texts)):
            found = ids[row][ids[row] >= 0]
            mine = vectors[found] @ queries[row]
            order = numpy.argsort(-mine, kind="stable")[:keep]
            scores[row, :len(order)], top[row, :len(order)] = mine[order], found[order]
        return scores, top

    rows = []
    print(f"| nprobe | IVF names read | rescored exactly | IVF search q/s | recall@10 "
          f"(exact search {exact_qps:.0f} q/s) |")
    print("|---:|---:|---:|---:|---:|")
    for nprobe in args.nprobe:
        ivf.nprobe = nprobe
        for depth in [10] + list(args.rescore):
            linker.index.index.search(queries[:8], depth)
            started = time.perf_counter()
            _, ids = linker.index.index.search(queries, depth)
            qps = len(texts) / (time.perf_counter() - started)
            scores, top = exact_top(ids, 10)
            recall = tie_aware_recall(scores, exact_scores, exact_ids, 10, ids=top,
                                      tolerance=1e-5)
            rows.append({"nprobe": nprobe, "depth": depth, "q_per_s": qps, "recall_at_10": recall,
                         "names_read": int(nprobe * len(names) / ivf.nlist)})
            print(f"| {nprobe} | ~{rows[-1]['names_read']:,} | {depth if depth > 10 else '-'} | "
                  f"{qps:.0f} | {recall:.4f} |", flush=True)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps({"pipeline": str(args.pipeline), "names": len(names),
                                           "nlist": ivf.nlist, "exact_q_per_s": exact_qps,
                                           "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
