"""docs/s of nlp.pipe with n_process 1 and 2, on 2,000 short texts (dev sentences) and on
long ones (five NCBI-disease dev abstracts each), each setting twice (issue 37).

    python benchmarks/exploration/n_process.py training/pipeline

Its long-text case is one batch of 40 texts at batch_size 64, so with two processes one
worker gets every text and the case cannot show a gain (BENCHMARKS.md, session 23);
benchmarks/pipeline_throughput.py --n-process 1 2 compares the two over whole corpora.
"""
import sys
import time
from pathlib import Path

import spacy
from spacy_biolink.corpora.pubtator import read_pubtator

nlp = spacy.load(sys.argv[1])
docs = [d.text for d in read_pubtator(Path(__file__).resolve().parents[2] / "assets" / "ncbi_disease" / "NCBIdevelopset_corpus.txt")]
sentences = [s.strip() + "." for t in docs for s in t.split(". ") if len(s) > 20]
short = (sentences * 10)[:2000]
long = [" ".join(docs[i:i + 5]) for i in range(0, len(docs), 5)] * 2
for name, texts in (("2,000 short texts", short), (f"{len(long)} long texts", long)):
    for n in (1, 2, 1, 2):
        start = time.perf_counter()
        list(nlp.pipe(texts, n_process=n, batch_size=64))
        s = time.perf_counter() - start
        print(f"{name}: n_process={n} {len(texts) / s:.0f} docs/s ({s:.1f} s)", flush=True)
