#!/usr/bin/env python
"""How far a trained CCA+DAN leaves training names from their concept's target.

    python benchmarks/exploration/dan_name_spread.py training/paper/dan_synonyms

L_proto pulls the mean encoding of a random share of a concept's names towards the
concept's CCA-projected prototype. This prints, in the DAN's output space, each training
name's cosine to its own concept's target and each target's cosine to the nearest other
concept's target. Where the first is not clearly above the second, a name is about as
close to another concept as to its own, and train mAP stays low.
"""
import argparse
from pathlib import Path

import numpy


def unit(rows: numpy.ndarray) -> numpy.ndarray:
    return rows / numpy.maximum(numpy.linalg.norm(rows, axis=1, keepdims=True), 1e-9)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("encoder", type=Path, help="a CCA+DAN directory from `train configs/dan.cfg`")
    args = p.parse_args(argv)

    import torch

    from spacy_biolink.encoders.dan import dan_network
    from spacy_biolink.encoders.saved import load_encoder
    from spacy_biolink.evaluation.synonym_retrieval import (SPLIT_FILE, TRAIN, SynonymSplit,
                                                            concept_prototypes)

    model, _ = load_encoder(args.encoder)
    split = SynonymSplit.from_disk(args.encoder / SPLIT_FILE)
    rows = split.indices(TRAIN)
    concepts = split.concepts[rows]
    inputs = model.attrs["vectors"].mean_many([split.texts[i] for i in rows])
    prototypes = concept_prototypes(inputs, concepts)  # one row per name
    network = dan_network(model)
    network.eval()
    with torch.no_grad():
        targets = unit(network.project_concepts(torch.as_tensor(prototypes)).numpy())
        encoded = unit(network(torch.as_tensor(inputs)).numpy())
    _, first = numpy.unique(concepts, return_index=True)
    between = targets[first] @ targets[first].T
    numpy.fill_diagonal(between, -1.0)
    nearest_other = between.max(axis=1)
    own = (encoded * targets).sum(axis=1)
    print(f"{len(rows)} training names, {len(first)} concepts")
    for label, values in (("name to its own concept's target", own),
                          ("target to the nearest other target", nearest_other)):
        p10, p50, p90 = numpy.percentile(values, [10, 50, 90])
        print(f"{label:36s} cosine median {p50:.3f} (10th pct {p10:.3f}, 90th {p90:.3f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
