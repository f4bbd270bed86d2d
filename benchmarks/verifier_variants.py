"""Seed 004's table in shape: Siamese verifier input variant x (P, R, F1, AUC) on the pairs
of held-out concepts, beside the TF-IDF cosine of the same pairs and the paper's figures.

Reads the `eval-pairs` JSON of each variant (metrics/paper/verifier_pairs_<variant>.json,
written by project.yml's `paper-verifier`), marks the variant with the best dev AUC
(the choice is made on dev pairs, never on test) and writes a Markdown table and a JSON:

    python benchmarks/verifier_variants.py metrics/paper --output metrics/paper/verifier_variants.md

Our P/R/F1 are at the threshold of max F1 on dev pairs (the paper's best PR-curve
threshold); the paper's are on its test pairs (UMLS 2020AA, 96.8% negatives, split per
pair so names recur between train and test); ours are split by concept (every name of a
test pair is unseen in training) with three negatives per positive, a third of them the
most similar name of another concept.
"""
import argparse
import json
from pathlib import Path

# Seed 004, Table 3, Siamese network without attention, default hyperparameters (Adam,
# lr 1e-3) unless said: (embedding, token type, extraction method, P, R, F1, AUC).
PUBLISHED = [
    ("BioWordVec", "-", "-", 0.9075, 0.9127, 0.9101, 0.9909),
    ("BioWordVec, SGD lr 0.001", "-", "-", 0.9087, 0.9146, 0.9116, 0.9913),
    ("SapBERT", "avg", "avg. last 4", 0.8496, 0.8092, 0.8289, 0.9848),
    ("BioBERT", "first", "last layer", 0.7955, 0.7380, 0.7657, 0.9758),
    ("BioBERT-Large", "avg", "last layer", 0.8400, 0.7810, 0.8095, 0.9807),
    ("BlueBERT", "first", "last layer", 0.8066, 0.7424, 0.7732, 0.9765),
    ("UMLSBERT", "avg", "avg. last 4", 0.7921, 0.7371, 0.7636, 0.9754),
    ("UMLSBERT + SapBERT", "avg", "avg. last 4", 0.7948, 0.7432, 0.7681, 0.9769),
    ("BlueBERT + SapBERT", "avg", "avg. last 4", 0.8154, 0.7651, 0.7895, 0.9798),
    ("BioBERT + SapBERT", "avg", "avg. last 4", 0.7904, 0.7348, 0.7616, 0.9756),
    ("VanillaBERT + SapBERT", "avg", "avg. last 4", 0.8125, 0.7633, 0.7872, 0.9791),
]
LAYER_NAMES = {"input": "input embeddings", "last": "last layer", "last4": "avg. last 4",
               "none": "-"}


def describe(meta: dict) -> tuple:
    """(embedding, token type, extraction) of a trained verifier's meta.json."""
    embeddings = meta.get("embeddings", {})
    feature = " + TF-IDF cosine" if meta.get("tfidf_feature") else ""
    if meta.get("inputs", "words") == "words":
        source = "word vectors (train-vectors)" if meta.get("vectors") else "random word rows"
        return source + feature, "-", "-"
    backbone = Path(embeddings.get("backbone") or "?")
    name = backbone.parent.name if backbone.name == "model" else backbone.name
    extraction = embeddings.get("extraction", "none")
    if extraction == "none":
        return f"{name} subwords, random rows{feature}", "-", "-"
    token_type = "-" if extraction == "input" else embeddings.get("occurrence", "avg")
    return f"{name} subwords{feature}", token_type, LAYER_NAMES[extraction]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("metrics", type=Path, help="folder of verifier_pairs_*.json")
    parser.add_argument("--output", type=Path, required=True, help="Markdown table to write")
    args = parser.parse_args()
    rows = []
    baseline = None
    for path in sorted(args.metrics.glob("verifier_pairs_*.json")):
        result = json.loads(path.read_text(encoding="utf8"))
        meta = json.loads((Path(result["model"]) / "meta.json").read_text(encoding="utf8"))
        test = result["test"]["at_dev"]
        rows.append({"variant": path.stem[len("verifier_pairs_"):], "model": result["model"],
                     "describe": describe({**meta, "tfidf_feature": _has_tfidf(result["model"])}),
                     "dev_auc": result["dev"]["auc"], "threshold": test["threshold"],
                     "precision": test["precision"], "recall": test["recall"], "f1": test["f1"],
                     "auc": result["test"]["auc"], "epochs": meta.get("best_epoch", -1) + 1,
                     "train_seconds": meta.get("train_seconds")})
        baseline = baseline or result.get("baselines", {}).get("tfidf_cosine")
    if not rows:
        parser.error(f"no verifier_pairs_*.json in {args.metrics}")
    best = max(rows, key=lambda r: r["dev_auc"])
    lines = ["Siamese verifier input variants (seed 004), pairs of held-out concepts (test); "
             "threshold = max F1 on dev pairs; * = best dev AUC (the default).", "",
             "| embedding | token type | extraction | dev AUC | P | R | F1 | AUC | epochs to best | train s (with extraction) |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in sorted(rows, key=lambda r: -r["dev_auc"]):
        mark = " *" if r is best else ""
        embedding, token_type, extraction = r["describe"]
        lines.append(f"| {embedding}{mark} | {token_type} | {extraction} | {r['dev_auc']:.3f} | "
                     f"{r['precision']:.3f} | {r['recall']:.3f} | {r['f1']:.3f} | "
                     f"{r['auc']:.3f} | {r['epochs']} | {r['train_seconds'] or ''} |")
    if baseline is not None:
        b = baseline["test"]["at_dev"]
        lines.append(f"| TF-IDF char-3-gram cosine (no training) | - | - | "
                     f"{baseline['dev']['auc']:.3f} | {b['precision']:.3f} | {b['recall']:.3f} | "
                     f"{b['f1']:.3f} | {baseline['test']['auc']:.3f} | | |")
    lines += ["", "Published (seed 004, Table 3, no attention; UMLS pairs split per pair):", "",
              "| embedding | token type | extraction | P | R | F1 | AUC |",
              "|---|---|---|---:|---:|---:|---:|"]
    for name, token_type, extraction, p, r, f1, auc in PUBLISHED:
        lines.append(f"| {name} | {token_type} | {extraction} | {p:.4f} | {r:.4f} | {f1:.4f} | "
                     f"{auc:.4f} |")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text("\n".join(lines) + "\n", encoding="utf8")
    args.output.with_suffix(".json").write_text(
        json.dumps({"variants": rows, "best_on_dev": best["variant"], "tfidf_cosine": baseline,
                    "published": [dict(zip(("embedding", "token_type", "extraction", "precision",
                                            "recall", "f1", "auc"), row)) for row in PUBLISHED]},
                   indent=2), encoding="utf8")
    print("\n".join(lines))


def _has_tfidf(model_dir: str) -> bool:
    config = (Path(model_dir) / "encoder.cfg").read_text(encoding="utf8")
    return "tfidf_feature = true" in config


if __name__ == "__main__":
    main()
