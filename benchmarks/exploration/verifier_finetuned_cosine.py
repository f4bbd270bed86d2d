"""How far fine-tuning the transformer itself as a Siamese name encoder gets on the
verifiers' held-out pairs, on this machine's CPU.

Issue 23's remaining target is a held-out-concept pair AUC of 0.90; the static-subword
verifier reaches 0.82 and the untrained MiniLM cosine 0.72
(benchmarks/exploration/verifier_pretrained_cosine.py). This script fine-tunes the backbone
(`spacy-biolink.TransformerEncoder.v1`, mean pooling) on the train-split concepts of a
trained verifier's pair split, SapBERT-style: each step takes `--batch` synonym pairs
and one hard negative per anchor (the TF-IDF-closest name of another concept, the
"jaccard" negatives of the pair sets), and minimises InfoNCE over the batch's positives
and hard negatives. Every `--eval-every` steps it prints the dev-pair AUC of the cosine
(the dev pairs decide nothing here; they show the curve), and at the end the dev and
test AUC overall and by negative kind. Nothing is saved but the JSON.

    python benchmarks/exploration/verifier_finetuned_cosine.py /tmp/v23/runs/sub_last4 --steps 600 \\
        --output benchmarks/results/issue23/finetuned_cosine.json
"""
import argparse
import json
import random
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
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--batch", type=int, default=64, help="synonym pairs per step")
    parser.add_argument("--learning-rate", type=float, default=2e-5)
    parser.add_argument("--temperature", type=float, default=0.05)
    parser.add_argument("--eval-every", type=int, default=200)
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()

    import torch
    from tqdm import tqdm

    from spacy_biolink import load_dictionary
    from spacy_biolink.encoders.torch_wrapper import torch_module
    from spacy_biolink.encoders.transformer import build_for_training, embed
    from spacy_biolink.evaluation.pair_scores import auc_by_negative_kind, saved_verifier_pairs
    from spacy_biolink.training.biosyn import encode_with_grad

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    dictionary = load_dictionary(args.dictionary)
    pairs = saved_verifier_pairs(args.verifier, dictionary)
    config = {"paths": {"backbone": None if args.backbone is None else str(args.backbone)},
              "encoder": {"@architectures": "spacy-biolink.TransformerEncoder.v1",
                          "pooling": "mean", "max_length": 25, "normalize": True}}
    model, _, backbone = build_for_training(config)
    module = torch_module(model)
    optimizer = torch.optim.AdamW(module.parameters(), lr=args.learning_rate)

    # make_pairs writes each positive, then its anchor's negatives: the "jaccard" one (the
    # TF-IDF-closest name of another concept) follows it when the anchor has one.
    train = pairs["train"]
    left, right, kinds = list(train.left), list(train.right), list(train.kinds)
    anchors = []
    for i, kind in enumerate(kinds):
        if kind == "positive" and i + 1 < len(kinds) and kinds[i + 1] == "jaccard":
            anchors.append((left[i], right[i], right[i + 1]))

    def scores(split: str):
        pair_set = pairs[split]
        names = sorted({name for pair in pair_set.pairs for name in pair})
        vectors = embed(model, names)
        row = {name: i for i, name in enumerate(names)}
        cos = (vectors[[row[a] for a in pair_set.left]]
               * vectors[[row[b] for b in pair_set.right]]).sum(axis=1)
        return auc_by_negative_kind(pair_set.labels, pair_set.kinds, cos)

    dev = scores("dev")
    curve = [{"step": 0, "dev_auc": dev["auc"], "seconds": 0.0}]
    print(f"step 0: dev AUC {curve[-1]['dev_auc']:.4f}", flush=True)
    started = time.perf_counter()
    train_seconds = 0.0
    for step in tqdm(range(1, args.steps + 1), desc="fine-tuning", unit="step", mininterval=30):
        tick = time.perf_counter()
        batch = [anchors[rng.randrange(len(anchors))] for _ in range(args.batch)]
        texts = [a for a, _, _ in batch] + [b for _, b, _ in batch] + [h for _, _, h in batch]
        module.train()
        vectors = torch.nn.functional.normalize(encode_with_grad(model, texts), dim=-1)
        n = args.batch
        logits = vectors[:n] @ vectors[n:].T / args.temperature
        loss = torch.nn.functional.cross_entropy(logits, torch.arange(n))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        train_seconds += time.perf_counter() - tick
        if step % args.eval_every == 0 or step == args.steps:
            dev = scores("dev")
            curve.append({"step": step, "dev_auc": dev["auc"],
                          "loss": float(loss.detach()), "seconds": round(train_seconds, 1)})
            print(f"step {step}: dev AUC {curve[-1]['dev_auc']:.4f} "
                  f"({train_seconds / step:.2f} s a step)", flush=True)

    result = {"verifier": str(args.verifier), "backbone": str(backbone),
              "settings": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
              "train_anchors": len(anchors), "curve": curve,
              "seconds_per_step": round(train_seconds / max(args.steps, 1), 2),
              "wall_seconds": round(time.perf_counter() - started, 1),
              "dev": dev, "test": scores("test")}
    print("| split | AUC | " + " | ".join(k for k in result["test"] if k != "auc") + " |")
    for split in ("dev", "test"):
        print(f"| {split} | " + " | ".join(f"{v:.4f}" for v in result[split].values()) + " |")
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(result, indent=2))
        print(f"Wrote {args.output}")


if __name__ == "__main__":
    main()
