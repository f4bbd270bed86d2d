#!/usr/bin/env python
"""How far a linker's scores can be trusted as probabilities, raw and calibrated.

For each `--corpus PATH[:TYPE,...]` (dev splits only), the linker's gold mentions are
linked once (training/calibrate.py's mention_rows: the top candidate, its margin over
the second, right or not). Reported per corpus:

* raw: the top score's expected calibration error (scores clipped to [0, 1]) and, at the
  linker's own `threshold` (or `--raw-threshold`), the share made NIL and their NIL
  precision (the share of those that were wrong links);
* in-sample: calibrated on all the corpora together (also the calibration error of the
  candidates after the first), the NIL threshold chosen there for
  `--nil-precision`;
* held out: calibrated and thresholded on the other corpora only, scored on this one
  (what a new corpus would see);
* for a model saved with its calibration (`calibrate`, the shipped pipelines' linkers):
  that calibration's error and, at the model's own threshold, its NIL rate and precision.

Usage, from the repository root:

    python benchmarks/calibration.py --model training/linker_tfidf_dev \\
        --corpus ../shared/data/ncbi_disease/NCBIdevelopset_corpus.txt \\
        --corpus ../shared/data/bc5cdr/CDR_DevelopmentSet.PubTator.txt.gz:Disease \\
        --corpus ../shared/data/biored/Dev.PubTator.gz:Disease [--output FILE.json]
"""
import argparse
import json
import sys
from pathlib import Path

import numpy

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    """Parse the arguments, measure, print a table (and save it as JSON)."""
    import spacy

    from spacy_biolink.linker.settings import defaults as link_defaults
    from spacy_biolink.linker.stages.calibration import expected_calibration_error
    from spacy_biolink.training.calibrate import (fit_rows, mention_rows, reliability,
                                                  row_probabilities)

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a saved pipeline with one bio_linker")
    parser.add_argument("--corpus", action="append", required=True,
                        help="PATH or PATH:TYPE,TYPE (repeat; dev splits only)")
    parser.add_argument("--nil-precision", type=float, default=0.95)
    parser.add_argument("--raw-threshold", type=float, default=None,
                        help="the raw NIL threshold to score (default: the linker's own; "
                             "e.g. a pipeline's assemble --nil-threshold)")
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()
    nlp = spacy.load(args.model)
    pipe = next(p for _, p in nlp.pipeline if hasattr(p, "linker"))
    shipped = pipe.linker.stages.get("calibration")
    # a calibrated linker's own threshold is a probability, not a raw score: the raw
    # columns take bio_linker's default
    raw_threshold = args.raw_threshold if args.raw_threshold is not None else (
        link_defaults()["threshold"] if shipped is not None else pipe.cfg["threshold"])
    rows = {}
    for spec in args.corpus:
        path, _, types = spec.partition(":")
        rows[path] = mention_rows(nlp, path, types=types.split(",") if types else None)
        print(f"{path}: {len(rows[path]['right'])} mentions", flush=True)
    _, _, report = fit_rows(rows, nil_precision=args.nil_precision)
    out = {"in_sample": report, "raw": {}, "held_out": {}, "shipped": {}}
    for path, r in rows.items():
        if shipped is not None:
            probs = row_probabilities(shipped, r)
            out["shipped"][path] = {**reliability(probs, r["right"], pipe.cfg["threshold"]),
                                    "ece": expected_calibration_error(probs, r["right"])}
        raw = numpy.where(r["found"], numpy.clip(r["score"], 0.0, 1.0), 0.0)
        out["raw"][path] = {**reliability(raw, r["right"], raw_threshold),
                            "ece": expected_calibration_error(raw, r["right"])}
        others = {p: o for p, o in rows.items() if p != path}
        if others:
            stage, threshold, _ = fit_rows(others, nil_precision=args.nil_precision)
            out["held_out"][path] = reliability(row_probabilities(stage, r), r["right"],
                                                threshold)

    def cell(res, key, fmt="{:.3f}"):
        value = res.get(key)
        return "-" if value is None else fmt.format(value)

    print(f"\nraw threshold {raw_threshold}; calibrated threshold (all corpora) "
          f"{report['threshold']:.4f} for NIL precision >= {args.nil_precision}")
    print("| corpus | n | acc@1 | ECE raw | ECE in-sample | ECE held out | ECE candidates 2-5 "
          "in-sample | NIL rate / NIL precision raw | in-sample | held out |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for path in rows:
        raw, ins, held = out["raw"][path], report["corpora"][path], out["held_out"].get(path, {})
        print(f"| {Path(path).name} | {ins['n']} | {ins['accuracy']:.3f} | {cell(raw, 'ece')} | "
              f"{cell(ins, 'ece')} | {cell(held, 'ece')} | {cell(ins, 'ece_other_candidates')} | "
              f"{cell(raw, 'nil_rate')} / "
              f"{cell(raw, 'nil_precision')} | {cell(ins, 'nil_rate')} / "
              f"{cell(ins, 'nil_precision')} | {cell(held, 'nil_rate')} / "
              f"{cell(held, 'nil_precision')} |")
    if shipped is not None:
        print(f"\nthe model's own calibration, at its threshold {pipe.cfg['threshold']:.4f}:")
        print("| corpus | n | ECE | NIL rate | NIL precision |\n|---|---|---|---|---|")
        for path, res in out["shipped"].items():
            print(f"| {Path(path).name} | {res['n']} | {cell(res, 'ece')} | "
                  f"{cell(res, 'nil_rate')} | {cell(res, 'nil_precision')} |")
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
