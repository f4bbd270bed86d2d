"""NIL detection with and without the Siamese synonymy verifier.

BC5CDR-disease test mentions are linked by the TF-IDF linker over MEDIC alone (no corpus
mentions added), with a random 10% of the test set's gold concepts removed from the
dictionary on purpose. Mentions then fall into:
    nil_gold  the corpus says `-1` (no concept)
    removed   their concept was removed: the right answer is now NIL
    absent    their concept is not in this MEDIC release at all: NIL too
    linkable  their concept is in the dictionary
For each threshold: the share of each NIL kind answered NIL, and acc@1 on linkable
mentions (a NIL answer counts as wrong), for two NIL rules:
    score     NIL when the top candidate's TF-IDF cosine < t (no verifier)
    verifier  NIL when p(synonym | mention, top candidate's closest name) < t
and the verifier's "next" mode at its saved (dev-chosen) threshold.

    python benchmarks/verifier_nil.py VERIFIER_DIR --output benchmarks/results/verifier_nil.json
Composite mentions (`|` ids) are left out and counted; composite splitting is off.
"""
import argparse
import json
import random
import time
from pathlib import Path

import numpy

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("verifier", type=Path)
    parser.add_argument("--dictionary", type=Path, default=DATA / "medic" / "medic_06Jul2012.txt.gz")
    parser.add_argument("--corpus", type=Path,
                        default=DATA / "bc5cdr" / "CDR_TestSet.PubTator.txt.gz")
    parser.add_argument("--remove-fraction", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()

    import spacy

    from spacy_biolink import ConceptDictionary, load_dictionary
    from spacy_biolink.component import Mention
    from spacy_biolink.corpora.pubtator import read_pubtator
    from spacy_biolink.ids import split_gold_id_parts
    from spacy_biolink.verify import CandidateVerifier, verify_links, best_name_finder

    started = time.perf_counter()
    full = load_dictionary(args.dictionary)
    docs = list(read_pubtator(args.corpus, types={"Disease"}))
    gold_concepts = sorted({i for d in docs for m in d.mentions
                            for part in split_gold_id_parts(m.raw_ids) for i in part
                            if full.concept_index(i) is not None})
    gold_concepts = sorted({full.primary_id(full.concept_index(i)) for i in gold_concepts})
    rng = random.Random(args.seed)
    removed = set(rng.sample(gold_concepts, int(round(args.remove_fraction * len(gold_concepts)))))
    dictionary = ConceptDictionary.from_concepts(
        [c for c in full.iter_concepts() if c.ids[0] not in removed], source="MEDIC minus removed")

    nlp = spacy.blank("en")
    linker = nlp.add_pipe("bio_linker", config={"split_composites": False})
    linker.initialize(nlp=nlp, dictionary=dictionary)
    verifier = CandidateVerifier.from_trained(args.verifier)

    categories, golds, mentions = [], [], []
    skipped_composite = 0
    for document in docs:
        doc = nlp.make_doc(document.text)
        for m in document.mentions:
            parts = split_gold_id_parts(m.raw_ids)
            if len(parts) > 1:
                skipped_composite += 1
                continue
            ids = parts[0]
            in_full = {full.primary_id(c) for c in map(full.concept_index, ids) if c is not None}
            if not ids:
                category = "nil_gold"
            elif not in_full:
                category = "absent"
            elif in_full <= removed:
                category = "removed"
            else:
                category = "linkable"
            categories.append(category)
            golds.append(in_full - removed)
            mentions.append(Mention(doc, m.start, m.end, m.text))
    links = linker.predict_mentions(mentions, k=5)
    texts = [linker.query_key(mention_links[0][0]) for mention_links in links]
    candidates = [mention_links[0][1] for mention_links in links]
    top_ids = [dictionary.primary_id(c[0][0]) if c else None for c in candidates]
    top_scores = numpy.asarray([c[0][1] if c else -1.0 for c in candidates])
    best_name_of = best_name_finder(dictionary, linker.normalizer.mention)
    top_pairs = [(t, best_name_of(c[0][0], t) if c else "") for t, c in zip(texts, candidates)]
    top_probs = verifier.score_pairs(top_pairs)
    categories = numpy.asarray(categories)
    correct = numpy.asarray([top is not None and top in gold for top, gold in zip(top_ids, golds)])
    linkable = categories == "linkable"

    def row(t, is_nil):
        out = {"threshold": round(float(t), 4),
               "acc@1_linkable": float((correct & ~is_nil)[linkable].mean())}
        for kind in ("nil_gold", "removed", "absent"):
            mask = categories == kind
            out[f"nil_rate_{kind}"] = float(is_nil[mask].mean()) if mask.any() else None
        out["nil_rate_linkable"] = float(is_nil[linkable].mean())
        return out

    score_curve = [row(t, top_scores < t) for t in numpy.linspace(0.0, 1.0, 21)]
    verifier_curve = [row(t, top_probs < t) for t in
                      sorted(set(numpy.linspace(0.0, 1.0, 21).tolist()) | {verifier.threshold})]
    at_saved = row(verifier.threshold, top_probs < verifier.threshold)

    verifier.mode, verifier.max_tries = "next", 3
    kept = verify_links(verifier, texts, candidates, best_name_of)
    next_ids = [dictionary.primary_id(c[0][0]) if c else None for c in kept]
    next_correct = numpy.asarray([t is not None and t in g for t, g in zip(next_ids, golds)])
    next_nil = numpy.asarray([not c for c in kept])
    next_row = row(verifier.threshold, next_nil)
    next_row["acc@1_linkable"] = float((next_correct & ~next_nil)[linkable].mean())

    counts = {str(k): int(v) for k, v in zip(*numpy.unique(categories, return_counts=True))}
    result = {"corpus": str(args.corpus), "dictionary": str(args.dictionary),
              "verifier": str(args.verifier), "verifier_threshold": verifier.threshold,
              "removed_concepts": len(removed), "gold_concepts": len(gold_concepts),
              "mentions": counts, "skipped_composite": skipped_composite,
              "acc@1_linkable_no_nil": float(correct[linkable].mean()),
              "verifier_nil_mode_at_saved_threshold": at_saved,
              "verifier_next_mode_at_saved_threshold": next_row,
              "score_threshold_curve": score_curve, "verifier_threshold_curve": verifier_curve,
              "seconds": round(time.perf_counter() - started, 1)}
    print(json.dumps({k: v for k, v in result.items() if not k.endswith("curve")}, indent=2))
    print("rule      t      acc@1(linkable)  NIL:nil_gold  NIL:removed  NIL:absent")
    for name, curve in (("score", score_curve), ("verifier", verifier_curve)):
        for r in curve:
            print(f"{name:9} {r['threshold']:.3f}  {r['acc@1_linkable']:.3f}            "
                  f"{r['nil_rate_nil_gold'] or 0:.3f}         {r['nil_rate_removed'] or 0:.3f}"
                  f"        {r['nil_rate_absent'] or 0:.3f}")
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(result, indent=2), encoding="utf8")


if __name__ == "__main__":
    main()
