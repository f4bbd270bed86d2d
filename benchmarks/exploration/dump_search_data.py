#!/usr/bin/env python
"""Exploration for issue 17 (search speed): build the default TF-IDF linker over DICTIONARY
with the exact index (no rescoring copy), save the pipeline to PREFIX_pipeline and the
postings plus the NCBI-disease dev and test mentions' query rows as raw .npy arrays
(PREFIX_t_{data,indices,indptr}.npy, PREFIX_{dev,test}_q.npz), so prototypes can
memory-map them instead of rebuilding.

    python benchmarks/exploration/dump_search_data.py DICTIONARY PREFIX
"""
import sys
import time
import warnings

import numpy
from scipy import sparse

from spacy_biolink.corpora import read_pubtator
from spacy_biolink.linker.pipeline import init_linker

DATA = "/work/shared/data/ncbi_disease/"
dict_path, out = sys.argv[1], sys.argv[2]
t = time.time()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    nlp = init_linker(out + "_pipeline", dict_path, force=True,
                      overrides={"components.bio_linker.index.@misc": "spacy-biolink.SparseIndex.v1"})
print("build+save s", round(time.time() - t), flush=True)
linker = nlp.get_pipe("bio_linker")
m = linker.index.names_t
numpy.save(out + "_t_data.npy", m.data)
numpy.save(out + "_t_indices.npy", m.indices)
numpy.save(out + "_t_indptr.npy", m.indptr)
for split, path in (("dev", "NCBIdevelopset_corpus.txt"), ("test", "NCBItestset_corpus.txt")):
    texts = sorted({linker.normalizer.mention(d.text[s.start:s.end])
                    for d in read_pubtator(DATA + path) for s in d.mentions})
    q = sparse.csr_matrix(linker.encode(texts), dtype=numpy.float32)
    sparse.save_npz(out + f"_{split}_q.npz", q, compressed=False)
    print(split, q.shape)
print("names_t", m.shape, m.nnz)
