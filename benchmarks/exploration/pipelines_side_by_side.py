#!/usr/bin/env python
"""Docs/s of two saved pipelines timed in one process, passes alternating, so that the
load of a shared box falls on both alike; which goes first alternates too (old, new, then
new, old), as the pass right after the other pipeline's ran about 10% faster.

    python benchmarks/exploration/pipelines_side_by_side.py OLD_PIPELINE NEW_PIPELINE \
        assets/ncbi_disease/NCBItestset_corpus.txt [ROUNDS]

Every linker's cache is cleared before every pass (cold passes, as
benchmarks/pipeline_throughput.py does).
"""
import statistics
import sys
import time


def main() -> None:
    """Print best and median docs/s of each pipeline and new/old per round."""
    import spacy

    from spacy_biolink.corpora.pubtator import read_pubtator
    from spacy_biolink.linker.find import linker_pipes

    texts = [d.text for d in read_pubtator(sys.argv[3])]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 10
    nlps = {"old": spacy.load(sys.argv[1]), "new": spacy.load(sys.argv[2])}
    times = {name: [] for name in nlps}
    for round_no in range(rounds):
        order = list(nlps.items()) if round_no % 2 == 0 else list(nlps.items())[::-1]
        for name, nlp in order:
            for _, pipe in linker_pipes(nlp):
                pipe.linker.clear_cache()
            started = time.perf_counter()
            list(nlp.pipe(texts, batch_size=64))
            times[name].append(time.perf_counter() - started)
    for name, seconds in times.items():
        print(f"{name}: docs/s best {len(texts) / min(seconds):.1f} "
              f"median {len(texts) / statistics.median(seconds):.1f}")
    ratio = [old / new for old, new in zip(times["old"], times["new"])]
    print(f"new/old docs/s per round: median {statistics.median(ratio):.3f} "
          f"(min {min(ratio):.3f}, max {max(ratio):.3f})")


if __name__ == "__main__":
    main()
