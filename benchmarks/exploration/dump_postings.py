#!/usr/bin/env python
"""Exploration for issue 17: build the default linker over DICTIONARY and save its
postings and the NCBI-disease test mentions' TF-IDF rows as PREFIX_names_t.npz / PREFIX_q.npz.

    python benchmarks/exploration/dump_postings.py DICTIONARY PREFIX
"""
import sys, time, warnings, numpy
from scipy import sparse
from spacy_biolink.linker.pipeline import init_linker
from spacy_biolink.corpora import read_pubtator
dict_path, out = sys.argv[1], sys.argv[2]
t = time.time()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    nlp = init_linker(None, dict_path)
print("build", time.time() - t, flush=True)
linker = nlp.get_pipe("bio_linker")
texts = sorted({d.text[m.start:m.end] for d in read_pubtator("/work/shared/data/ncbi_disease/NCBItestset_corpus.txt") for m in d.mentions})
q = sparse.csr_matrix(linker.encode(texts), dtype=numpy.float32)
m = linker.index.names_t
sparse.save_npz(out + "_names_t.npz", m, compressed=False)
sparse.save_npz(out + "_q.npz", q, compressed=False)
print(m.shape, m.nnz, q.shape, "k", linker.cfg["k"])
lens = numpy.diff(m.indptr)
print("postings len pct", numpy.percentile(lens, [50, 90, 99, 99.9, 100]))
ql = numpy.diff(q.indptr); print("query nnz mean", ql.mean())
tot = numpy.array([lens[q.indices[q.indptr[i]:q.indptr[i+1]]].sum() for i in range(q.shape[0])])
print("postings touched per query mean", tot.mean())
