#!/usr/bin/env python
"""Exploration for issue 17 (kept for the record; BENCHMARKS.md quotes it): can a dense
random projection of the TF-IDF rows, searched with faiss (flat, or HNSW M=16
efConstruction=40), give candidates that exact rescoring turns into the exact top 10?

    python benchmarks/exploration/projection_candidates.py PREFIX

PREFIX_names_t.npz / PREFIX_q.npz: a linker's names_t (features x names) and its encoded
queries, saved with scipy.sparse.save_npz (see the prep lines in BENCHMARKS.md).
"""
import sys, time, numpy, faiss
from scipy import sparse
from spacy_biolink.index import SparseIndex
pre = sys.argv[1]; depth = 10
names_t = sparse.load_npz(pre + "_names_t.npz").tocsr(); q = sparse.load_npz(pre + "_q.npz").tocsr()
ex = SparseIndex(); ex.names_t = names_t
esc, eids = ex.search(q, depth)
X = names_t.T.tocsr()
faiss.omp_set_num_threads(2)
def recall(cand):
    rec = []
    for i in range(q.shape[0]):
        c = cand[i]; c = c[c >= 0]
        s = (X[c] @ q[i].T).toarray().ravel()
        top = numpy.sort(s)[::-1][:10]
        kth = esc[i][min(9, (eids[i] >= 0).sum() - 1)]
        n = min(10, (eids[i] >= 0).sum())
        rec.append(min(n, (top >= kth - 1e-6).sum()) / max(1, n))
    return numpy.mean(rec)
for d in (64, 128, 256):
    P = (numpy.random.default_rng(0).standard_normal((X.shape[1], d)) / numpy.sqrt(d)).astype(numpy.float32)
    Y = numpy.asarray(X @ P, dtype=numpy.float32); Yq = numpy.asarray(q @ P, dtype=numpy.float32)
    idx = faiss.IndexFlatIP(d); idx.add(Y)
    _, cand = idx.search(Yq, 1000)
    print(d, "flat", {C: round(recall(cand[:, :C]), 4) for C in (50, 100, 300, 1000)}, flush=True)
    if d == 128:
        t = time.time(); h = faiss.IndexHNSWFlat(d, 16, faiss.METRIC_INNER_PRODUCT); h.hnsw.efConstruction = 40; h.add(Y); bt = time.time() - t
        for ef in (64, 128, 256):
            h.hnsw.efSearch = ef
            t = time.time(); _, cand = h.search(Yq, 100); st = time.time() - t
            print(f"  hnsw M16 efC40 build {bt:.0f}s ef {ef}: {q.shape[0]/st:.0f} q/s recall {recall(cand):.4f}", flush=True)
