#!/usr/bin/env python
"""The learned reranker (issue 33): speed beside TF-IDF, feature importance, NIL.

    # mentions/s of the retriever alone and with the reranker at each k, one process,
    # passes interleaved (TF-IDF, k = 10, 20, 50, TF-IDF, ...), each pass cold
    python benchmarks/learned_reranker.py speed --docs test.spacy --tfidf LINKER \\
        --reranker LINKER_WITH_RERANKER --ks 10 20 50 --repeats 5 \\
        [--also hybrid=HYBRID_LINKER hybrid+reranker=HYBRID_WITH_RERANKER] \
        [--encode-again "hybrid+v3 encoding again=HYBRID_WITH_V3"]
    # total gain of each feature (LightGBM) of trained rankers, one bar group each
    python benchmarks/learned_reranker.py importance NAME=RANKER_DIR ... \\
        --output metrics/learned_reranker_importance.png
    # verifier_nil.py's protocol (BC5CDR-disease, held-out concepts removed; dev
    # linked the same way) with the reranker's calibrated probability as the NIL rule
    python benchmarks/learned_reranker.py nil RANKER_DIR --output results.json

Speed: every pass links the DocBin's gold entities with nlp.pipe; the linker's query
cache is cleared before each (the reranker keeps no query results; its tables of the
dictionary's names, filled on first use, stay, as the index does), so the first pass
after loading pays for those tables and is reported apart from the best pass.
"""
import argparse
import json
import time
from pathlib import Path

import numpy

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
BUDGETS = (0.01, 0.02, 0.05, 0.10)


def speed(args) -> dict:
    import spacy
    from spacy.tokens import DocBin

    from spacy_biolink.evaluation.gold_mentions import find_linker
    from spacy_biolink.index.threads import usable_cores

    doc_bin = DocBin().from_disk(args.docs)
    runs = {"tfidf": spacy.load(args.tfidf)}
    for k in args.ks:
        runs[f"reranker k={k}"] = spacy.load(
            args.reranker, config={"components.bio_linker.stages.reranker.k": k})
    # Other linkers in the same passes (another first stage, with or without its own
    # reranker, set to each k), so their speed compares with these in one process.
    for spec in args.also:
        name, _, path = spec.partition("=")
        has_reranker = "reranker" in spacy.util.load_config(Path(path) / "config.cfg")[
            "components"]["bio_linker"].get("stages", {})
        for k in (args.ks if has_reranker else [None]):
            label = f"{name} k={k}" if k is not None else name
            overrides = {"components.bio_linker.stages.reranker.k": k} if k is not None else {}
            runs[label] = spacy.load(path, config=overrides)
    # The same linkers with their stages encoding the queries themselves, as before the
    # linker kept the rows its search encoded (LinkingPolicy.query_vectors).
    for spec in args.encode_again:
        name, _, path = spec.partition("=")
        for k in args.ks:
            nlp = spacy.load(path, config={"components.bio_linker.stages.reranker.k": k})
            linker = find_linker(nlp, name).linker
            linker.query_vectors = linker.encode
            runs[f"{name} k={k}"] = nlp
    rates = {name: [] for name in runs}
    cpu_rates = {name: [] for name in runs}
    for _ in range(args.repeats):
        for name, nlp in runs.items():
            docs = list(doc_bin.get_docs(nlp.vocab))
            find_linker(nlp, name).linker.clear_cache()
            start, cpu = time.perf_counter(), time.process_time()
            docs = list(nlp.pipe(docs, batch_size=args.batch_size))
            seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
            n_mentions = sum(len(doc.ents) for doc in docs)
            rates[name].append(n_mentions / seconds)
            cpu_rates[name].append(n_mentions / max(cpu_seconds, 1e-9))
    best_tfidf = max(rates["tfidf"])
    # CPU time (all threads) moves less than wall time on a machine other jobs load.
    print(f"{args.docs}, {n_mentions} mentions, {usable_cores()} cores, batch size "
          f"{args.batch_size}, {args.repeats} interleaved passes\n")
    print("| linker | first pass mentions/s | best mentions/s | best / TF-IDF's best | "
          "best mentions per CPU second |")
    print("|---|---:|---:|---:|---:|")
    for name, values in rates.items():
        print(f"| {name} | {values[0]:,.0f} | {max(values):,.0f} | "
              f"{max(values) / best_tfidf:.2f} | {max(cpu_rates[name]):,.0f} |")
    return {"docs": str(args.docs), "mentions_per_s": rates, "mentions_per_cpu_s": cpu_rates}


def importance(args) -> dict:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import srsly

    gains = {}
    for spec in args.rankers:
        name, _, path = spec.partition("=")
        gains[name] = srsly.read_json(Path(path) / "meta.json")["importance_gain"]
    features = list(next(iter(gains.values())))
    share = {name: numpy.array([g[f] for f in features]) / max(sum(g.values()), 1e-12)
             for name, g in gains.items()}
    order = numpy.argsort(sum(share.values()))
    fig, ax = plt.subplots(figsize=(7, 0.32 * len(features) + 1.5))
    height = 0.8 / len(share)
    for i, (name, values) in enumerate(share.items()):
        ax.barh(numpy.arange(len(features)) + i * height, values[order], height, label=name)
    ax.set_yticks(numpy.arange(len(features)) + 0.4 - height / 2)
    ax.set_yticklabels([features[j] for j in order])
    ax.set_xlabel("share of the total gain (LightGBM)")
    ax.set_title("Learned reranker: which features carry the gain")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    args.output.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.output, dpi=100)
    print(f"wrote {args.output}")
    for name, values in share.items():
        ranked = sorted(zip(features, values), key=lambda fv: -fv[1])
        print(name + ": " + ", ".join(f"{f} {v:.2f}" for f, v in ranked))
    return {"share_of_gain": {n: dict(zip(features, v.tolist())) for n, v in share.items()}}


def nil(args) -> dict:
    """verifier_nil.py's split and linking (training/pairs.held_out_mentions), with the
    reranker (a v2 stage: the top score is its calibrated probability) as a stage of
    the held-out linker; the score threshold of the retriever alone beside it."""
    from spacy_biolink import load_dictionary
    from spacy_biolink.evaluation.pair_scores import roc_auc
    from spacy_biolink.linker.find import the_linker
    from spacy_biolink.linker.stages.learned_reranker import LearnedReranker, read_trained
    from spacy_biolink.corpora.pubtator import read_pubtator
    from spacy_biolink.kb.ids import split_gold_id_parts
    from spacy_biolink.evaluation.name_pairs import split_concepts
    from spacy_biolink.training import pairs
    from spacy_biolink.training.nil_rule import best_point, nil_curve

    types = {"Disease"}
    full = load_dictionary(args.dictionary)
    split = split_concepts(full.n_concepts, args.fractions, args.seed)
    _, settings, _, _ = read_trained(args.ranker)

    def linked(corpus, held_out, stage):
        dropped = {c for c in range(full.n_concepts) if split[c] > held_out}
        gold = {c for document in read_pubtator(corpus, types=types) for m in document.mentions
                for part in split_gold_id_parts(m.raw_ids) for c in map(full.concept_index, part)
                if c is not None}
        removed = {c for c in gold if split[c] == held_out}
        kept = {c: full.names_of(c) for c in range(full.n_concepts) if c not in removed}
        dictionary = pairs.sub_dictionary(full, kept, source="held out")
        nlp = pairs.tfidf_linker(dictionary, split_composites=False)
        if stage is not None:
            the_linker(nlp).linker.stages["reranker"] = stage
        return pairs.link_corpus_mentions(nlp, full, corpus, dropped=dropped, types=types,
                                          k=stage.k if stage is not None else 5)

    def arrays(links):
        categories = numpy.asarray(links.categories)
        return {"confidence": links.top_scores().astype(numpy.float64),
                "has": links.has_candidate(), "correct": links.top_correct(),
                "linkable": categories == "linkable", "is_nil": categories != "linkable",
                "categories": categories}

    results = {}
    for name in ("score", "reranker"):
        stage = None
        if name == "reranker":
            stage = LearnedReranker(k=settings["k"], temperature=settings["temperature"],
                                    calibrated=True)
            stage.load_trained(args.ranker)
        data = {part: arrays(linked(corpus, held, stage)) for part, corpus, held in
                (("dev", args.dev_corpus, 1), ("test", args.corpus, 2))}
        d, t = data["dev"], data["test"]
        for part in (d, t):
            part["confidence"] = numpy.where(part["has"], part["confidence"], -numpy.inf)
        dev_curve = nil_curve(d["confidence"], d["correct"], d["linkable"], d["is_nil"], ~d["has"])
        fitted = float(dev_curve["threshold"][best_point(dev_curve, args.max_accuracy_loss)])
        rules = {"dev-fitted": fitted}
        if stage is not None and settings.get("nil_precision"):
            stage.nil_precision = settings["nil_precision"]
            rules[f"nil_precision {stage.nil_precision:g}"] = stage.nil_cutoff
        base = float(t["correct"][t["linkable"]].mean())
        curve = nil_curve(t["confidence"], t["correct"], t["linkable"], t["is_nil"], ~t["has"])
        at_loss = {}
        for budget in BUDGETS:
            i = best_point(curve, budget)
            at_loss[f"{budget:g}"] = (float(curve["nil_recall"][i])
                                      if curve["accuracy_lost"][i] <= budget else None)
        row = {"acc@1_no_nil": base, "nil_recall_at_loss": at_loss,
               "auc_dev": roc_auc(d["correct"][d["has"]], d["confidence"][d["has"]]),
               "auc_test": roc_auc(t["correct"][t["has"]], t["confidence"][t["has"]]),
               "rules": {}}
        for rule, threshold in rules.items():
            rejected = ~t["has"] | (t["confidence"] < threshold)
            entry = {"threshold": threshold,
                     "acc@1": float((t["correct"] & ~rejected)[t["linkable"]].mean()),
                     "lost": float((t["correct"] & rejected)[t["linkable"]].mean()),
                     "nil_recall": float(rejected[t["is_nil"]].mean())}
            for kind in ("nil_gold", "removed", "absent"):
                mask = t["categories"] == kind
                entry[f"nil_{kind}"] = float(rejected[mask].mean()) if mask.any() else None
            row["rules"][rule] = entry
        results[name] = row
    counts = {str(k): int(v) for k, v in zip(*numpy.unique(t["categories"], return_counts=True))}
    print(f"BC5CDR-disease test mentions by kind: {counts}")
    print("| rule | acc@1 (no NIL) | acc@1 | lost | NIL: -1 | removed | absent | NIL all | "
          + " | ".join(f"NIL @ lost <= {b:g}" for b in BUDGETS) + " | AUC dev | AUC test |")
    print("|---" * (10 + len(BUDGETS)) + "|")
    for name, row in results.items():
        for rule, r in row["rules"].items():
            curve = [row["nil_recall_at_loss"][f"{b:g}"] for b in BUDGETS]
            print(f"| {name}, {rule} ({r['threshold']:.3f}) | {row['acc@1_no_nil']:.3f} | "
                  f"{r['acc@1']:.3f} | {r['lost']:.3f} | {r['nil_nil_gold'] or 0:.3f} | "
                  f"{r['nil_removed'] or 0:.3f} | {r['nil_absent'] or 0:.3f} | "
                  f"{r['nil_recall']:.3f} | "
                  + " | ".join("" if c is None else f"{c:.3f}" for c in curve)
                  + f" | {row['auc_dev']:.3f} | {row['auc_test']:.3f} |")
    return {"test_mentions": counts, "methods": results}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("speed")
    p.add_argument("--docs", type=Path, required=True, help="DocBin with gold doc.ents")
    p.add_argument("--tfidf", required=True, help="the linker without the reranker")
    p.add_argument("--reranker", required=True, help="the same linker with the reranker")
    p.add_argument("--ks", type=int, nargs="+", default=[10, 20, 50])
    p.add_argument("--also", nargs="*", default=[], metavar="NAME=LINKER",
                   help="more linkers linked in the same passes (e.g. another first stage "
                        "with its reranker: run at each of --ks)")
    p.add_argument("--encode-again", nargs="*", default=[], metavar="NAME=LINKER",
                   help="linkers with a reranker whose queries it encodes again instead of "
                        "reading the rows the search encoded (the code before session 18), "
                        "at each of --ks")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=64)
    p = sub.add_parser("importance")
    p.add_argument("rankers", nargs="+", help="NAME=DIR of a trained learned reranker")
    p.add_argument("--output", type=Path,
                   default=ROOT / "metrics" / "learned_reranker_importance.png")
    p = sub.add_parser("nil")
    p.add_argument("ranker", type=Path, help="a learned reranker trained on BC5CDR-disease")
    p.add_argument("--dictionary", type=Path, default=DATA / "medic" / "medic_06Jul2012.txt.gz")
    p.add_argument("--corpus", type=Path,
                   default=DATA / "bc5cdr" / "CDR_TestSet.PubTator.txt.gz")
    p.add_argument("--dev-corpus", type=Path,
                   default=DATA / "bc5cdr" / "CDR_DevelopmentSet.PubTator.txt.gz")
    p.add_argument("--fractions", type=float, nargs=2, default=[0.1, 0.1],
                   help="the verifiers' concept split (configs/siamese.cfg)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-accuracy-loss", type=float, default=0.02)
    for p in sub.choices.values():
        p.add_argument("--output-json", type=Path, default=None)
    args = parser.parse_args(argv)
    result = {"speed": speed, "importance": importance, "nil": nil}[args.command](args)
    if args.output_json:
        args.output_json.parent.mkdir(parents=True, exist_ok=True)
        args.output_json.write_text(json.dumps(result, indent=1), encoding="utf8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
