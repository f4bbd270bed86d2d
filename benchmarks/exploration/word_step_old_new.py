#!/usr/bin/env python
"""The query path's kernels at an older commit beside the current ones, in one process
(issue 35, session 19): the word kernels (word_kernels.py), the exact rescoring
(kernels.rescore_rows), the name candidates (block_kernels.blocked_candidates) and the
concept search (concepts.search_concepts) of --old-rev are loaded from git and swapped
in for the "old" passes, on the same loaded pipelines. First checks that old and new give the same search results (scores and name
ids, one and two threads) and the same linked kb ids on each --check corpus; then
mentions/s of whole linker passes (as link_speed_side_by_side.py: `nlp.pipe` over the
corpus's gold mentions, the linker's cache cleared), old and new taking turns in each
round, on one thread and on the index's default threads.

    python benchmarks/exploration/word_step_old_new.py --old-rev 8466cb4 \
        --corpus ../shared/data/ncbi_disease/NCBItestset_corpus.txt \
        --check ../shared/data/ncbi_disease/NCBIdevelopset_corpus.txt \
        --check ../shared/data/ncbi_disease/NCBItestset_corpus.txt \
        --pipeline real10M=/tmp/s18_10M/linker_real_10000000 \
        --pipeline mesh=/tmp/i35/linker_real_mesh --pipeline medic=/tmp/i35/linker_source \
        --repeats 5
"""
import argparse
import gc
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import numpy

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench_vs_scispacy.py
from bench_vs_scispacy import make_docs, prepare_mentions  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def old_module(rev: str, path: str, name: str):
    """Module `path` of the package as at git revision `rev`, loaded under `name` (its
    relative imports resolved against the current package)."""
    source = subprocess.run(["git", "-C", str(REPO), "show", f"{rev}:{path}"], check=True,
                            capture_output=True, text=True).stdout
    source = source.replace("from ..", "from spacy_biolink.").replace(
        "from .", "from spacy_biolink.index.")
    folder = Path(tempfile.mkdtemp(prefix="old_kernels_"))
    file = folder / f"{name}.py"
    file.write_text(source)
    spec = importlib.util.spec_from_file_location(name, file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextmanager
def old_kernels(old_words, old_kernels_module, old_blocks, old_concepts):
    """The word kernels, rescore_rows, blocked_candidates and the retriever's
    search_concepts of the old revision in place of the current."""
    from spacy_biolink.index import block_kernels, kernels, word_kernels
    from spacy_biolink.linker import retriever

    names = ("word_cosines", "word_cosines_pruned", "word_cosines_rare")
    saved = {name: getattr(word_kernels, name) for name in names}
    saved_rescore = kernels.rescore_rows
    old_rescore = old_kernels_module.rescore_rows
    saved_blocks = block_kernels.blocked_candidates
    saved_concepts = retriever.search_concepts
    old_blocked = old_blocks.blocked_candidates
    try:
        for name in names:
            setattr(word_kernels, name, getattr(old_words, name))
        kernels.rescore_rows = lambda *args, n_threads=1: old_rescore(*args)
        block_kernels.blocked_candidates = \
            lambda *args, bucketed=False, **options: old_blocked(*args, **options)
        retriever.search_concepts = old_concepts.search_concepts
        yield
    finally:
        for name, function in saved.items():
            setattr(word_kernels, name, function)
        kernels.rescore_rows = saved_rescore
        block_kernels.blocked_candidates = saved_blocks
        retriever.search_concepts = saved_concepts


def linked_ids(nlp, texts, per_doc, batch_size):
    nlp.get_pipe("bio_linker").linker.clear_cache()
    docs = list(nlp.pipe(make_docs(nlp.make_doc, texts, per_doc), batch_size=batch_size))
    return [(ent.start_char, ent.end_char, ent.kb_id_) for doc in docs for ent in doc.ents]


def check_same(label, nlp, corpus, old, batch_size):
    """Assert that the new kernels give the old ones' (`old()`: their context) search
    results and kb ids."""
    linker = nlp.get_pipe("bio_linker")
    texts, per_doc, _ = prepare_mentions(corpus, nlp.make_doc)
    queries = linker.linker.encode(sorted({linker.normalizer.mention(t[s:e]) for t, spans
                                           in zip(texts, per_doc) for s, e, _ in spans}))
    index = linker.index
    threads = [1, index.n_threads] if hasattr(index, "n_threads") else [None]
    results = {}
    for which in ("old", "new"):
        for n in threads:
            if n is not None:
                index.n_threads = n
            if which == "old":
                with old():
                    results[which, n] = (index.search(queries, 10),
                                         linked_ids(nlp, texts, per_doc, batch_size))
            else:
                results[which, n] = (index.search(queries, 10),
                                     linked_ids(nlp, texts, per_doc, batch_size))
    (want_scores, want_ids), want_kb = results["old", threads[0]]
    for key, ((scores, ids), kb) in results.items():
        numpy.testing.assert_array_equal(scores, want_scores, err_msg=f"{label} {key}")
        numpy.testing.assert_array_equal(ids, want_ids, err_msg=f"{label} {key}")
        assert kb == want_kb, f"{label} {key}: kb ids differ"
    print(f"{label} on {corpus.name}: {queries.shape[0]} queries, {len(want_kb)} mentions: "
          f"same scores, name ids and kb ids (old / new, threads {threads})", flush=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--old-rev", required=True, help="git revision of the old kernels")
    p.add_argument("--corpus", type=Path, required=True, help="the corpus timed")
    p.add_argument("--check", type=Path, action="append", default=[],
                   help="a corpus on which old and new must agree")
    p.add_argument("--pipeline", action="append", required=True,
                   help="LABEL=DIR or LABEL=DIR=JSON (index settings given at spacy.load)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=128)
    args = p.parse_args(argv)
    import spacy

    old_words = old_module(args.old_rev, "spacy_biolink/index/word_kernels.py",
                           "word_kernels_old")
    old_kernels_module = old_module(args.old_rev, "spacy_biolink/index/kernels.py",
                                    "kernels_old")
    old_blocks = old_module(args.old_rev, "spacy_biolink/index/block_kernels.py",
                            "block_kernels_old")
    old_concepts = old_module(args.old_rev, "spacy_biolink/index/concepts.py", "concepts_old")
    kernel_modules = (old_words, old_kernels_module, old_blocks, old_concepts)
    pipelines = {}
    for spec in args.pipeline:
        label, path, *settings = spec.split("=", 2)
        index = json.loads(settings[0]) if settings else {}
        config = {"components": {"bio_linker": {"index": index}}} if index else {}
        pipelines[label] = spacy.load(path, config=config)
    for label, nlp in pipelines.items():
        for corpus in args.check:
            check_same(label, nlp, corpus, lambda: old_kernels(*kernel_modules),
                       args.batch_size)
    first = next(iter(pipelines.values()))
    texts, per_doc, stats = prepare_mentions(args.corpus, first.make_doc)
    n = stats["mentions"]

    def one_pass(nlp):
        docs = make_docs(nlp.make_doc, texts, per_doc)
        nlp.get_pipe("bio_linker").linker.clear_cache()
        gc.collect()
        t = time.perf_counter()
        list(nlp.pipe(docs, batch_size=args.batch_size))
        return time.perf_counter() - t

    settings = []
    for label, nlp in pipelines.items():
        index = nlp.get_pipe("bio_linker").index
        for which in ("old", "new"):
            for threads in (1, index.n_threads):
                settings.append((label, which, threads, index))
        one_pass(nlp)
        with old_kernels(*kernel_modules):
            one_pass(nlp)
    best = {}
    for round_ in range(args.repeats):
        for label, which, threads, index in (settings if round_ % 2 == 0 else settings[::-1]):
            index.n_threads = threads
            if which == "old":
                with old_kernels(*kernel_modules):
                    dt = one_pass(pipelines[label])
            else:
                dt = one_pass(pipelines[label])
            key = (label, which, threads)
            best[key] = min(best.get(key, dt), dt)
    print(f"{n} mentions, {args.repeats} rounds, load average "
          f"{' '.join(open('/proc/loadavg').read().split()[:3])}, {os.cpu_count()} CPUs")
    for (label, which, threads), dt in best.items():
        ratio = ""
        if which == "new":
            ratio = f", {best[label, 'old', threads] / dt:.2f}x old"
        print(f"{label}: {which}: n_threads {threads}: {n / dt:,.0f} mentions/s "
              f"(best {dt * 1e3:.1f} ms){ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
