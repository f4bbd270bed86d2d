"""Docs/s of two saved pipelines side by side in one process: alternating passes over
the texts of a DocBin (on a shared box only such ratios mean anything), and, when the
first has a bio_gazetteer, that pipe's tagging alone in the same passes.

  python benchmarks/exploration/two_pipelines_speed.py PIPELINE_A PIPELINE_B corpus/dev/bc5cdr.spacy
"""
import argparse
import os
import time

from spacy.tokens import DocBin

import spacy_biolink.ner.gazetteer  # noqa: F401  (the bio_gazetteer factory without the entry point)
from spacy_biolink.linker.pipeline import load_linker_pipeline


def main() -> None:
    """Load both pipelines, warm up, time `--passes` alternating passes, print docs/s."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("first")
    parser.add_argument("second")
    parser.add_argument("gold", help="DocBin whose texts are read")
    parser.add_argument("--passes", type=int, default=3)
    args = parser.parse_args()
    pipelines = {"first": load_linker_pipeline(args.first),
                 "second": load_linker_pipeline(args.second)}
    nlp = pipelines["first"]
    texts = [doc.text for doc in DocBin().from_disk(args.gold).get_docs(nlp.vocab)]
    for each in pipelines.values():
        list(each.pipe(texts[:5]))
    speeds = {name: [] for name in [*pipelines, "gazetteer_tagging"]}
    gazetteer = nlp.get_pipe("bio_gazetteer") if "bio_gazetteer" in nlp.pipe_names else None
    for _ in range(args.passes):
        for name, each in pipelines.items():
            started = time.time()
            list(each.pipe(texts, batch_size=64))
            speeds[name].append(len(texts) / (time.time() - started))
        if gazetteer is not None:
            docs = [nlp.make_doc(text) for text in texts]
            started = time.time()
            for doc in docs:
                gazetteer(doc)
            speeds["gazetteer_tagging"].append(len(texts) / (time.time() - started))
    for name, values in speeds.items():
        print(name, " / ".join(f"{v:.1f}" for v in values), "docs/s")
    print(f"{len(texts)} docs, load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
