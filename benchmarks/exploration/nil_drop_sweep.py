#!/usr/bin/env python
"""End-to-end NER and linking P/R/F1 of an assembled pipeline (with bio_drop_nil) under
several NIL thresholds, one process: the choice behind `assemble --nil-threshold`
(every linker of the pipeline gets the threshold) or, with --drop-below, behind
`assemble --drop-below` (bio_drop_nil's min_score gets it; the linkers keep theirs); with --types each type is scored apart
(labels must match), so that with one linker per type the columns choose apart. Choose
on dev, with linkers whose dictionary holds no dev mention.

    python benchmarks/exploration/nil_drop_sweep.py PIPELINE corpus/dev.spacy 0.45 0.8 0.85
    python benchmarks/exploration/nil_drop_sweep.py DEV_PIPELINE_BC5CDR bc5cdr_dev.spacy \
        0.45 0.65 0.75 0.85 0.95 --types Disease,Chemical
    python benchmarks/exploration/nil_drop_sweep.py PIPELINE corpus/dev.spacy 0.3 0.5 0.7 --drop-below
"""
import argparse


def main() -> None:
    """Print one line of P/R/F1 per threshold (per type, then over all, with --types)."""
    import spacy

    from spacy_biolink.linker.find import linker_pipes

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pipeline")
    parser.add_argument("gold")
    parser.add_argument("thresholds", nargs="+", type=float)
    parser.add_argument("--types", default="", help="score these types apart (comma-separated)")
    parser.add_argument("--drop-below", action="store_true",
                        help="sweep bio_drop_nil's min_score instead of the linkers' threshold")
    args = parser.parse_args()
    names = [name for name, _ in linker_pipes(spacy.load(args.pipeline))]
    types = [t for t in args.types.split(",") if t]
    for threshold in args.thresholds:
        overrides = ({"bio_drop_nil": {"min_score": threshold}} if args.drop_below
                     else {name: {"threshold": threshold} for name in names})
        nlp = spacy.load(args.pipeline, config={"components": overrides})
        print(" | ".join([f"t={threshold:.2f}"] + score_row(nlp, args.gold, args.pipeline, types)),
              flush=True)


def score_row(nlp, gold, path, types):
    """End-to-end NER and linking P/R/F1 of nlp on gold, per type (labels must match)
    and then over all, each as one printable cell."""
    from spacy_biolink.evaluation import evaluate_end_to_end

    row = []
    for label in types + [None]:
        result = evaluate_end_to_end(nlp, gold, path=path, match_labels=bool(types),
                                     types={label} if label else None)
        ner, link = result["ner"], result["linking"]
        row.append(f"{label or 'all'} NER P/R/F {ner['p']:.4f}/{ner['r']:.4f}/{ner['f']:.4f} "
                   f"link P/R/F {link['p']:.4f}/{link['r']:.4f}/{link['f']:.4f}")
    return row


if __name__ == "__main__":
    main()
