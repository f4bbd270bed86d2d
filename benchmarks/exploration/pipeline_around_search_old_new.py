#!/usr/bin/env python
"""The pipeline around the search, before and after session 16's change (issue 35):
whole-linker mentions/s of several saved linkers with the abbreviation step and
set_annotations of git revision --old swapped in and out of ONE process, passes
interleaved, one thread; the links and annotations of both are checked identical first.

    python benchmarks/exploration/pipeline_around_search_old_new.py --old i35-s16 \
        --corpus ../shared/data/ncbi_disease/NCBItestset_corpus.txt \
        --pipeline medic=/tmp/i35/linker_source \
        --pipeline 'mesh=/tmp/i35/linker_real_mesh={"@misc": "spacy-biolink.AutoSparseIndex.v4", "word_threshold": 0.2}'

Only what the change touched is swapped: AbbreviationResolver.long_forms (with the old
module's doc_text) and BioLinker.set_annotations.
"""
import argparse
import gc
import json
import os
import subprocess
import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_vs_scispacy import make_docs, prepare_mentions  # noqa: E402


def old_module(revision: str, path: str, package: str) -> types.ModuleType:
    """A module of `path` as it was at `revision`, run from git (its relative imports
    resolve against the installed package)."""
    source = subprocess.check_output(["git", "show", f"{revision}:{path}"], cwd=ROOT)
    module = types.ModuleType(f"{package}._old_{Path(path).stem}")
    module.__package__ = package
    exec(compile(source, f"{revision}:{path}", "exec"), module.__dict__)
    return module


def old_set_annotations(revision: str):
    """BioLinker.set_annotations at `revision`, cut from its file (the module itself
    registers factories and cannot run twice)."""
    source = subprocess.check_output(
        ["git", "show", f"{revision}:spacy_biolink/linker/component.py"], cwd=ROOT).decode()
    start = source.index("    def set_annotations(")
    end = source.index("\n    # Evaluation", start)
    from spacy_biolink.linker import component
    namespace = dict(vars(component))
    exec("\n".join(line[4:] for line in source[start:end].splitlines()), namespace)
    return namespace["set_annotations"]


def snapshot(docs):
    return [[(e.start, e.end, e.label_, e.kb_id_, e._.kb_ents, e._.kb_parts) for e in d.ents]
            for d in docs]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--old", required=True, help="git revision of the old code")
    p.add_argument("--corpus", type=Path, required=True)
    p.add_argument("--pipeline", action="append", required=True,
                   help="LABEL=DIR or LABEL=DIR=JSON (index settings given at spacy.load)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=128)
    args = p.parse_args(argv)
    import spacy

    from spacy_biolink.linker.component import BioLinker
    from spacy_biolink.text import abbreviations

    old_abbreviations = old_module(args.old, "spacy_biolink/text/abbreviations.py",
                                   "spacy_biolink.text")
    variants = {
        "old": (old_abbreviations.AbbreviationResolver.long_forms, old_set_annotations(args.old)),
        "new": (abbreviations.AbbreviationResolver.long_forms, BioLinker.set_annotations),
    }

    def use(variant):
        long_forms, set_annotations = variants[variant]
        abbreviations.AbbreviationResolver.long_forms = long_forms
        BioLinker.set_annotations = set_annotations

    pipelines = {}
    for spec in args.pipeline:
        label, path, *settings = spec.split("=", 2)
        index = dict(json.loads(settings[0]) if settings else {}, n_threads=1)
        if "@misc" not in index:
            index = {}
        nlp = spacy.load(path, config={"components": {"bio_linker": {"index": index}}}
                         if index else {})
        nlp.get_pipe("bio_linker").index.n_threads = 1
        pipelines[label] = nlp
    first = next(iter(pipelines.values()))
    texts, per_doc, stats = prepare_mentions(args.corpus, first.make_doc)
    n = stats["mentions"]

    def one_pass(nlp, keep=False):
        docs = make_docs(nlp.make_doc, texts, per_doc)
        nlp.get_pipe("bio_linker").linker.clear_cache()
        gc.collect()
        t = time.perf_counter()
        out = list(nlp.pipe(docs, batch_size=args.batch_size))
        dt = time.perf_counter() - t
        return (dt, snapshot(out)) if keep else (dt, None)

    for label, nlp in pipelines.items():
        results = {}
        for variant in variants:
            use(variant)
            one_pass(nlp)
            results[variant] = one_pass(nlp, keep=True)[1]
        same = results["old"] == results["new"]
        print(f"{label}: old and new annotations identical: {same}")
        if not same:
            return 1
    best = {}
    for r in range(args.repeats):
        for label, nlp in pipelines.items():
            for variant in (variants if r % 2 == 0 else list(variants)[::-1]):
                use(variant)
                dt = one_pass(nlp)[0]
                best[label, variant] = min(best.get((label, variant), dt), dt)
    print(f"{n} mentions, {args.repeats} rounds, one thread, load average "
          f"{' '.join(open('/proc/loadavg').read().split()[:3])}, {os.cpu_count()} CPUs")
    for label in pipelines:
        old, new = best[label, "old"], best[label, "new"]
        print(f"{label}: old {n / old:,.0f} mentions/s, new {n / new:,.0f} mentions/s "
              f"(new / old {old / new:.3f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
