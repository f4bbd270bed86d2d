#!/usr/bin/env python
"""What the raw-text pipeline misses, per gold entity: each gold span (exact offsets and
label) that the assembled pipeline does not return is put in one class, with its most
frequent texts:

- dropped by NIL: the NER (or the ruler, or bio_propagate) found it exactly and
  bio_drop_nil removed it;
- no overlapping span: nothing predicted touches it;
- wrong label: the same offsets under another label;
- predicted wider / narrower: a predicted span covers it / lies inside it;
- crossing: a predicted span overlaps it otherwise.

    python benchmarks/exploration/ner_misses.py DEV_PIPELINE corpus/bc5cdr_dev.spacy

Read it on dev: it says where recall goes, not what to change."""
import argparse
import collections


def miss_class(gold_span, predicted, before_drop) -> str:
    """The class of a gold span the pipeline does not return exactly (see the module)."""
    key = (gold_span.start_char, gold_span.end_char, gold_span.label_)
    if key in before_drop:
        return "dropped by NIL"
    overlapping = [p for p in predicted
                   if p.start_char < gold_span.end_char and gold_span.start_char < p.end_char]
    if not overlapping:
        return "no overlapping span"
    if any((p.start_char, p.end_char) == key[:2] for p in overlapping):
        return "wrong label"
    if any(p.start_char <= key[0] and p.end_char >= key[1] for p in overlapping):
        return "predicted wider"
    if any(p.start_char >= key[0] and p.end_char <= key[1] for p in overlapping):
        return "predicted narrower"
    return "crossing"


def main() -> None:
    """Print, per (label, class), the number of gold spans missed and their 6 most
    frequent texts (lowercased)."""
    import spacy
    from spacy.tokens import DocBin

    from spacy_biolink.linker.drop_nil import DROP_NIL_NAME

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pipeline")
    parser.add_argument("gold")
    args = parser.parse_args()
    nlp = spacy.load(args.pipeline)
    gold = list(DocBin().from_disk(args.gold).get_docs(nlp.vocab))
    has_drop = DROP_NIL_NAME in nlp.pipe_names
    with nlp.select_pipes(disable=[DROP_NIL_NAME] if has_drop else []):
        before = list(nlp.pipe((g.text for g in gold), batch_size=64))
    drop = nlp.get_pipe(DROP_NIL_NAME) if has_drop else None
    counts = collections.Counter()
    texts = collections.defaultdict(collections.Counter)
    for g, pre in zip(gold, before):
        before_drop = {(e.start_char, e.end_char, e.label_) for e in pre.ents}
        doc = drop(pre.copy()) if drop is not None else pre
        returned = {(e.start_char, e.end_char, e.label_) for e in doc.ents}
        for span in g.ents:
            if (span.start_char, span.end_char, span.label_) in returned:
                continue
            kind = miss_class(span, doc.ents, before_drop if has_drop else set())
            counts[(span.label_, kind)] += 1
            texts[(span.label_, kind)][span.text.lower()] += 1
    totals = collections.Counter(e.label_ for g in gold for e in g.ents)
    for (label, kind), n in sorted(counts.items()):
        common = ", ".join(f"{t!r} {c}" for t, c in texts[(label, kind)].most_common(6))
        print(f"{label} ({totals[label]} gold) | {kind}: {n} | {common}")


if __name__ == "__main__":
    main()
