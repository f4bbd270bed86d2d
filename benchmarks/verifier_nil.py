"""NIL detection: a TF-IDF score threshold, Siamese verifiers, and rules using both.

BC5CDR-disease test mentions are linked by the TF-IDF linker over MEDIC alone (no corpus
mentions added) after removing, on purpose, the test set's gold concepts that fall in
the verifiers' held-out test split (`--removal heldout`, the default: no verifier saw
their names or mentions in training) or a random 10% of them (`--removal random`, the
protocol before issue 6: a verifier trained on corpus mentions may have seen those).
Mentions then fall into:
    nil_gold  the corpus says `-1` (no concept)
    removed   their concept was removed: the right answer is now NIL
    absent    their concept is not in this MEDIC release at all: NIL too
    linkable  their concept is in the dictionary
Rules (each answers NIL for a mention whose top candidate it rejects):
    score              TF-IDF cosine of the top candidate < t (bio_linker's `threshold`)
    NAME p             p(synonym | mention, top candidate's closest name) < t
    NAME either        p < t1 or score < t2
    NAME combined      w_p * logit(p) + w_s * score + b < 0
With `--augment TRAIN`, the linker's dictionary also holds the gold mentions of TRAIN
as names (BioSyn's protocol; init-linker --augment): training mentions seen again then
score 1.0, which a score threshold can use as well as a verifier trained on them.
Every rule's settings are fitted on BC5CDR dev, linked the same way with the dev-split
concepts removed (training/pairs.py held_out_mentions, verify.fit_nil_rules: the most
NIL answers for at most --max-accuracy-loss of acc@1), never on test. Reported on test:
those dev-chosen settings, and each rule's whole test curve read at fixed acc@1 losses
(the curve comparison, where each rule gets its best test cut-off).

    python benchmarks/verifier_nil.py OLD_DIR NEW_DIR --names old new \\
        --output benchmarks/results/verifier_nil.json
Verifiers must share their concept split (seed and dev/test fractions in meta.json).
Composite mentions (`|` ids) are left out and counted; composite splitting is off.
"""
import argparse
import json
import random
import time
from pathlib import Path

import numpy
import srsly

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
BUDGETS = (0.01, 0.02, 0.05, 0.10)
NIL_KINDS = ("nil_gold", "removed", "absent")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("verifiers", type=Path, nargs="+")
    parser.add_argument("--names", nargs="+", default=None)
    parser.add_argument("--dictionary", type=Path, default=DATA / "medic" / "medic_06Jul2012.txt.gz")
    parser.add_argument("--corpus", type=Path,
                        default=DATA / "bc5cdr" / "CDR_TestSet.PubTator.txt.gz")
    parser.add_argument("--dev-corpus", type=Path,
                        default=DATA / "bc5cdr" / "CDR_DevelopmentSet.PubTator.txt.gz")
    parser.add_argument("--types", default="Disease", help="comma-separated mention types")
    parser.add_argument("--removal", choices=("heldout", "random"), default="heldout")
    parser.add_argument("--augment", type=Path, action="append", default=[],
                        help="PubTator corpus whose gold mentions join the dictionary "
                             "(dev and test linking alike)")
    parser.add_argument("--remove-fraction", type=float, default=0.1,
                        help="with --removal random")
    parser.add_argument("--max-accuracy-loss", type=float, default=0.02)
    parser.add_argument("--seed", type=int, default=0, help="with --removal random")
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()
    names = args.names or [p.name for p in args.verifiers]
    if len(names) != len(args.verifiers):
        parser.error("--names needs one name per verifier")

    from spacy_biolink import load_dictionary
    from spacy_biolink.evaluation.pair_scores import roc_auc
    from spacy_biolink.kb.ids import split_gold_id_parts
    from spacy_biolink.corpora.pubtator import read_pubtator
    from spacy_biolink.evaluation.name_pairs import split_concepts
    from spacy_biolink.training.pairs import held_out_mentions
    from spacy_biolink.linker.stages.verifier import (CandidateVerifier, combined_margin,
                                                      nil_rule_rejects, verify_links)
    from spacy_biolink.training.nil_rule import best_point, choose_nil_rule, fit_nil_rules, nil_curve

    started = time.perf_counter()
    types = {t.strip() for t in args.types.split(",") if t.strip()} or None
    full = load_dictionary(args.dictionary)
    metas = [srsly.read_json(path / "meta.json") for path in args.verifiers]
    splits = {(m.get("seed", 0), tuple(m["pair_settings"]["fractions"])) for m in metas}
    if len(splits) > 1:
        parser.error(f"the verifiers split concepts differently: {sorted(splits)}")
    seed, fractions = splits.pop()
    split = split_concepts(full.n_concepts, fractions, seed)

    removed = None
    if args.removal == "random":
        gold = sorted({c for d in read_pubtator(args.corpus, types=types) for m in d.mentions
                       for part in split_gold_id_parts(m.raw_ids)
                       for c in map(full.concept_index, part) if c is not None})
        rng = random.Random(args.seed)
        removed = set(rng.sample(gold, int(round(args.remove_fraction * len(gold)))))
    dev = held_out_mentions(full, args.dev_corpus, split, 1, types=types, augment=args.augment)
    test = held_out_mentions(full, args.corpus, split, 2, types=types, removed=removed,
                             augment=args.augment)

    def arrays(links):
        categories = numpy.asarray(links.categories)
        return {"scores": links.top_scores().astype(numpy.float64), "has": links.has_candidate(),
                "correct": links.top_correct(), "linkable": categories == "linkable",
                "is_nil": categories != "linkable", "categories": categories}

    data = {"dev": arrays(dev), "test": arrays(test)}
    t = data["test"]
    base_accuracy = float(t["correct"][t["linkable"]].mean())

    def report(rejected):
        """acc@1 on linkable mentions and the NIL share of each kind, on test."""
        out = {"acc@1_linkable": float((t["correct"] & ~rejected)[t["linkable"]].mean()),
               "accuracy_lost": float((t["correct"] & rejected)[t["linkable"]].mean()),
               "nil_rate_all_nil": float(rejected[t["is_nil"]].mean())}
        for kind in NIL_KINDS:
            mask = t["categories"] == kind
            out[f"nil_rate_{kind}"] = float(rejected[mask].mean()) if mask.any() else None
        return out

    def auc(part, confidence):
        """How well `confidence` tells right top candidates from wrong ones."""
        d = data[part]
        return roc_auc(d["correct"][d["has"]], confidence[d["has"]])

    def curve_summary(confidence, always_nil=None, dev_confidence=None):
        curve = nil_curve(confidence, t["correct"], t["linkable"], t["is_nil"],
                          ~t["has"] if always_nil is None else always_nil)
        aucs = {} if dev_confidence is None else {"auc_top_correct": auc("test", confidence),
                                                  "dev_auc_top_correct": auc("dev", dev_confidence)}
        at_loss = {}
        for budget in BUDGETS:
            i = best_point(curve, budget)
            # None: even the fewest rejections lose more (t1 of "either" alone).
            at_loss[f"nil_recall_at_loss_{budget:g}"] = (
                float(curve["nil_recall"][i]) if curve["accuracy_lost"][i] <= budget else None)
        return {**aucs, **at_loss,
                "curve": {k: [round(float(x), 5) for x in v[::max(len(v) // 200, 1)]]
                          for k, v in curve.items()}}

    methods = {}
    # The score alone, fitted on dev like the others.
    score_fit = None
    for name, path, meta in zip(names, args.verifiers, metas):
        verifier = CandidateVerifier.from_trained(path, rule="verifier")
        for part in ("dev", "test"):
            links = dev if part == "dev" else test
            pairs = links.top_pairs()
            has = data[part]["has"]
            probs = numpy.zeros(len(links))
            probs[has] = verifier.score_pairs([pairs[i] for i in numpy.flatnonzero(has)])
            data[part][f"p_{name}"] = probs
        d = data["dev"]
        fitted = fit_nil_rules(d[f"p_{name}"], d["scores"], d["correct"], d["linkable"],
                               d["is_nil"], d["has"], max_accuracy_loss=args.max_accuracy_loss)
        score_fit = score_fit or fitted["score"]
        p = t[f"p_{name}"]
        methods[f"{name} p"] = {"dev": fitted["verifier"], **curve_summary(p, None, d[f"p_{name}"]),
                                "test_at_dev_settings": report(
                                    ~t["has"] | nil_rule_rejects({"rule": "verifier",
                                                                  **fitted["verifier"]},
                                                                 p, t["scores"]))}
        either = fitted["either"]
        methods[f"{name} either"] = {
            "dev": either, "curve_note": "t2 swept with t1 at its dev value",
            **curve_summary(t["scores"], ~t["has"] | (p < either["threshold"])),
            "test_at_dev_settings": report(~t["has"] | nil_rule_rejects(
                {"rule": "either", **either}, p, t["scores"]))}
        combined = fitted["combined"]
        methods[f"{name} combined"] = {
            "dev": combined, **curve_summary(
                combined_margin(combined["weights"], p, t["scores"]), None,
                combined_margin(combined["weights"], d[f"p_{name}"], d["scores"])),
            "test_at_dev_settings": report(~t["has"] | nil_rule_rejects(
                {"rule": "combined", **combined}, p, t["scores"]))}
        # The rule chosen on dev ("auto"), in mode "next": a rejected top candidate
        # gives way to the next one (up to 3 tried).
        rule = choose_nil_rule(fitted)
        settings = {k: v for k, v in fitted[rule].items()
                    if k in ("threshold", "score_threshold", "weights")}
        nxt = CandidateVerifier(verifier.model, settings.get("threshold", 0.5), "next", 3,
                                rule=rule, score_threshold=settings.get("score_threshold"),
                                weights=settings.get("weights"))
        kept = verify_links(nxt, test.keys, test.candidates, test.best_name_of)
        next_nil = numpy.asarray([not c for c in kept])
        next_correct = numpy.asarray([bool(c) and c[0][0] in g
                                      for c, g in zip(kept, test.golds)])
        row = report(next_nil)
        row["acc@1_linkable"] = float((next_correct & ~next_nil)[t["linkable"]].mean())
        row["accuracy_lost"] = base_accuracy - row["acc@1_linkable"]
        methods[f"{name} {rule}, mode next"] = {"dev": fitted[rule], "test_at_dev_settings": row}
        if meta.get("nil_rules"):  # what the trainer chose on the same dev protocol
            methods[f"{name} p"]["saved_nil_rule"] = meta["nil_rule"]
    score_rejects = ~t["has"] | (t["scores"] < score_fit["score_threshold"])
    methods = {"score": {"dev": score_fit,
                         **curve_summary(t["scores"], None, data["dev"]["scores"]),
                         "test_at_dev_settings": report(score_rejects)},
               **methods}

    counts = {str(k): int(v) for k, v in zip(*numpy.unique(t["categories"], return_counts=True))}
    result = {"corpus": str(args.corpus), "dev_corpus": str(args.dev_corpus),
              "dictionary": str(args.dictionary), "removal": args.removal,
              "augment": [str(p) for p in args.augment],
              "verifiers": dict(zip(names, map(str, args.verifiers))),
              "split": {"seed": seed, "fractions": list(fractions)},
              "max_accuracy_loss": args.max_accuracy_loss,
              "test_mentions": counts, "test_left_out": test.skipped,
              "dev_mentions": dev.counts(), "dev_left_out": dev.skipped,
              "acc@1_linkable_no_nil": base_accuracy, "methods": methods,
              "seconds": round(time.perf_counter() - started, 1)}
    print(json.dumps({k: v for k, v in result.items() if k != "methods"}, indent=2))
    print(f"\nTest, rules fitted on dev (at most {args.max_accuracy_loss:g} acc@1 lost there); "
          f"acc@1 without NIL {base_accuracy:.3f}")
    print("| rule | acc@1 | lost | NIL: -1 | NIL: removed | NIL: absent | NIL: all | "
          + " | ".join(f"NIL @ lost<={b:g}" for b in BUDGETS) + " | AUC dev | AUC test |")
    print("|---" * (9 + len(BUDGETS)) + "|")
    for name, m in methods.items():
        r = m["test_at_dev_settings"]
        curve = [m.get(f"nil_recall_at_loss_{b:g}") for b in BUDGETS]
        aucs = " | ".join("" if m.get(k) is None else f"{m[k]:.3f}"
                          for k in ("dev_auc_top_correct", "auc_top_correct"))
        print(f"| {name} | {r['acc@1_linkable']:.3f} | {r['accuracy_lost']:.3f} | "
              f"{r['nil_rate_nil_gold'] or 0:.3f} | {r['nil_rate_removed'] or 0:.3f} | "
              f"{r['nil_rate_absent'] or 0:.3f} | {r['nil_rate_all_nil']:.3f} | "
              + " | ".join("" if c is None else f"{c:.3f}" for c in curve)
              + f" | {aucs} |")
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(result, indent=2), encoding="utf8")


if __name__ == "__main__":
    main()
