"""spaCy's PhraseMatcher (attr LOWER) over bio_gazetteer's terms beside the gazetteer's own
matcher (issue 34, session 19): load / build time and memory, matching time, the spans each
finds (longest, not overlapping: filter_spans) on a PubTator corpus, and how many of the
gazetteer's matches only its spelling match finds (the tokens, joined, are no saved term).

  python benchmarks/exploration/gazetteer_vs_phrasematcher.py PIPELINE_WITH_GAZETTEER \\
      ../shared/data/bc5cdr/CDR_DevelopmentSet.PubTator.txt.gz
"""
import resource
import sys
import time

import spacy
from spacy.matcher import PhraseMatcher
from spacy.util import filter_spans

from spacy_biolink.corpora.pubtator import read_pubtator


def peak_rss_gb() -> float:
    """This process's peak RSS so far, GB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def main() -> None:
    pipeline, corpus = sys.argv[1], sys.argv[2]
    started = time.perf_counter()
    nlp = spacy.load(pipeline)
    gazetteer = nlp.get_pipe("bio_gazetteer")
    print(f"bio_gazetteer load: {time.perf_counter() - started:.1f} s, {len(gazetteer.terms)} "
          f"terms, peak RSS {peak_rss_gb():.2f} GB")
    started = time.perf_counter()
    matcher = PhraseMatcher(nlp.vocab, attr="LOWER")
    keys = list(gazetteer.terms)
    for i in range(0, len(keys), 10000):
        matcher.add("T", list(nlp.tokenizer.pipe(keys[i:i + 10000])))
    print(f"PhraseMatcher build: {time.perf_counter() - started:.1f} s, "
          f"peak RSS {peak_rss_gb():.2f} GB")
    docs = [nlp.make_doc(d.text) for d in read_pubtator(corpus)]
    started = time.perf_counter()
    ours = [gazetteer.matches(doc) for doc in docs]
    ours_seconds = time.perf_counter() - started
    started = time.perf_counter()
    theirs = [{(s.start, s.end) for s in filter_spans([doc[a:b] for _, a, b in matcher(doc)])}
              for doc in docs]
    theirs_seconds = time.perf_counter() - started
    ours_spans = [{(a, b) for a, b, _ in found} for found in ours]
    same = sum(len(a & b) for a, b in zip(ours_spans, theirs))
    spelled_only = sum(" ".join(t.lower_ for t in doc[a:b]) not in gazetteer.terms
                       for doc, found in zip(docs, ours) for a, b, _ in found)
    print(f"{len(docs)} docs: bio_gazetteer {sum(map(len, ours_spans))} spans in "
          f"{ours_seconds:.2f} s ({spelled_only} found only by spelling), PhraseMatcher + "
          f"filter_spans {sum(map(len, theirs))} in {theirs_seconds:.2f} s, {same} the same")


if __name__ == "__main__":
    main()
