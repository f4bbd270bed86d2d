#!/usr/bin/env python
"""Split a PubTator dev corpus into two halves by document, in file order (devA: the first
half), and write TRAIN + devA as one corpus: to check on devB whether a recipe trained on
more annotated text (as BioSyn's scripts train on train + dev) gains, without test.

    python benchmarks/exploration/split_dev_halves.py TRAIN DEV OUT_PREFIX
    -> OUT_PREFIX_devA.txt, OUT_PREFIX_devB.txt, OUT_PREFIX_train_devA.txt
"""
import argparse
import gzip
from pathlib import Path


def documents(path: str):
    """The corpus' documents, each its lines joined, in file order."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf8") as fileh:
        text = fileh.read()
    return [doc.strip("\n") for doc in text.split("\n\n") if doc.strip()]


def write(path: str, docs) -> None:
    """PubTator documents separated by blank lines."""
    with open(path, "w", encoding="utf8") as fileh:
        fileh.write("\n\n".join(docs) + "\n\n")


def main() -> None:
    """Write the three corpora and print their document counts."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("train")
    parser.add_argument("dev")
    parser.add_argument("out_prefix")
    args = parser.parse_args()
    outputs = [f"{args.out_prefix}_{part}.txt" for part in ("devA", "devB", "train_devA")]
    inputs = {Path(args.train).resolve(), Path(args.dev).resolve()}
    if any(Path(out).resolve() in inputs for out in outputs):
        raise SystemExit(f"{args.out_prefix}: an output would replace an input "
                         f"({args.train}, {args.dev}); choose another OUT_PREFIX")
    train, dev = documents(args.train), documents(args.dev)
    half = len(dev) // 2
    for out, docs in zip(outputs, (dev[:half], dev[half:], train + dev[:half])):
        write(out, docs)
    print(f"train {len(train)}, devA {half}, devB {len(dev) - half} documents")


if __name__ == "__main__":
    main()
