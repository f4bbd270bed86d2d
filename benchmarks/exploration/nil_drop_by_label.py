#!/usr/bin/env python
"""What bio_drop_nil removes, label by label, and NER / linking F1 when it judges only some
labels: the choice behind `assemble --drop-nil-labels`. Choose on dev, with linkers whose
dictionary holds no dev mention.

    python benchmarks/exploration/nil_drop_by_label.py DEV_PIPELINE_BC5CDR bc5cdr_dev.spacy \
        --labels Disease,Chemical
"""
import argparse
import collections


def main() -> None:
    """Print, per label, the right and wrong spans the drop removes (the most frequent right
    ones with their gold ids), then one line of P/R/F1 per choice of labels to drop."""
    import spacy
    from spacy.tokens import DocBin

    from spacy_biolink.evaluation import evaluate_end_to_end
    from spacy_biolink.linker.drop_nil import DROP_NIL_NAME

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pipeline")
    parser.add_argument("gold")
    parser.add_argument("--labels", required=True, help="the entity labels, comma-separated")
    parser.add_argument("--top", type=int, default=8)
    args = parser.parse_args()
    labels = [label for label in args.labels.split(",") if label]
    nlp = spacy.load(args.pipeline)
    drop = nlp.get_pipe(DROP_NIL_NAME)
    gold = list(DocBin().from_disk(args.gold).get_docs(nlp.vocab))
    with nlp.select_pipes(disable=[DROP_NIL_NAME]):
        kept_all = list(nlp.pipe([doc.text for doc in gold], batch_size=64))
    for label in labels:
        counts = collections.Counter()
        right = collections.Counter()
        for gold_doc, doc in zip(gold, kept_all):
            spans = {(e.start_char, e.end_char): e.kb_id_ for e in gold_doc.ents
                     if e.label_ == label}
            for ent in doc.ents:
                if ent.label_ != label or ent.kb_id_ not in drop.nil_ids:
                    continue
                key = (ent.start_char, ent.end_char)
                counts["right" if key in spans else "wrong"] += 1
                if key in spans:
                    right[(ent.text.lower(), spans[key])] += 1
        print(f"{label}: dropped {counts['right']} right spans, {counts['wrong']} wrong; "
              f"most frequent right: {right.most_common(args.top)}")
    for dropped in [labels] + [[label] for label in labels]:
        drop.labels = frozenset(dropped)
        row = []
        for label in labels + [None]:
            result = evaluate_end_to_end(nlp, gold, types={label} if label else None,
                                         match_labels=True, path=args.pipeline)
            ner, link = result["ner"], result["linking"]
            row.append(f"{label or 'all'} NER P/R/F {ner['p']:.4f}/{ner['r']:.4f}/{ner['f']:.4f}"
                       f" link F {link['f']:.4f}")
        print(f"drop {','.join(dropped)} | " + " | ".join(row), flush=True)


if __name__ == "__main__":
    main()
