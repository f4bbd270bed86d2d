#!/usr/bin/env python
"""Gold-mention dev acc@1 of several trained fast encoders linked as one: the mean of
their cosines plus w times the TF-IDF cosine (each encoder's L2-normalised rows joined and
scaled by sqrt(1/n), inside the HybridEncoder and HybridIndex the fast trainer saves), over
the dictionary + train mentions, as the trainer scores dev.

    python benchmarks/exploration/seed_ensemble_dev.py MEDIC TRAIN DEV ENC_A,ENC_B 0.5,1.0

ENC_*: the encoders' directories (OUTPUT, not OUTPUT/hybrid). One dir gives the single
encoder's hybrid, the trainer's own figure.
"""
import argparse
import math


def main() -> None:
    """Print one line of dev acc@1 / acc@5 per sparse weight."""
    import numpy
    from thinc.api import Model

    from spacy_biolink.encoders.hybrid import hybrid_encoder
    from spacy_biolink.encoders.saved import load_encoder
    from spacy_biolink.training.dan import hybrid_index_config
    from spacy_biolink.training.data import read_dictionary
    from spacy_biolink.training.dev import augmented_for_dev, dev_accuracy
    from spacy_biolink.training.fast import HYBRID_CANDIDATES, HYBRID_EF_SEARCH, hybrid_tfidf

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dictionary")
    parser.add_argument("train", help="its mentions join the dictionary, as for the trainer's dev")
    parser.add_argument("dev")
    parser.add_argument("encoders", help="comma-separated trained encoder directories")
    parser.add_argument("weights", help="comma-separated TF-IDF weights")
    args = parser.parse_args()
    encoders = [load_encoder(path)[0] for path in args.encoders.split(",")]
    scale = numpy.float32(math.sqrt(1.0 / len(encoders)))

    def forward(model, texts, is_train):
        rows = [numpy.asarray(encoder.predict(texts), dtype=numpy.float32) for encoder in encoders]
        return numpy.hstack(rows) * scale, None

    joined = Model("joined_encoders", forward, init=lambda model, X=None, Y=None: None)
    width = sum(encoder.predict(["a"]).shape[1] for encoder in encoders)
    dictionary = augmented_for_dev(read_dictionary(args.dictionary), [args.train])
    for weight in (float(w) for w in args.weights.split(",")):
        scores = dev_accuracy(hybrid_encoder(joined, hybrid_tfidf(), 1.0, weight), dictionary,
                              args.dev, index_config=hybrid_index_config(
                                  width, HYBRID_CANDIDATES, HYBRID_EF_SEARCH))
        print(f"{args.encoders} w={weight}: dev acc@1 {scores['acc@1']:.4f} "
              f"acc@5 {scores['acc@5']:.4f}", flush=True)


if __name__ == "__main__":
    main()
