"""What an untrained transformer knows about synonymy on the verifiers' held-out pairs.

The pairs are those `eval-pairs` scores (the dictionary split and pair settings of a
trained verifier's meta.json); each is scored by the cosine of the backbone's mean-pooled
name vectors (`spacy-biolink.TransformerEncoder.v1` with the backbone's own weights, no
training), beside the TF-IDF character-trigram cosine. ROC AUC overall and by negative
kind, dev and test. A row for issue 23: it says how far general-domain pretraining alone
gets on concepts no verifier saw.

    python benchmarks/exploration/verifier_pretrained_cosine.py /tmp/v23/runs/sub_last4 \\
        --dictionary ../shared/data/medic/medic_06Jul2012.txt.gz \\
        --output benchmarks/results/issue23/pretrained_cosine.json
"""
import argparse
import json
import time
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("verifier", type=Path, help="A trained verifier (its split and pair settings)")
    parser.add_argument("--dictionary", type=Path,
                        default=DATA / "medic" / "medic_06Jul2012.txt.gz")
    parser.add_argument("--backbone", type=Path, default=None,
                        help="Local Hugging Face directory (default: the MiniLM package)")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: its default)")
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()

    import torch

    from spacy_biolink import load_dictionary
    from spacy_biolink.encoders.siamese import tfidf_cosines
    from spacy_biolink.encoders.tfidf import CharNgramTfidf
    from spacy_biolink.encoders.transformer import build_for_training, embed
    from spacy_biolink.evaluation.pair_scores import auc_by_negative_kind, saved_verifier_pairs

    if args.threads:
        torch.set_num_threads(args.threads)
    dictionary = load_dictionary(args.dictionary)
    pairs = saved_verifier_pairs(args.verifier, dictionary)
    config = {"paths": {"backbone": None if args.backbone is None else str(args.backbone)},
              "encoder": {"@architectures": "spacy-biolink.TransformerEncoder.v1",
                          "pooling": "mean", "max_length": 25, "normalize": True}}
    model, _, backbone = build_for_training(config)
    vectorizer = CharNgramTfidf("char_wb", (3, 3)).fit(list(dictionary.names))

    result = {"verifier": str(args.verifier), "backbone": str(backbone), "splits": {}}
    for split in ("dev", "test"):
        pair_set = pairs[split]
        names = sorted({name for pair in pair_set.pairs for name in pair})
        start = time.perf_counter()
        vectors = embed(model, names)
        seconds = time.perf_counter() - start
        row = {name: i for i, name in enumerate(names)}
        left = vectors[[row[a] for a, _ in pair_set.pairs]]
        right = vectors[[row[b] for _, b in pair_set.pairs]]
        scorers = {"pretrained_cosine": (left * right).sum(axis=1),
                   "tfidf_cosine": tfidf_cosines(vectorizer, pair_set.pairs)}
        out = {"pairs": len(pair_set), "names": len(names), "encode_seconds": round(seconds, 1)}
        for scorer, scores in scorers.items():
            out[scorer] = auc_by_negative_kind(pair_set.labels, pair_set.kinds, scores)
        result["splits"][split] = out

    print("| split | scorer | AUC | " + " | ".join(
        k for k in result["splits"]["test"]["tfidf_cosine"] if k != "auc") + " |")
    for split, out in result["splits"].items():
        for scorer in ("pretrained_cosine", "tfidf_cosine"):
            values = out[scorer]
            print(f"| {split} | {scorer} | " + " | ".join(f"{v:.4f}" for v in values.values()) + " |")
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(result, indent=2))
        print(f"Wrote {args.output}")


if __name__ == "__main__":
    main()
