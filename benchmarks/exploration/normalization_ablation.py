#!/usr/bin/env python
"""TF-IDF linking with and without each preprocessing stage, on the shared protocol.

For each corpus, linkers are built with `init_linker` (the same code as
`python -m spacy_biolink init-linker`) and scored with `evaluate_gold_mentions` (the
code behind `python -m spacy_biolink evaluate`), both composite rules. Test runs use
the dictionary augmented with train + dev mentions, as BioSyn does.

Stages: abbreviations (resolve_abbreviations), composites (split_composites),
folding (lowercase + punctuation), variants (British spelling + plural folding),
spelling (the NCBI spelling map; NCBI only), augmentation (train + dev mentions in the
dictionary), short_forms (resolved short forms added too; needs augmentation), prior
(annotation prior, prior_weight 0.005; needs augmentation).

Usage (from the repository root):

    python benchmarks/exploration/normalization_ablation.py --data-dir ../shared/data \
        --corpora ncbi bc5cdr-disease bc5cdr-chemical --output benchmarks/results/ablation.md
"""
import argparse
import json
import logging
import tempfile
import time
import warnings
from pathlib import Path
from typing import Dict, List, Optional

from spacy_biolink.evaluation import evaluate_gold_mentions
from spacy_biolink.linker.pipeline import init_linker

STAGES = ("abbreviations", "composites", "folding", "variants", "spelling", "augmentation",
          "short_forms", "prior")


def corpus_settings(data: Path, name: str, workdir: Path) -> Dict:
    ncbi, cdr = data / "ncbi_disease", data / "bc5cdr"
    medic = data / "medic" / "medic_06Jul2012.txt.gz"
    if name == "ncbi":
        return {"dictionary": medic, "types": None, "spelling": ncbi / "ncbi-spell-check.txt",
                "train": ncbi / "NCBItrainset_corpus.txt.gz",
                "dev": ncbi / "NCBIdevelopset_corpus.txt", "test": ncbi / "NCBItestset_corpus.txt"}
    splits = {"train": cdr / "CDR_TrainingSet.PubTator.txt.gz",
              "dev": cdr / "CDR_DevelopmentSet.PubTator.txt.gz",
              "test": cdr / "CDR_TestSet.PubTator.txt.gz"}
    if name == "bc5cdr-disease":
        return {"dictionary": medic, "types": {"Disease"}, "spelling": None, **splits}
    if name == "bc5cdr-chemical":
        # Not BioSyn's CTD chemical dictionary (unavailable here): MeSH descriptor names,
        # one per concept, written id<TAB>name; our tsv reader takes name<TAB>id.
        source = cdr / "mesh_descriptor_names.kingsaint_entities.tsv"
        dictionary = workdir / "mesh_descriptors.tsv"
        lines = (line.rstrip("\n").split("\t") for line in source.open(encoding="utf8"))
        dictionary.write_text("".join(f"{n}\t{i}\n" for i, n in lines), encoding="utf8")
        return {"dictionary": dictionary, "types": {"Chemical"}, "spelling": None, **splits}
    raise SystemExit(f"unknown corpus {name!r}")


def run(settings: Dict, split: str, off: List[str]) -> Dict:
    overrides = {
        "components.bio_linker.resolve_abbreviations": "abbreviations" not in off,
        "components.bio_linker.split_composites": "composites" not in off,
        "components.bio_linker.normalizer.lowercase": "folding" not in off,
        "components.bio_linker.normalizer.remove_punctuation": "folding" not in off,
        "components.bio_linker.normalizer.spelling_variants": "variants" not in off,
        "components.bio_linker.normalizer.strip_plurals": "variants" not in off,
        "initialize.components.bio_linker.augment_short_forms": "short_forms" not in off,
        "components.bio_linker.prior_weight": 0.0 if "prior" in off else 0.005,
    }
    augment: List[Path] = []
    if "augmentation" not in off:
        augment = [settings["train"]] + ([settings["dev"]] if split == "test" else [])
    spelling: Optional[Path] = settings["spelling"] if "spelling" not in off else None
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nlp = init_linker(None, settings["dictionary"], augment=augment, spelling_map=spelling,
                          overrides=overrides)
    built = time.perf_counter() - started
    result = evaluate_gold_mentions(nlp, settings[split], types=settings["types"])
    result["build_s"] = built
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--corpora", nargs="+", default=["ncbi", "bc5cdr-disease"])
    parser.add_argument("--splits", nargs="+", default=["test"])
    parser.add_argument("--output", type=Path, default=Path("benchmarks/results/ablation.md"))
    parser.add_argument("--no-only", action="store_true", help="skip the 'only <stage>' rows")
    args = parser.parse_args()
    logging.disable(logging.INFO)
    rows = []
    configs = [("all stages", [])] + [(f"without {s}", [s]) for s in STAGES] + \
              [("no stage", list(STAGES))]
    if not args.no_only:
        configs += [(f"only {s}", [o for o in STAGES if o != s]) for s in STAGES]
    with tempfile.TemporaryDirectory() as tmp:
        for corpus in args.corpora:
            settings = corpus_settings(args.data_dir, corpus, Path(tmp))
            for split in args.splits:
                for label, off in configs:
                    if corpus != "ncbi" and "spelling" in label:
                        continue
                    r = run(settings, split, off)
                    row = {"corpus": corpus, "split": split, "config": label,
                           "lenient@1": r["lenient"]["acc@1"], "lenient@5": r["lenient"]["acc@5"],
                           "strict@1": r["strict"]["acc@1"], "strict@5": r["strict"]["acc@5"],
                           "n": r["n_evaluated"], "skipped": r["n_skipped"],
                           "composites_split": f"{r['composites']['split']}/{r['composites']['n']}",
                           "build_s": round(r["build_s"], 1)}
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    header = list(rows[0])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        lines.append("| " + " | ".join(f"{v:.4f}" if isinstance(v, float) else str(v)
                                       for v in row.values()) + " |")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text("\n".join(lines) + "\n", encoding="utf8")
    args.output.with_suffix(".json").write_text(json.dumps(rows, indent=2), encoding="utf8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
