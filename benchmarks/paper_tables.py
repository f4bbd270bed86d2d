#!/usr/bin/env python
"""The `paper` workflow's comparison: our figures beside the seed papers' published ones.

    python benchmarks/paper_tables.py metrics/paper --output metrics/paper/comparison.md

Reads the JSON files the `paper` commands write into the metrics directory (a missing
file leaves its row out). The published figures are quoted from the papers (see
../shared/design/SEEDS.md); where a paper measured another ontology, the table says so.
"""
import argparse
import json
import sys
from pathlib import Path
from typing import Dict, List, Optional

# acc@1 on gold mentions, (NCBI-disease, BC5CDR-disease), from the papers.
PUBLISHED_NORMALIZATION = {
    "tfidf": ("BioSyn sparse only (002)", 87.6, 92.4),
    "bne": ("BNE + SGW (000)", 85.4, 82.9),
    "biosyn": ("BioSyn (002)", 91.1, 93.2),
    "triplet": ("Triplet, train OD + tuned search (003)", 91.15, 92.92),
}
# Seed 001, Table 4 (SNOMED-CT, the paper has no MEDIC table): test and zero-shot
# mAP / Acc / MRR.
PUBLISHED_SYNONYMS = {
    "sgw": ("fastText mean vector", (0.56, 0.68, 0.76), (0.71, 0.75, 0.82)),
    "sgw-cca": ("CCA fastText", (0.59, 0.70, 0.78), (0.73, 0.76, 0.83)),
    "dan": ("CCA+DAN", (0.84, 0.81, 0.85), (0.81, 0.85, 0.89)),
    "bne": ("BNE", (0.63, 0.73, 0.80), (0.75, 0.80, 0.85)),
}


def read(path: Path) -> Optional[Dict]:
    return json.loads(path.read_text()) if path.is_file() else None


def normalization_rows(metrics: Path) -> List[str]:
    rows = ["| encoder | NCBI acc@1 (strict / lenient) | BC5CDR-d acc@1 (strict / lenient) | published (NCBI / BC5CDR-d) |",
            "|---|---:|---:|---|"]
    for name in ("tfidf", "dan", "dan_hybrid", "bne", "biosyn", "triplet"):
        cells = []
        for corpus in ("ncbi", "bc5cdr"):
            result = read(metrics / f"{corpus}_{name}.json")
            cells.append("-" if result is None else
                         f"{result['strict']['acc@1']:.4f} / {result['lenient']['acc@1']:.4f}")
        if cells == ["-", "-"]:
            continue
        paper = PUBLISHED_NORMALIZATION.get(name)
        published = f"{paper[0]}: {paper[1]} / {paper[2]}" if paper else "-"
        rows.append(f"| {name} | {cells[0]} | {cells[1]} | {published} |")
    return rows


def synonym_rows(metrics: Path) -> List[str]:
    rows = ["| encoder | MEDIC test mAP / Acc / MRR | MEDIC zero-shot mAP / Acc / MRR | seed 001, SNOMED-CT (test; zero-shot) |",
            "|---|---|---|---|"]
    for name in ("sgw", "sgw-cca", "dan", "bne"):
        result = read(metrics / f"synonyms_{name}.json")
        if result is None:
            continue
        ours = [" / ".join(f"{result[split][m]:.3f}" for m in ("mAP", "Acc", "MRR"))
                for split in ("test", "zero_shot")]
        label, test, zero = PUBLISHED_SYNONYMS[name]
        rows.append(f"| {name} | {ours[0]} | {ours[1]} | {label}: {test}; {zero} |")
    return rows


def relatedness_rows(metrics: Path) -> List[str]:
    sets = ("UMNSRS_similarity", "UMNSRS_relatedness", "MayoSRS")
    rows = ["| encoder | " + " | ".join(f"{s} (covered)" for s in sets) + " |",
            "|---|" + "---:|" * len(sets)]
    for name in ("sgw", "dan", "bne"):
        result = read(metrics / f"relatedness_{name}.json")
        if result is None:
            continue
        rows.append(f"| {name} | " + " | ".join(
            f"{result[s]['spearman']:.3f} ({result[s]['covered']}/{result[s]['pairs']})" for s in sets) + " |")
    return rows


def verifier_rows(metrics: Path) -> List[str]:
    """The variant table of benchmarks/verifier_variants.py (the default = best on dev)."""
    table = metrics / "verifier_variants.md"
    if not table.is_file():
        return []
    return [line for line in table.read_text(encoding="utf8").splitlines()[2:]
            if line.startswith("|") or not line.strip()][:-1] or []


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("metrics", type=Path)
    p.add_argument("--output", type=Path, required=True)
    args = p.parse_args(argv)
    sections = [("Normalization, gold mentions (dictionary = MEDIC + train + dev mentions)", normalization_rows),
                ("Synonym retrieval on MEDIC (seed 001's protocol)", synonym_rows),
                ("Semantic relatedness, Spearman", relatedness_rows),
                ("Synonymy verifier, test pairs of held-out concepts", verifier_rows)]
    lines = []
    for title, rows_of in sections:
        rows = rows_of(args.metrics)
        if len(rows) > 2:
            lines += [f"## {title}", "", *rows, ""]
    text = "\n".join(lines) if lines else "No paper metrics found.\n"
    print(text)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.output.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
