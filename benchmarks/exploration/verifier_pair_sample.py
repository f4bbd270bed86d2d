"""Issue 23's quick check: 200 synonym pairs (two names of one MEDIC concept) and 200 pairs of
names of two random concepts, scored by trained verifiers (`score-pairs`' API) and by the
TF-IDF character-trigram cosine; ROC AUC of each on the same 400 pairs.

Concepts are drawn from the verifiers' held-out test split (`--concepts test`, the
default: no name was seen in training) or from all of MEDIC (`--concepts all`, the
issue's first measurement, where most names were training names).

    python benchmarks/exploration/verifier_pair_sample.py training/paper/verifier_subword_last4 \\
        --output benchmarks/results/verifier_pair_sample.json
"""
import argparse
import json
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("verifiers", type=Path, nargs="+")
    parser.add_argument("--dictionary", type=Path,
                        default=DATA / "medic" / "medic_06Jul2012.txt.gz")
    parser.add_argument("--concepts", choices=("test", "all"), default="test")
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()

    import srsly

    from spacy_biolink import load_dictionary
    from spacy_biolink.encoders.siamese import tfidf_cosines
    from spacy_biolink.encoders.tfidf import CharNgramTfidf
    from spacy_biolink.evaluation.pair_scores import roc_auc
    from spacy_biolink.evaluation.name_pairs import concept_names_by_split, split_concepts
    from spacy_biolink.linker.stages.verifier import CandidateVerifier

    full = load_dictionary(args.dictionary)
    meta = srsly.read_json(args.verifiers[0] / "meta.json")
    split = split_concepts(full.n_concepts, meta["pair_settings"]["fractions"], meta.get("seed", 0))
    if args.concepts == "test":
        names = concept_names_by_split(full, split)[2]
    else:
        names = {c: list(dict.fromkeys(full.names_of(c))) for c in range(full.n_concepts)}
    rng = random.Random(args.seed)
    multi = sorted(c for c, n in names.items() if len(n) > 1)
    concepts = sorted(names)
    pairs, labels = [], []
    for c in rng.sample(multi, args.n):
        a, b = rng.sample(names[c], 2)
        pairs.append((a, b))
        labels.append(1)
    for _ in range(args.n):
        c, d = rng.sample(concepts, 2)
        pairs.append((rng.choice(names[c]), rng.choice(names[d])))
        labels.append(0)
    vectorizer = CharNgramTfidf("char_wb", (3, 3)).fit(list(full.names))
    result = {"concepts": args.concepts, "n": args.n, "seed": args.seed,
              "auc": {"tfidf_cosine": roc_auc(labels, tfidf_cosines(vectorizer, pairs))}}
    for path in args.verifiers:
        verifier = CandidateVerifier.from_trained(path)
        result["auc"][str(path)] = roc_auc(labels, verifier.score_pairs(pairs))
    print(json.dumps(result, indent=2))
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(result, indent=2), encoding="utf8")


if __name__ == "__main__":
    main()
