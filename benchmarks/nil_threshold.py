"""Which default `threshold` gives NIL to junk at no acc@1 cost on dev?

For each (linker, dev corpus) pair: acc@1 (lenient) of the corpus' gold mentions at each
threshold, and the share of junk spans that get NIL. Junk is (a) every token n-gram
(1-3 tokens) of the same dev documents that overlaps no gold mention and holds a letter,
sampled with a fixed seed, and (b) a short list of phrases a user tried ("xyzzy foo",
"the patient"). Part of (a) names diseases the annotators did not mark, so its NIL rate
is a floor, not a target; the choice is made on (b) and the acc@1 column.

    python benchmarks/nil_threshold.py \
        --linker training/linker_tfidf_dev --corpus assets/ncbi_disease/NCBIdevelopset_corpus.txt \
        --linker training/bc5cdr_linker_dev --corpus ../shared/data/bc5cdr/CDR_DevelopmentSet.PubTator.txt.gz \
        --types - --types Disease --output metrics/nil_threshold.json

Dev only: never run it on test.
"""
import argparse
import json
import random
from pathlib import Path
from typing import List, Optional, Set

import numpy
import spacy

from spacy_biolink.linker.policy import Mention
from spacy_biolink.corpora.pubtator import read_pubtator
from spacy_biolink.evaluation.gold_mentions import evaluate_gold_mentions, find_linker

THRESHOLDS = [0.0, 0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8]
USER_JUNK = ["xyzzy foo", "the patient", "patients", "were enrolled", "in this study",
             "results", "a significant increase", "we", "qwerty asdf", "this report",
             "mice", "the gene", "protein", "analysis", "blood samples"]


def junk_mentions(nlp, corpus: str, types: Optional[Set[str]], n: int, seed: int) -> List[Mention]:
    """Token n-grams of the corpus' documents that overlap no gold mention."""
    candidates = []
    for pubtator_doc in read_pubtator(corpus, types=None):
        doc = nlp.make_doc(pubtator_doc.text)
        gold = numpy.zeros(len(doc.text) + 1, dtype=bool)
        for m in pubtator_doc.mentions:
            gold[m.start:m.end] = True
        for size in (1, 2, 3):
            for start in range(len(doc) - size + 1):
                span = doc[start:start + size]
                if gold[span.start_char:span.end_char].any():
                    continue
                if not any(ch.isalpha() for ch in span.text) or span[0].is_punct or span[-1].is_punct:
                    continue
                candidates.append((doc, span.start_char, span.end_char))
    random.Random(seed).shuffle(candidates)
    return [Mention(doc, s, e) for doc, s, e in candidates[:n]]


def top_scores(linker, mentions: List[Mention]) -> numpy.ndarray:
    """Best score of each mention (of its best part), -inf when nothing is linked."""
    links = linker.link(mentions)
    return numpy.array([min((c[0][1] if c else -numpy.inf) for _, c in parts) for parts in links])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--linker", action="append", required=True)
    parser.add_argument("--corpus", action="append", required=True)
    parser.add_argument("--types", action="append", default=None,
                        help="per corpus: comma-separated mention types, or - for all")
    parser.add_argument("--n-junk", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()
    type_args = args.types or ["-"] * len(args.corpus)
    if not len(args.linker) == len(args.corpus) == len(type_args):
        parser.error("give one --corpus (and one --types, if any) per --linker")
    report = []
    for linker_dir, corpus, type_arg in zip(args.linker, args.corpus, type_args):
        types = None if type_arg == "-" else set(type_arg.split(","))
        nlp = spacy.load(linker_dir)
        linker = find_linker(nlp)
        corpus_junk = top_scores(linker, junk_mentions(nlp, corpus, types, args.n_junk, args.seed))
        doc = nlp.make_doc(" ".join(USER_JUNK))
        offsets, pos = [], 0
        for phrase in USER_JUNK:
            offsets.append((pos, pos + len(phrase)))
            pos += len(phrase) + 1
        user_junk = top_scores(linker, [Mention(doc, s, e) for s, e in offsets])
        rows = []
        for threshold in THRESHOLDS:
            linker.linker.configure(threshold=threshold)
            result = evaluate_gold_mentions(nlp, corpus, types=types)
            rows.append({"threshold": threshold, "acc@1": result["acc@1"],
                         "n_evaluated": result["n_evaluated"],
                         "corpus_junk_nil": float(numpy.mean(corpus_junk < threshold)),
                         "user_junk_nil": float(numpy.mean(user_junk < threshold))})
        report.append({"linker": linker_dir, "corpus": corpus, "rows": rows,
                       "user_junk": dict(zip(USER_JUNK, numpy.round(user_junk, 3).tolist()))})
        print(f"\n{linker_dir} on {corpus}")
        print("threshold  acc@1   corpus-junk NIL  user-junk NIL")
        for row in rows:
            print(f"{row['threshold']:>9.2f}  {row['acc@1']:.4f}  {row['corpus_junk_nil']:>15.3f}"
                  f"  {row['user_junk_nil']:>13.3f}")
        print("user junk top scores:", report[-1]["user_junk"])
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(report, indent=2), encoding="utf8")


if __name__ == "__main__":
    main()
