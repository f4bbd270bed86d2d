#!/usr/bin/env python
"""Micro-benchmark of SparseIndex.search: numba kernel vs the scipy product it replaces.

Builds (or loads, with --pipeline) the default bio_linker over a dictionary, encodes the
distinct mention texts of a PubTator corpus, and times `search_concepts` (the depth-growing
loop the linker runs) with the kernel and with `SparseIndex._search_scipy`, checking that
every (scores, ids) array is bit-identical. Also reports the first-call cost (numba import
plus compile, or cache load) measured in a fresh subprocess.

    python benchmarks/exploration/bench_sparse_search.py \
        --dictionary ../shared/data/medic/medic_06Jul2012.txt.gz \
        --corpus ../shared/data/ncbi_disease/NCBItestset_corpus.txt [--pipeline DIR]
"""
import argparse
import json
import subprocess
import sys
import time
import warnings
from pathlib import Path

FIRST_CALL = """import json,time,numpy
from scipy import sparse
from spacy_biolink.index import SparseIndex
index = SparseIndex(); index.build(sparse.random(50, 20, density=0.3, format="csr", dtype="f"))
q = sparse.random(3, 20, density=0.3, format="csr", dtype="f")
t = time.perf_counter(); index.search(q, 5); dt = time.perf_counter() - t
print(json.dumps({"first_call_s": dt}))
"""


def first_call_s(env=None) -> float:
    out = subprocess.run([sys.executable, "-c", FIRST_CALL], check=True, capture_output=True,
                         text=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])["first_call_s"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dictionary", type=Path)
    p.add_argument("--corpus", type=Path, required=True)
    p.add_argument("--pipeline", type=Path, help="saved pipeline (built and saved if absent)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--k", type=int, default=0, help="concepts per mention (0: linker's k)")
    args = p.parse_args(argv)

    import numpy
    import spacy
    from spacy_biolink.corpora import read_pubtator
    from spacy_biolink.index import SparseIndex
    from spacy_biolink.index.concepts import search_concepts

    if args.pipeline and args.pipeline.exists():
        nlp = spacy.load(args.pipeline)
    else:
        from spacy_biolink.linker.pipeline import init_linker

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nlp = init_linker(None, args.dictionary)
        if args.pipeline:
            nlp.to_disk(args.pipeline)
    linker = nlp.get_pipe("bio_linker")
    index = linker.index
    # AutoSparseIndex (the default) searches with an exact SparseIndex below its min_names.
    assert isinstance(getattr(index, "active", index), SparseIndex), \
        "the pipeline's index does not search with a SparseIndex"
    k = args.k or linker.cfg["k"]
    texts = sorted({d.text[m.start:m.end] for d in read_pubtator(args.corpus) for m in d.mentions})
    queries = linker.linker.encode(texts)
    print(f"{len(texts)} distinct mention texts, {index.n_vectors} names, "
          f"{index.names_t.nnz} postings, k={k}")

    calls = []
    real_search = SparseIndex.search

    def recording(self, q, depth):
        calls.append((q, depth))
        return real_search(self, q, depth)

    SparseIndex.search = recording
    try:
        search_concepts(linker.dictionary, index, queries, k)
    finally:
        SparseIndex.search = real_search
    print(f"search calls (rows, depth): {[(q.shape[0], d) for q, d in calls]}")

    for q, depth in calls:
        a, b = index.search(q, depth), index._search_scipy(q, depth)
        assert numpy.array_equal(a[1], b[1]) and numpy.array_equal(a[0], b[0]), "not identical"
    print("kernel == scipy: identical scores and ids on every call")

    def best(fn):
        times = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            for q, depth in calls:
                fn(q, depth)
            times.append(time.perf_counter() - t)
        return min(times)

    kernel_s = best(index.search)
    scipy_s = best(index._search_scipy)
    t = time.perf_counter()
    search_concepts(linker.dictionary, index, queries, k)
    concepts_s = time.perf_counter() - t
    print(f"search, all calls: kernel {kernel_s * 1e3:.1f} ms, scipy {scipy_s * 1e3:.1f} ms "
          f"({scipy_s / kernel_s:.1f}x); search_concepts with kernel {concepts_s * 1e3:.1f} ms")
    print(f"first call in a fresh process (numba import + cache load or compile): "
          f"{first_call_s():.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
