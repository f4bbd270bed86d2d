#!/usr/bin/env python
"""NER + linker pipelines side by side on raw text (issue 22): NER and end-to-end
linking P/R/F1 on a gold DocBin, and the whole pipeline's speed, in one process.

Each NAME=DIR is a saved pipeline (an NER, then bio_linker: `python -m spacy_biolink
assemble`), loaded as `link` loads it (load_linker_pipeline). Scored with
evaluate_end_to_end, which runs nlp.pipe over the gold docs' texts; that pass is timed:
wall seconds and this process's CPU seconds (on a shared machine the CPU seconds are the
steadier figure), so docs/s covers tokenizer, NER and linker together. The pipelines
run one after the other, in the order given, on the same texts.

Usage, from the repository root:

    python benchmarks/ner_e2e.py cpu_ner=training/pipeline trf_ner=training/pipeline_trf \\
        --gold corpus/test.spacy --output benchmarks/results/ner_e2e.json
"""
import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

EXAMPLE = ("Patients with Wilson disease (WD) and familial adenomatous polyposis often show "
           "hepatic copper accumulation.")


def measure(name: str, path: Path, gold: Path, batch_size: int) -> dict:
    from spacy_biolink.evaluation import evaluate_end_to_end
    from spacy_biolink.linker.pipeline import load_linker_pipeline

    start = time.perf_counter()
    nlp = load_linker_pipeline(path)
    load_s = time.perf_counter() - start
    wall, cpu = time.perf_counter(), time.process_time()
    result = evaluate_end_to_end(nlp, gold, batch_size=batch_size, progress=True)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    example = [(e.text, e.kb_id_) for e in nlp(EXAMPLE).ents]
    return {"name": name, "model": str(path), "pipes": nlp.pipe_names, "load_s": load_s,
            "ner": result["ner"], "linking": result["linking"], "n_docs": result["n_docs"],
            "wall_s": wall, "cpu_s": cpu, "docs_per_s": result["n_docs"] / wall,
            "docs_per_cpu_s": result["n_docs"] / cpu, "example": example}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pipelines", nargs="+", help="NAME=PIPELINE_DIR")
    parser.add_argument("--gold", type=Path, required=True, help="gold DocBin (convert)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--output", type=Path, default=None, help="JSON of the figures")
    args = parser.parse_args(argv)
    rows = []
    for item in args.pipelines:
        name, _, path = item.partition("=")
        rows.append(measure(name, Path(path), args.gold, args.batch_size))
        print(json.dumps(rows[-1]), flush=True)
    first = rows[0]
    print("\n| pipeline | NER P / R / F1 | linking P / R / F1 | docs/s (wall) | docs per CPU s "
          f"| CPU time vs {first['name']} |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        ner, link = row["ner"], row["linking"]
        print(f"| {row['name']} | {ner['p']:.3f} / {ner['r']:.3f} / {ner['f']:.3f} | "
              f"{link['p']:.3f} / {link['r']:.3f} / {link['f']:.3f} | {row['docs_per_s']:.2f} | "
              f"{row['docs_per_cpu_s']:.2f} | {row['cpu_s'] / first['cpu_s']:.1f}x |")
    print()
    for row in rows:
        print(f"{row['name']}: {row['example']}")
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
