"""BC5CDR (or NCBI-disease) end to end on raw text, and the whole pipeline's speed.

One saved pipeline (NER, term_ruler, two linkers, bio_drop_nil: the `bc5cdr` workflow's
training/pipeline_bc5cdr) reads the texts of a gold DocBin once, timed (docs/s of
nlp.pipe, after a 5-doc warm-up, on whatever threads the box gives it); the same
predictions are then scored: NER and linking P/R/F1 over every type and per type, a
span counting only with its gold label (match_labels). --disable leaves pipes out, for
ablations from one pipeline. The 1-minute load average is printed beside the speed: on a
shared box, compare speeds only within one run.

  python benchmarks/bc5cdr_e2e.py training/pipeline_bc5cdr corpus/bc5cdr_test.spacy \
      [--types Disease,Chemical] [--disable term_ruler,bio_drop_nil] [--output m.json]
"""
import argparse
import json
import os
import time

from spacy.tokens import DocBin

from spacy_biolink.evaluation.end_to_end import evaluate_end_to_end
from spacy_biolink.linker.pipeline import load_linker_pipeline


def main() -> None:
    """Parse the arguments, time one pass, score it, print (and write) the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pipeline")
    parser.add_argument("gold", help="DocBin from `convert`")
    parser.add_argument("--types", default="Disease,Chemical",
                        help="Types scored one by one (comma-separated)")
    parser.add_argument("--disable", default="", help="Pipes to leave out (comma-separated)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--output", help="Write the figures here (JSON)")
    args = parser.parse_args()
    nlp = load_linker_pipeline(args.pipeline)
    for name in filter(None, args.disable.split(",")):
        nlp.disable_pipe(name)
    texts = [doc.text for doc in DocBin().from_disk(args.gold).get_docs(nlp.vocab)]
    list(nlp.pipe(texts[:5]))
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    predicted = list(nlp.pipe(texts, batch_size=args.batch_size))
    seconds = time.perf_counter() - started
    load = (load_before + os.getloadavg()[0]) / 2
    by_text = {doc.text: doc for doc in predicted}
    # Scored on the timed pass's predictions rather than a second run of the pipeline.
    nlp.pipe = lambda texts, **_: (by_text[text] for text in texts)
    out = {"pipeline": args.pipeline, "gold": args.gold, "pipes": nlp.pipe_names,
           "n_docs": len(texts), "seconds": seconds, "docs_per_s": len(texts) / seconds,
           "load_1min": load, "cpu_count": os.cpu_count()}
    result = evaluate_end_to_end(nlp, args.gold, match_labels=True)
    out["all"] = {"ner": result["ner"], "linking": result["linking"]}
    print(f"pipes {nlp.pipe_names}")
    print(f"{'all':9s} NER P {result['ner']['p']:.4f} R {result['ner']['r']:.4f} "
          f"F {result['ner']['f']:.4f} | linking P {result['linking']['p']:.4f} "
          f"R {result['linking']['r']:.4f} F {result['linking']['f']:.4f}")
    for label in filter(None, args.types.split(",")):
        result = evaluate_end_to_end(nlp, args.gold, match_labels=True, types={label})
        out[label] = {"ner": result["ner"], "linking": result["linking"]}
        print(f"{label:9s} NER P {result['ner']['p']:.4f} R {result['ner']['r']:.4f} "
              f"F {result['ner']['f']:.4f} | linking P {result['linking']['p']:.4f} "
              f"R {result['linking']['r']:.4f} F {result['linking']['f']:.4f}")
    print(f"{len(texts)} docs in {seconds:.1f}s: {out['docs_per_s']:.1f} docs/s "
          f"(load {load:.1f} on {os.cpu_count()} cores)")
    if args.output:
        with open(args.output, "w") as fileh:
            json.dump(out, fileh, indent=1)


if __name__ == "__main__":
    main()
