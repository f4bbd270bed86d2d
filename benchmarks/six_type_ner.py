#!/usr/bin/env python
"""The six-type NER (issue 56) on gold DocBins: exact-offset, exact-type P/R/F1, micro over
each corpus's own types and per type, and the pipeline's speed on them.

Each GOLD is NAME=DOCBIN[:TYPES] (`convert --six-types`; TYPES comma-separated, default
all six): a corpus that annotates genes alone is scored on genes alone, predictions of
other types left out (corpora/partial.py score_six_types). The pipeline runs once per
corpus with nlp.pipe; docs/s is wall time on this machine (shared CPUs inflate it).

Usage, from the repository root:

    python benchmarks/six_type_ner.py training/pubmed/ner/model-last \\
        biored_dev=corpus/pubmed/biored_dev.spacy \\
        gnormplus=corpus/pubmed/test/gnormplus.spacy:Gene --output metrics/pubmed_ner.json
"""
import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def score(nlp, name: str, path: Path, types, batch_size: int) -> dict:
    """One gold DocBin's scores and speed."""
    from spacy_biolink.corpora.docbin import read_docbin
    from spacy_biolink.corpora.partial import score_six_types

    gold = read_docbin(path, nlp.vocab, "Gold DocBin")
    start = time.perf_counter()
    predicted = list(nlp.pipe((d.text for d in gold), batch_size=batch_size))
    wall = time.perf_counter() - start
    result = score_six_types(gold, predicted, types)
    result.update({"name": name, "gold": str(path), "n_docs": len(gold), "wall_s": wall,
                   "docs_per_s": len(gold) / wall if wall else 0.0})
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pipeline", type=Path, help="saved pipeline with the six-type NER")
    parser.add_argument("gold", nargs="+", help="NAME=DOCBIN[:TYPES]")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--output", type=Path, default=None, help="JSON of the figures")
    args = parser.parse_args(argv)
    import spacy

    from spacy_biolink.corpora.partial import parse_six_types

    nlp = spacy.load(args.pipeline)
    rows = []
    for item in args.gold:
        name, _, rest = item.partition("=")
        path, _, types = rest.partition(":")
        wanted = parse_six_types(types, option=f"{name} types")
        rows.append(score(nlp, name, Path(path), sorted(wanted) if wanted else None,
                          args.batch_size))
    print("| corpus | types | NER P / R / F1 | per type F1 | docs/s |")
    print("|---|---|---|---|---|")
    for row in rows:
        ner = row["ner"]
        per_type = ", ".join(f"{t} {v['f']:.3f}" for t, v in row["per_type"].items())
        print(f"| {row['name']} | {','.join(row['types'])} | {ner['p']:.3f} / {ner['r']:.3f} / "
              f"{ner['f']:.3f} | {per_type} | {row['docs_per_s']:.1f} |")
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps({"pipeline": str(args.pipeline), "corpora": rows},
                                          indent=2) + "\n", encoding="utf8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
