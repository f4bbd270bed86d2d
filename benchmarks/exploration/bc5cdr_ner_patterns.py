"""Issue 34, exploration: span_ruler patterns of high-precision training terms: gold
mention strings of the training DocBins whose occurrences in the training texts are gold
mentions of that label at least MIN_RATIO of the time, at least MIN_COUNT times.

  python benchmarks/exploration/bc5cdr_ner_patterns.py 0.8 2 patterns.jsonl \
      corpus/bc5cdr_train/bc5cdr.spacy corpus/bc5cdr_train/ncbi.spacy
"""
import sys, json, collections
import spacy
from spacy.matcher import PhraseMatcher
from spacy.tokens import DocBin
nlp = spacy.blank("en")
min_ratio = float(sys.argv[1]); min_count = int(sys.argv[2]); out = sys.argv[3]
docs = []
for p in sys.argv[4:]:
    docs += list(DocBin().from_disk(p).get_docs(nlp.vocab))
terms = collections.defaultdict(collections.Counter)
for d in docs:
    for e in d.ents:
        terms[e.text.lower()][e.label_] += 1
m = PhraseMatcher(nlp.vocab, attr="LOWER")
keys = list(terms)
for i in range(0, len(keys), 1000):
    m.add("T", list(nlp.tokenizer.pipe(keys[i:i+1000])))
occ = collections.Counter(); ann = collections.Counter()
for d in docs:
    gold = {(e.start, e.end): e.label_ for e in d.ents}
    for _, s, e in m(d):
        t = d[s:e].text.lower()
        occ[t] += 1
        lab = gold.get((s, e))
        if lab: ann[(t, lab)] += 1
n = 0
with open(out, "w") as f:
    for t, labs in terms.items():
        lab, c = labs.most_common(1)[0]
        if len(t) < 3 or not any(ch.isalpha() for ch in t):
            continue
        if ann[(t, lab)] >= min_count and ann[(t, lab)] / max(occ[t], 1) >= min_ratio:
            f.write(json.dumps({"label": lab, "pattern": t}) + "\n"); n += 1
print(n, "patterns")
