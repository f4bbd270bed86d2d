"""Two linkers (diseases, chemicals) or one linker with type_filter by span label?

Issue 34: on BC5CDR gold mentions, link every Disease and Chemical mention with
- "two": a disease linker (labels ["Disease"]) then a chemical linker (labels
  ["Chemical"]), each over its own dictionary, run one after the other on each doc;
- "one": one linker over both dictionaries' concepts whose type_filter keeps each
  label to its branches (MeSH C+F03 for Disease, D for Chemical).
Both see the same Docs (gold spans labelled with their type); every pass is cold (each
linker's LRU cache cleared), the arrangements interleaved, best and median of --repeats
passes in one process. acc@1 counts a mention right when the linked concept has one of
its gold ids (NIL and a skipped mention are wrong), over the mentions whose gold ids
all... are any in the union of the dictionaries, so both arrangements are scored on one
set.

    python benchmarks/exploration/one_or_two_linkers.py --corpus CDR_TestSet.PubTator.txt.gz \
        --disease DIS_LINKER --chemical CHEM_LINKER --combined ONE_LINKER --repeats 3
"""
import argparse
import gc
import json
import statistics
import time
from pathlib import Path

import spacy
from spacy.tokens import Span

from spacy_biolink.corpora import read_pubtator
from spacy_biolink.kb.ids import split_gold_id_parts


def prepare(corpus: Path, make_doc, types):
    """Per doc: text and [(start_char, end_char, label, gold ids)], token-aligned, no
    overlaps (the first of overlapping mentions kept)."""
    prepared = []
    for pdoc in read_pubtator(corpus, types=types):
        doc = make_doc(pdoc.text)
        spans, taken = [], set()
        for m in pdoc.mentions:
            span = doc.char_span(m.start, m.end, label=m.type, alignment_mode="expand")
            if span is None or taken.intersection(range(span.start, span.end)):
                continue
            taken.update(range(span.start, span.end))
            ids = {i for part in split_gold_id_parts(m.raw_ids) for i in part}
            spans.append((span.start_char, span.end_char, m.type, ids))
        prepared.append((pdoc.text, sorted(spans)))
    return prepared


def make_docs(make_doc, prepared):
    docs = []
    for text, spans in prepared:
        doc = make_doc(text)
        doc.ents = [Span(doc, *_token_range(doc, s, e), label=label) for s, e, label, _ in spans]
        docs.append(doc)
    return docs


def _token_range(doc, start, end):
    span = doc.char_span(start, end)
    return span.start, span.end


def run(pipes, docs):
    for pipe in pipes:
        pipe.linker.clear_cache()
    gc.collect()
    started = time.perf_counter()
    for pipe in pipes:
        docs = list(pipe.pipe(docs, batch_size=64))
    return time.perf_counter() - started, docs


def score(docs, prepared, known):
    n = right = 0
    by_type = {}
    for doc, (_, spans) in zip(docs, prepared):
        for ent, (_, _, label, ids) in zip(doc.ents, spans):
            if not ids & known:
                continue
            n += 1
            hit = ent.kb_id_ in ids
            right += hit
            counts = by_type.setdefault(label, [0, 0])
            counts[0] += 1
            counts[1] += hit
    return {"n": n, "acc@1": right / n,
            "by_type": {t: {"n": c[0], "acc@1": c[1] / c[0]} for t, c in by_type.items()}}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--disease", type=Path, required=True)
    parser.add_argument("--chemical", type=Path, required=True)
    parser.add_argument("--combined", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()

    disease = spacy.load(args.disease).get_pipe("bio_linker")
    disease.cfg["labels"] = ["Disease"]
    chemical = spacy.load(args.chemical).get_pipe("bio_linker")
    chemical.cfg["labels"] = ["Chemical"]
    combined_nlp = spacy.load(args.combined)
    combined = combined_nlp.get_pipe("bio_linker")
    prepared = prepare(args.corpus, combined_nlp.make_doc, {"Disease", "Chemical"})
    known = set()
    for pipe in (disease, chemical, combined):
        d = pipe.dictionary
        for _, spans in prepared:
            known.update(i for *_, ids in spans for i in ids if d.concept_index(i) is not None)
    arrangements = {"two": [disease, chemical], "one": [combined]}
    times = {name: [] for name in arrangements}
    results = {}
    for rep in range(args.repeats):
        for name, pipes in arrangements.items():
            seconds, docs = run(pipes, make_docs(combined_nlp.make_doc, prepared))
            times[name].append(seconds)
            if rep == 0:
                results[name] = score(docs, prepared, known)
    n_mentions = sum(len(spans) for _, spans in prepared)
    for name in arrangements:
        results[name].update({
            "mentions_per_s_best": n_mentions / min(times[name]),
            "mentions_per_s_median": n_mentions / statistics.median(times[name]),
            "seconds": times[name]})
    results["ratio_one_over_two_best"] = (results["one"]["mentions_per_s_best"]
                                          / results["two"]["mentions_per_s_best"])
    results["mentions_linked"] = n_mentions
    print(json.dumps(results, indent=1))
    if args.output:
        args.output.write_text(json.dumps(results, indent=1), encoding="utf8")


if __name__ == "__main__":
    main()
