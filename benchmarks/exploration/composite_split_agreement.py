#!/usr/bin/env python
"""How well `split_composite` agrees with the composite annotations of NCBI-disease and BC5CDR.

A gold composite is a mention whose id field has several `|`-separated parts (one
concept per part); every other mention (one part, including `D1+D2` and CUI-less `-1`)
is a single-concept mention. Mention texts have their whitespace collapsed first, as
the linker does before it calls split_composite. Measured per corpus split:

* count match: composites for which split_composite returns as many texts as gold parts;
* coordinated: the BC5CDR composites whose gold part texts (7th column) are not all
  substrings of the mention, i.e. the parts share words through a coordination
  ("Ocular and auditory toxicity"), as opposed to a multi-concept phrase
  ("hemorrhagic cystitis" = hemorrhage + cystitis) or an abbreviation ("HC") that no
  text rule can split; count match among those;
* coordinated: text match: those coordinated composites whose split texts equal the gold
  part texts, in order, case-insensitively and with whitespace collapsed (the other
  composites can never match: no text rule turns "hemorrhagic cystitis" into
  "hemorrhagic" + "cystitis");
* false splits: single-concept mentions that split_composite cuts into several texts.
  For NCBI-disease, "typed composite" says how many of those are typed
  `CompositeMention` anyway (a coordination annotated with one concept, e.g.
  "breast and ovarian cancer" -> hereditary breast and ovarian cancer, D061325).

Usage (from the repository root):

    python benchmarks/exploration/composite_split_agreement.py --data-dir ../shared/data [--show-errors 20]
"""
import argparse
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Tuple

from spacy_biolink.corpora import read_pubtator
from spacy_biolink.text.composites import split_composite

CORPORA = [
    ("NCBI-disease", "train", "ncbi_disease/NCBItrainset_corpus.txt.gz", None),
    ("NCBI-disease", "dev", "ncbi_disease/NCBIdevelopset_corpus.txt", None),
    ("NCBI-disease", "test", "ncbi_disease/NCBItestset_corpus.txt", None),
    ("BC5CDR disease", "train", "bc5cdr/CDR_TrainingSet.PubTator.txt.gz", "Disease"),
    ("BC5CDR disease", "dev", "bc5cdr/CDR_DevelopmentSet.PubTator.txt.gz", "Disease"),
    ("BC5CDR disease", "test", "bc5cdr/CDR_TestSet.PubTator.txt.gz", "Disease"),
    ("BC5CDR chemical", "train", "bc5cdr/CDR_TrainingSet.PubTator.txt.gz", "Chemical"),
    ("BC5CDR chemical", "dev", "bc5cdr/CDR_DevelopmentSet.PubTator.txt.gz", "Chemical"),
    ("BC5CDR chemical", "test", "bc5cdr/CDR_TestSet.PubTator.txt.gz", "Chemical"),
]


@dataclass
class Agreement:
    composites: int = 0
    count_match: int = 0
    coordinated: int = 0
    coordinated_count_match: int = 0
    coordinated_text_match: int = 0
    single: int = 0
    false_splits: int = 0
    typed_composite_false_splits: int = 0
    errors: List[Tuple[str, str, int, List[str], Optional[List[str]]]] = field(default_factory=list)


def squeeze(text: str) -> str:
    return " ".join(text.split()).casefold()


def measure(path: Path, entity_type: Optional[str]) -> Agreement:
    agreement = Agreement()
    with warnings.catch_warnings():
        # Offset mismatches (a known train quirk) do not matter for mention texts.
        warnings.simplefilter("ignore")
        docs = list(read_pubtator(path, types={entity_type} if entity_type else None))
    for doc in docs:
        for mention in doc.mentions:
            text = " ".join(mention.text.split())
            n_gold = len(mention.raw_ids.split("|"))
            parts = split_composite(text)
            if n_gold == 1:
                agreement.single += 1
                if len(parts) > 1:
                    agreement.false_splits += 1
                    agreement.typed_composite_false_splits += mention.type == "CompositeMention"
                    agreement.errors.append(("false split", text, n_gold, parts, None))
                continue
            agreement.composites += 1
            counted = len(parts) == n_gold
            agreement.count_match += counted
            gold_texts = [squeeze(t) for t in mention.part_texts]
            if gold_texts and not all(t in squeeze(text) for t in gold_texts):
                agreement.coordinated += 1
                agreement.coordinated_count_match += counted
                agreement.coordinated_text_match += [squeeze(p) for p in parts] == gold_texts
            if not counted:
                agreement.errors.append(("count", text, n_gold, parts, mention.part_texts or None))
    return agreement


def ratio(hits: int, total: int) -> str:
    return f"{hits}/{total} ({hits / total:.1%})" if total else "-"


def table(rows: List[Tuple[str, str, Agreement]]) -> str:
    lines = [
        "| corpus | split | composites | count match | coordinated: count match "
        "| coordinated: text match | single-concept | false splits "
        "| of which typed composite |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for corpus, split, a in rows:
        is_ncbi = corpus.startswith("NCBI")
        lines.append(" | ".join([
            f"| {corpus}", split, str(a.composites), ratio(a.count_match, a.composites),
            "-" if is_ncbi else ratio(a.coordinated_count_match, a.coordinated),
            "-" if is_ncbi else ratio(a.coordinated_text_match, a.coordinated),
            str(a.single), ratio(a.false_splits, a.single),
            str(a.typed_composite_false_splits) if is_ncbi else "-",
        ]) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True,
                        help="folder holding ncbi_disease/ and bc5cdr/ (../shared/data)")
    parser.add_argument("--show-errors", type=int, default=0, metavar="N",
                        help="also list up to N disagreements per corpus split")
    args = parser.parse_args()
    rows = []
    for corpus, split, relative_path, entity_type in CORPORA:
        rows.append((corpus, split, measure(args.data_dir / relative_path, entity_type)))
    print(table(rows))
    if args.show_errors:
        for corpus, split, agreement in rows:
            print(f"\n### {corpus} {split}")
            for kind, text, n_gold, parts, gold_texts in agreement.errors[:args.show_errors]:
                gold = f" gold {gold_texts}" if gold_texts else ""
                print(f"- {kind}: {text!r} ({n_gold} gold) -> {parts}{gold}")


if __name__ == "__main__":
    main()
