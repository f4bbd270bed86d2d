"""CCA+DAN training steps/s by torch thread count, with and without competing CPU load.

Issue 37: the `all` workflow's CCA+DAN step fell from ~3.9 to ~0.18 batches/s as the
load average rose to ~13. This times the real DanTrainer._epoch loop (configs/dan.cfg's
sizes: 100-d inputs, hidden 1000, batch 64) on synthetic MEDIC-sized data, alternating
torch.set_num_threads(2) and (1) in one process, first as the machine is, then with
`--load N` busy processes of our own added, so that every figure of a row pair is
measured side by side.

    python benchmarks/exploration/dan_threads.py --steps 40 --repeats 3 --load 4
"""
import argparse
import multiprocessing
import os
import time

import numpy
import torch

from spacy_biolink.evaluation.synonym_retrieval import concept_prototypes
from spacy_biolink.training.dan import DanTrainer, _members
from spacy.util import registry


def _spin() -> None:
    os.nice(0)
    while True:
        pass


def steps_per_second(trainer, network, data, steps: int, threads: int, seed: int) -> float:
    """Optimizer steps per second over `steps` steps after the epoch's negatives are drawn."""
    torch.set_num_threads(threads)
    inputs, concepts, prototypes, members, anchors = data
    optimizer = torch.optim.Adam(network.parameters(), lr=1e-3)
    epoch = trainer._epoch(network, optimizer, inputs, concepts, prototypes, members, anchors,
                           numpy.random.default_rng(seed), 0)
    next(epoch)  # the negatives and a first step, not timed
    start = time.perf_counter()
    for _ in range(steps):
        next(epoch)
    return steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--names", type=int, default=60000)
    parser.add_argument("--concepts", type=int, default=12000)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--load", type=int, default=4, help="busy processes added for the "
                        "loaded rows")
    args = parser.parse_args()
    rng = numpy.random.default_rng(0)
    concepts = numpy.sort(rng.integers(args.concepts, size=args.names)).astype(numpy.int64)
    inputs = rng.standard_normal((args.names, 100)).astype(numpy.float32)
    prototypes = concept_prototypes(inputs, concepts)
    members = _members(concepts)
    anchors = numpy.array([i for i, c in enumerate(concepts.tolist()) if len(members[c]) > 1],
                          numpy.int64)
    model = registry.resolve({"m": {"@architectures": "spacy-biolink.DanEncoder.v1",
                                    "width": 100, "hidden_width": 1000, "dropout": 0.5,
                                    "normalize": True}})["m"]
    from spacy_biolink.encoders.dan import dan_network

    network = dan_network(model)
    trainer = DanTrainer(batch_size=64)
    data = (torch.as_tensor(inputs), torch.as_tensor(concepts), prototypes, members, anchors)
    print(f"torch {torch.__version__}, default threads {torch.get_num_threads()}, "
          f"cpus {os.cpu_count()}")
    for label, load in (("as is", 0), (f"+{args.load} busy", args.load)):
        spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(load)]
        for p in spinners:
            p.start()
        try:
            rates = {2: [], 1: []}
            load_before = os.getloadavg()[0]
            for r in range(args.repeats):
                for threads in (2, 1):
                    rates[threads].append(steps_per_second(trainer, network, data, args.steps,
                                                           threads, r))
            load_after = os.getloadavg()[0]
        finally:
            for p in spinners:
                p.terminate()
                p.join()
        median = {t: float(numpy.median(v)) for t, v in rates.items()}
        print(f"{label}: load avg {load_before:.1f}-{load_after:.1f}; steps/s 2 threads "
              f"{median[2]:.2f} {[round(x, 2) for x in rates[2]]}, 1 thread {median[1]:.2f} "
              f"{[round(x, 2) for x in rates[1]]}; 1/2 = {median[1] / median[2]:.2f}x")


if __name__ == "__main__":
    main()
