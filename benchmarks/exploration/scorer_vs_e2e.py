"""Why `spacy evaluate`'s bio_linker_micro_f and `evaluate-e2e`'s linking F1 differ.

Links the gold texts once, then counts linking P/R/F1 on those same predicted docs under
each combination of the four rules in which the two definitions differ, and prints the
path from the scorer's figure to evaluate-e2e's, one rule changed at a time (in both
orders, since the rules interact), so each rule's share of the gap is measured rather
than guessed. The two end points are checked against the real scorer and the real
evaluate_end_to_end.

    python benchmarks/exploration/scorer_vs_e2e.py training/pipeline corpus/test.spacy

The rules:
  gold     ents: gold = doc.ents (convert leaves overlapping mentions out of it);
           mentions: doc.spans["mentions"], one gold per distinct (offsets, concepts).
  match    any: right when the prediction shares an id with the gold ids (D1|D2 vs D1);
           exact: right when it names the same set of concepts.
  idless   parts: a gold without id = one whose every id is -1 (D1|-1 keeps D1);
           any: one with any -1 part (D1|-1 is NER-only).
  on_idless count: a prediction on a gold span without id is a (wrong) prediction;
           skip: it is no linking prediction.
"""
import argparse
import itertools
import json
from typing import Dict, Iterable, List

import spacy
from spacy.tokens import DocBin
from spacy.training import Example

from spacy_biolink.evaluation.end_to_end import _concepts, evaluate_end_to_end
from spacy_biolink.kb.ids import split_gold_ids
from spacy_biolink.linker.find import require_linkers

SCORER = {"gold": "ents", "match": "any", "idless": "parts", "on_idless": "count"}
E2E = {"gold": "mentions", "match": "exact", "idless": "any", "on_idless": "skip"}
CHOICES = {"gold": ("ents", "mentions"), "match": ("any", "exact"),
           "idless": ("parts", "any"), "on_idless": ("count", "skip")}


def count(pairs, linker, rules: Dict[str, str]) -> Dict:
    """Linking P/R/F1 of the predicted docs against the gold ones under `rules`."""
    dictionaries = [linker.dictionary]
    no_link = {"", "-1", "-", linker.cfg["nil_id"]}
    n_gold = n_pred = n_correct = 0
    for gold_doc, pred_doc in pairs:
        spans = (gold_doc.ents if rules["gold"] == "ents" else gold_doc.spans["mentions"])
        gold: Dict = {}
        for span in spans:
            key = (span.start_char, span.end_char)
            idless = (not split_gold_ids(span.kb_id_) if rules["idless"] == "parts"
                      else _concepts(span.kb_id_, dictionaries, no_link) is None)
            entry = gold.setdefault(key, [])
            if not idless:
                entry.append(span.kb_id_)
        for key, ids in gold.items():
            if rules["gold"] == "mentions":  # evaluate-e2e: distinct concept sets per offsets
                distinct = {_concept_set(i, dictionaries, no_link) for i in ids}
                gold[key] = [next(i for i in ids if _concept_set(i, dictionaries, no_link) == c)
                             for c in distinct]
            n_gold += len(gold[key])
        predicted = {}
        for span in linker.spans_to_link(pred_doc):
            predicted.setdefault((span.start_char, span.end_char), span.kb_id_)
        for key, kb_id in predicted.items():
            if kb_id in no_link or _concepts(kb_id, dictionaries, no_link) is None:
                continue
            if rules["on_idless"] == "skip" and key in gold and not gold[key]:
                continue
            n_pred += 1
            n_correct += any(_right(kb_id, g, linker, dictionaries, no_link, rules["match"])
                             for g in gold.get(key, ()))
    p = n_correct / n_pred if n_pred else 0.0
    r = n_correct / n_gold if n_gold else 0.0
    return {"p": p, "r": r, "f": 2 * p * r / (p + r) if p + r else 0.0,
            "n_gold": n_gold, "n_pred": n_pred, "n_correct": n_correct}


def _concept_set(kb_id, dictionaries, no_link):
    return _concepts(kb_id, dictionaries, no_link) or frozenset(split_gold_ids(kb_id))


def _right(pred_id, gold_id, linker, dictionaries, no_link, match) -> bool:
    if match == "any":
        expanded = split_gold_ids("|".join(linker._ids_of_primary(pred_id)))
        return bool(set(split_gold_ids(gold_id)) & set(expanded))
    return _concepts(pred_id, dictionaries, no_link) == _concepts(gold_id, dictionaries,
                                                                   no_link)


def paths(pairs, linker, orders: Iterable[List[str]]) -> List[Dict]:
    """For each order of the rules, the F1 after each change from the scorer's rules."""
    results = []
    for order in orders:
        rules = dict(SCORER)
        steps = [("scorer rules", count(pairs, linker, rules))]
        for rule in order:
            rules[rule] = E2E[rule]
            steps.append((f"{rule} -> {E2E[rule]}", count(pairs, linker, rules)))
        results.append({"order": order, "steps": steps})
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pipeline")
    parser.add_argument("gold")
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    nlp = spacy.load(args.pipeline)
    (_, linker), = require_linkers(nlp, args.pipeline)
    gold_docs = list(DocBin().from_disk(args.gold).get_docs(nlp.vocab))
    pred_docs = list(nlp.pipe(d.text for d in gold_docs))
    pairs = list(zip(gold_docs, pred_docs))
    scorer_f = linker.score([Example(p, g) for g, p in pairs])["bio_linker_micro_f"]
    e2e_f = evaluate_end_to_end(nlp, gold_docs)["linking"]["f"]
    mine_scorer = count(pairs, linker, SCORER)["f"]
    mine_e2e = count(pairs, linker, E2E)["f"]
    print(f"real scorer {scorer_f:.4f} (recounted {mine_scorer:.4f}); "
          f"real evaluate-e2e {e2e_f:.4f} (recounted {mine_e2e:.4f})")
    orders = [["gold", "idless", "on_idless", "match"], ["match", "on_idless", "idless", "gold"]]
    result = paths(pairs, linker, orders)
    for path in result:
        print("order:", " , ".join(path["order"]))
        previous = None
        for name, scores in path["steps"]:
            delta = "" if previous is None else f"  ({scores['f'] - previous:+.4f})"
            print(f"  {name:22s} F1 {scores['f']:.4f}  P {scores['p']:.4f}  R {scores['r']:.4f}"
                  f"  gold {scores['n_gold']} pred {scores['n_pred']} correct "
                  f"{scores['n_correct']}{delta}")
            previous = scores["f"]
    alone = {rule: count(pairs, linker, {**SCORER, rule: E2E[rule]})["f"] - mine_scorer
             for rule in CHOICES}
    print("each rule alone, from the scorer's:", {k: round(v, 4) for k, v in alone.items()})
    if args.output:
        with open(args.output, "w", encoding="utf8") as fileh:
            json.dump({"scorer_f": scorer_f, "e2e_f": e2e_f, "paths": result,
                       "alone": alone}, fileh, indent=1)


if __name__ == "__main__":
    main()
