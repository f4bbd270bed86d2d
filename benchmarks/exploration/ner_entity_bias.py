#!/usr/bin/env python
"""Trading the NER's precision for recall: end-to-end P/R/F1 of an assembled pipeline with
a constant added to the NER's scores of the actions that open an entity (B-X and U-X of
each label), one process. The greedy transition-based NER takes the best-scoring valid
action at each token; its output layer's bias is one number per action, so raising the
opening actions' bias makes it start more entities, everywhere, by the same margin: one
knob between precision and recall, set after training. Choose on dev, with linkers whose
dictionary holds no dev mention.

    python benchmarks/exploration/ner_entity_bias.py DEV_PIPELINE bc5cdr_dev.spacy 0 0.5 1 1.5 \
        --types Disease,Chemical [--labels Chemical] [--ner ner]
"""
import argparse


def opening_actions(ner, labels):
    """Indices of the NER's B-X and U-X actions, for X in labels (all labels if empty)."""
    out = []
    for i in range(ner.moves.n_moves):
        name = ner.moves.get_class_name(i)
        move, _, label = name.partition("-")
        if move in ("B", "U") and label and (not labels or label in labels):
            out.append(i)
    return out


def main() -> None:
    """Print one line of NER and linking P/R/F1 per bias (per type, then over all)."""
    import spacy
    from nil_drop_sweep import score_row

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pipeline")
    parser.add_argument("gold")
    parser.add_argument("biases", nargs="+", type=float)
    parser.add_argument("--types", default="", help="score these types apart (comma-separated)")
    parser.add_argument("--labels", default="", help="bias only these labels' actions")
    parser.add_argument("--ner", default="ner", help="the NER pipe's name")
    args = parser.parse_args()
    nlp = spacy.load(args.pipeline)
    ner = nlp.get_pipe(args.ner)
    upper = ner.model.get_ref("upper")
    original = upper.get_param("b").copy()
    actions = opening_actions(ner, {x for x in args.labels.split(",") if x})
    print("biased actions:", [ner.moves.get_class_name(i) for i in actions], flush=True)
    types = [t for t in args.types.split(",") if t]
    for bias in args.biases:
        b = original.copy()
        b[actions] += bias
        upper.set_param("b", b)
        print(" | ".join([f"bias={bias:+.2f}"] + score_row(nlp, args.gold, args.pipeline, types)),
              flush=True)


if __name__ == "__main__":
    main()
