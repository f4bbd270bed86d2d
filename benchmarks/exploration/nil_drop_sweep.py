#!/usr/bin/env python
"""End-to-end NER and linking P/R/F1 of an assembled pipeline (with bio_drop_nil) under
several NIL thresholds, one process: the choice behind `assemble --nil-threshold`.
Choose on dev.

    python benchmarks/exploration/nil_drop_sweep.py PIPELINE corpus/dev.spacy 0.45 0.8 0.85
"""
import sys


def main() -> None:
    """Print one line of P/R/F1 per threshold."""
    import spacy

    from spacy_biolink.evaluation import evaluate_end_to_end

    model, gold = sys.argv[1], sys.argv[2]
    for threshold in [float(x) for x in sys.argv[3:]]:
        nlp = spacy.load(model, config={"components": {"bio_linker": {"threshold": threshold}}})
        result = evaluate_end_to_end(nlp, gold, path=model)
        ner, link = result["ner"], result["linking"]
        print(f"t={threshold:.2f} NER P/R/F {ner['p']:.4f}/{ner['r']:.4f}/{ner['f']:.4f}  "
              f"link P/R/F {link['p']:.4f}/{link['r']:.4f}/{link['f']:.4f}", flush=True)


if __name__ == "__main__":
    main()
