#!/usr/bin/env python
"""Choose WordSparseIndex.v2's word_coverage and word_threshold (issue 35): recall@10 and
top-1 agreement against the exact search, and search q/s (one thread), of v1 and of v2 at
each COVERAGE:THRESHOLD pair, over the same word postings in one process. Run it on dev.

    python benchmarks/exploration/word_coverage_sweep.py /tmp/i35/real_1M.tsv \
        ../shared/data/ncbi_disease/NCBIdevelopset_corpus.txt 0.9:0.27,0.8:0.24,0.8:0.2 v1

The dictionary is a name<TAB>id file (benchmarks/realistic_dictionary.py writes one),
folded by the default normalizer; ~3 GB at 1M names.
"""
import sys, time, numpy
from spacy_biolink.encoders.tfidf import CharNgramTfidf
from spacy_biolink.index import SparseIndex
from spacy_biolink.legacy.index import build_word_sparse_index
from spacy_biolink.legacy.index import build_word_sparse_index_v2
from spacy_biolink.text.normalize import MentionNormalizer
from spacy_biolink.corpora import read_pubtator
from spacy_biolink.evaluation.search_recall import tie_aware_recall
f = MentionNormalizer(lowercase=True, remove_punctuation=True, spelling_variants=True, strip_plurals=True)
names = [f.name(l.split("\t")[0]) for l in open(sys.argv[1])]
names = [x for x in names if x]
vec = CharNgramTfidf(analyzer="char_wb", ngram_range=(3, 3), lowercase=True)
vec.fit(names); rows = vec.transform(names).astype(numpy.float32)
docs = list(read_pubtator(sys.argv[2]))
qs = sorted({f.mention(d.text[m.start:m.end]) for d in docs for m in d.mentions})
q = vec.transform(qs).astype(numpy.float32)
exact = SparseIndex(n_threads=1); exact.build(rows)
t = time.perf_counter(); es, ei = exact.search(q, 10); te = time.perf_counter() - t
print("names", len(names), "queries", len(qs), "exact q/s %.0f" % (len(qs) / te), flush=True)
v1 = build_word_sparse_index(n_threads=1); v1.build(rows); v1.add_words(iter(names), vec)
print("words", v1.words.n_words, flush=True)
def run(idx, label):
    idx.search(q[:4], 10)
    best = None
    for _ in range(2):
        t = time.perf_counter(); s, i = idx.search(q, 10); dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    r = tie_aware_recall(s, es, ei, 10, ids=i, tolerance=0.0)
    top1 = (i[:, 0] == ei[:, 0]).mean()
    print("%s q/s %.0f recall@10 %.4f top1-agree %.4f" % (label, len(qs) / best, r, top1), flush=True)
if "v1" in sys.argv: run(v1, "v1")
for spec in sys.argv[3].split(","):
    cov, th = map(float, spec.split(":"))
    v2 = build_word_sparse_index_v2(word_coverage=cov, word_threshold=th, n_threads=1)
    v2.names_t, v2.rows, v2.words = v1.names_t, v1.rows, v1.words
    run(v2, "v2 cov %.2f th %.2f" % (cov, th))
