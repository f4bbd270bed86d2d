#!/usr/bin/env python
"""End-to-end NER and linking P/R/F1 when one pipeline's NIL drop decides which entities
stay and another pipeline's linker links them: which of the two (the NIL decision or the
links) makes a linker lose end to end. Both pipelines must hold the same NER (e.g. two
`assemble` outputs of one NER), so the entities are the same; the second linker runs with
threshold 0 on the entities the first pipeline kept.

    python benchmarks/exploration/nil_by_one_linker_links_by_another.py pipe_tfidf pipe_hybrid \
        corpus/dev.spacy 0.85 0.90
"""
import argparse


def main() -> None:
    """Print one line of P/R/F1 per threshold of the first pipeline's linker."""
    import spacy
    from spacy.language import Language

    from nil_drop_sweep import score_row

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("nil_pipeline", help="its linker's threshold and drop decide NIL")
    parser.add_argument("link_pipeline", help="its bio_linker links what the first one kept")
    parser.add_argument("gold")
    parser.add_argument("thresholds", nargs="+", type=float)
    args = parser.parse_args()
    linker = spacy.load(args.link_pipeline, config={
        "components": {"bio_linker": {"threshold": 0.0}}}).get_pipe("bio_linker")

    @Language.component("relink_by_second_linker")
    def relink(doc):
        return linker(doc)

    for threshold in args.thresholds:
        nlp = spacy.load(args.nil_pipeline, config={
            "components": {"bio_linker": {"threshold": threshold}}})
        nlp.add_pipe("relink_by_second_linker", last=True)
        print(" | ".join([f"t={threshold:.2f}"] + score_row(nlp, args.gold, args.nil_pipeline, [])),
              flush=True)


if __name__ == "__main__":
    main()
