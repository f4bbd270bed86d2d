"""Linking a corpus of shards on Ray Data (`python -m spacy_biolink link DIR --engine ray`).

A shard is one input file (.jsonl[.gz], .txt[.gz], .parquet); it is also the unit of work
and of exactly-once output. Each Ray actor loads the saved pipeline once and links whole
shards with nlp.pipe, writing the output shard beside its target and renaming it into place
when complete, so an output shard either exists whole or not at all:

* resume: a re-run skips every shard whose output exists;
* a killed worker: Ray restarts the actor and runs its shard again from the start; the
  killed attempt's temporary file is never renamed, so no document is lost or written twice;
* a malformed line is not linked; it is counted and named shard:line in `_report.json`;
* an unreadable shard fails alone (its message in the report), the others are linked.

Nothing here knows about encoders or indexes: a worker only loads a pipeline and calls
`link_shard`, which builds records with `link_files` (the single-process `link`'s code).
Shards rather than batches of documents are scheduled because a shard's output must be
written by one process to be renamed atomically; corpora such as PubMed's baseline come in
many shards (1,200 files of 30,000 abstracts), and `split` cuts one big file into shards
(see docs/ray.md).

Every node must see INPUT, OUTPUT and the model directory at the same paths (a shared file
system) and have spacy-biolink installed.
"""
import contextlib
from dataclasses import dataclass
import gzip
import json
import logging
import os
from pathlib import Path
import re
import socket
import sys
import time
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple, Union
import warnings
import zlib

from spacy.language import Language

from ..errors import BioLinkError, Errors, Warnings
from ..linker.extensions import install_extensions
from ..linker.find import configured_linkers
from .local import (InputDocument, LinkedRecords, LinkStats, _parse_entities,
                    _parse_json_line, input_format, make_input_doc)
from ..io.util import PathLike, atomic_file, open_text

logger = logging.getLogger(__name__)

REPORT_NAME = "_report.json"
# One small JSON file per finished shard: its counts and malformed lines survive a crash of
# the driver, so a resumed run's report still covers every shard. Names starting with "_"
# are skipped by Spark and Hadoop readers of the output directory.
SHARD_REPORTS_DIR = "_shards"
OUTPUT_FORMATS = ("jsonl", "parquet")
# Malformed lines named per shard in its report (all are counted): a corpus with a broken
# export should not write a report as large as the corpus.
MAX_LISTED_ERRORS = 1000
_SHARD_SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz", ".txt", ".txt.gz",
                   ".text", ".text.gz", ".parquet")


@dataclass
class MalformedLine:
    """A line (or Parquet row) of a shard that is not a document, and why."""

    line: int
    message: str


@dataclass
class ShardTask:
    input: Path
    output: Path
    report: Path


def shard_format(path: PathLike) -> str:
    """"parquet", "jsonl" or "txt", from the name."""
    path = Path(path)
    if path.suffix.lower() == ".parquet":
        return "parquet"
    return input_format(path)


def list_shards(input_path: PathLike) -> List[Path]:
    """INPUT itself when a file; else the shard files at the top of the directory, sorted.
    Hidden files and names starting with "_" (a previous run's reports) are skipped."""
    input_path = Path(input_path)
    if input_path.is_file():
        shard_format(input_path)  # an unknown suffix fails here, before anything runs
        return [input_path]
    if not input_path.is_dir():
        raise BioLinkError(Errors.E801.format(path=input_path))
    shards, ignored = [], []
    for path in sorted(input_path.iterdir()):
        if path.name.startswith((".", "_")) or path.is_dir():
            continue
        (shards if path.name.lower().endswith(_SHARD_SUFFIXES) else ignored).append(path)
    if not shards:
        example = f" (it has {len(ignored)} other file(s), e.g. {ignored[0].name})" if ignored else ""
        raise BioLinkError(Errors.E802.format(path=input_path, ignored=example))
    if ignored:
        warnings.warn(Warnings.W801.format(n=len(ignored), path=input_path,
                                           example=ignored[0].name))
    return shards


def output_name(shard: PathLike, output_format: str = "jsonl") -> str:
    """part-3.jsonl -> part-3.jsonl, part-3.txt.gz -> part-3.jsonl.gz, part-3.parquet ->
    part-3.jsonl; with output_format "parquet", part-3.parquet."""
    name = Path(shard).name
    gzipped = name.lower().endswith(".gz")
    if gzipped:
        name = name[:-3]
    stem = Path(name).stem
    if output_format == "parquet":
        return f"{stem}.parquet"
    return f"{stem}.jsonl" + (".gz" if gzipped and not name.lower().endswith(".parquet") else "")


def plan_shards(input_path: PathLike, output_dir: PathLike, *, output_format: str = "jsonl"
                ) -> Tuple[List[ShardTask], List[ShardTask]]:
    """(to do, done earlier): every shard of INPUT with its output and report paths."""
    if output_format not in OUTPUT_FORMATS:
        raise BioLinkError(Errors.E811.format(what="output format", value=output_format,
                                              options=", ".join(OUTPUT_FORMATS)))
    input_path, output_dir = Path(input_path).resolve(), Path(output_dir).resolve()
    if output_dir.exists() and not output_dir.is_dir():
        raise BioLinkError(Errors.E803.format(path=output_dir))
    root = input_path if input_path.is_dir() else input_path.parent
    if output_dir == root:  # output shards are named after their input: it would overwrite it
        raise BioLinkError(Errors.E813.format(input=input_path, output=output_dir))
    todo, done = [], []
    by_name: Dict[str, Path] = {}
    for shard in list_shards(input_path):
        name = output_name(shard, output_format)
        if name in by_name:
            raise BioLinkError(Errors.E805.format(first=by_name[name], second=shard, name=name))
        by_name[name] = shard
        task = ShardTask(shard, output_dir / name, output_dir / SHARD_REPORTS_DIR / f"{name}.json")
        (done if task.output.is_file() else todo).append(task)
    return todo, done


def iter_shard_documents(path: PathLike) -> Iterator[Union[InputDocument, MalformedLine]]:
    """The documents of one shard, as `link` reads them; a malformed line is yielded as a
    MalformedLine instead of stopping the shard. A shard that cannot be read (missing,
    corrupt gzip, not UTF-8, not Parquet) raises E804."""
    path = Path(path)
    try:
        fmt = shard_format(path)
        if fmt == "parquet":
            yield from _parquet_documents(path)
            return
        with open_text(path) as fileh:
            for line_no, line in enumerate(fileh, start=1):
                line = line.rstrip("\r\n")
                if not line.strip():
                    continue
                if fmt == "txt":
                    yield InputDocument(text=line, line=line_no)
                    continue
                try:
                    yield _parse_json_line(path, line_no, line)
                except BioLinkError as err:
                    yield MalformedLine(line_no, str(err))
    except (OSError, EOFError, UnicodeDecodeError, zlib.error) as err:
        raise BioLinkError(Errors.E804.format(shard=path, reason=f"{type(err).__name__}: {err}")) \
            from None


def _parquet_documents(path: Path) -> Iterator[Union[InputDocument, MalformedLine]]:
    import pyarrow
    import pyarrow.parquet

    try:
        batches = pyarrow.parquet.ParquetFile(path).iter_batches(batch_size=1024)
        row = 0
        for batch in batches:
            for record in batch.to_pylist():
                row += 1
                try:
                    yield _document_from_row(path, row, record)
                except BioLinkError as err:
                    yield MalformedLine(row, str(err))
    except pyarrow.ArrowException as err:
        raise OSError(f"not a readable Parquet file: {err}") from None


def _document_from_row(path: PathLike, row: int, record: Dict[str, Any]) -> InputDocument:
    record = dict(record)
    text = record.pop("text", None)
    if not isinstance(text, str):
        raise BioLinkError(Errors.E807.format(
            shard=path, row=row, reason=f"\"text\" is {type(text).__name__}, not a string"))
    entities = record.pop("entities", None)
    if isinstance(entities, str):  # a Parquet output of `link`, where entities are JSON
        try:
            entities = json.loads(entities)
        except json.JSONDecodeError as err:
            raise BioLinkError(Errors.E807.format(
                shard=path, row=row, reason=f"\"entities\" is not valid JSON ({err})")) from None
    if entities is not None:
        entities = _parse_entities(path, row, entities, text)
    return InputDocument(text=text, line=row, passthrough=record, entities=entities)


def link_shard(nlp: Language, shard: PathLike, output: PathLike, *, report: Optional[PathLike] = None,
               batch_size: int = 64, output_format: str = "jsonl") -> Dict[str, Any]:
    """Link one shard into `output`, written whole or not at all; return its counts.

    The shard's report (counts, malformed lines) goes to `report` just before `output` is
    renamed into place, so a finished output shard always has one. Raises BioLinkError
    (E804) for a shard that cannot be read; malformed lines are counted, not raised.
    """
    started = time.perf_counter()
    install_extensions()
    linked = LinkedRecords(nlp)
    shard = Path(shard)
    malformed: List[Dict[str, Any]] = []
    n_malformed = 0
    docs_in = 0

    def input_docs():
        nonlocal docs_in, n_malformed
        for item in iter_shard_documents(shard):
            docs_in += 1
            if isinstance(item, InputDocument):
                try:
                    yield make_input_doc(nlp, item, shard), item.passthrough
                    continue
                except BioLinkError as err:  # entities that cover no token, or overlap
                    item = MalformedLine(item.line, str(err))
            n_malformed += 1
            if len(malformed) < MAX_LISTED_ERRORS:
                malformed.append({"shard": shard.name, "line": item.line, "error": item.message})

    stats = LinkStats()
    records = (linked.record(doc, passthrough) for doc, passthrough
               in nlp.pipe(input_docs(), as_tuples=True, batch_size=batch_size))

    def counted(records: Iterable[Dict[str, Any]]) -> Iterator[Dict[str, Any]]:
        for record in records:
            linked.count(stats, record)
            yield record

    result: Dict[str, Any] = {}
    with _atomic_output(output, output_format) as write:
        write(counted(records))
        result = {"shard": str(shard), "output": str(output), "status": "done",
                  "docs_in": docs_in, "docs_out": stats.docs, "errors": n_malformed,
                  "entities": stats.entities, "linked": stats.linked, "nil": stats.nil,
                  "seconds": round(time.perf_counter() - started, 3), "pid": os.getpid(),
                  "peak_rss_mb": _peak_rss_mb(), "malformed": malformed}
        if report is not None:
            with atomic_file(report) as fileh:
                json.dump(result, fileh, indent=1)
    return result


def link_rows(nlp: Language, rows: Iterable[Dict[str, Any]], *, batch_size: int = 64,
              source: str = "<rows>") -> List[Dict[str, Any]]:
    """The batch function for engines that hand over rows, not files (Spark's mapInPandas:
    `frame.to_dict("records")`): one output record per row, in order, as `link` writes it.

    A row needs a "text" string; "entities" (a list, or the JSON string a Parquet output
    holds) gives spans; other keys are copied. A malformed row is not linked: its record
    keeps its keys and gets an "error" message instead of "entities", so nothing is dropped.
    Every linker of the pipeline writes its entities (see runners/local.py, LinkedRecords).
    """
    install_extensions()
    linked = LinkedRecords(nlp)
    records: List[Optional[Dict[str, Any]]] = []
    docs = []
    for number, row in enumerate(rows, start=1):
        try:
            document = _document_from_row(source, number, row)
            docs.append((make_input_doc(nlp, document, source), (len(records), document.passthrough)))
            records.append(None)
        except BioLinkError as err:
            records.append({**{k: v for k, v in row.items() if k != "entities"}, "error": str(err)})
    for doc, (index, passthrough) in nlp.pipe(docs, as_tuples=True, batch_size=batch_size):
        records[index] = linked.record(doc, passthrough)
    return records  # type: ignore[return-value]


class _atomic_output:
    """Write records as JSONL (gzipped for .gz) or Parquet to a temporary file renamed over
    `path` on success (util.atomic_file)."""

    def __init__(self, path: PathLike, output_format: str):
        self.path, self.output_format = Path(path), output_format

    def __enter__(self):
        gzipped = self.path.suffix == ".gz"
        binary = gzipped or self.output_format == "parquet"
        self._context = atomic_file(self.path, "wb" if binary else "w")
        raw = self._context.__enter__()

        def write(records: Iterable[Dict[str, Any]]) -> None:
            if self.output_format == "parquet":
                _write_parquet(raw, records)
                return
            # mtime=0: the same input gives byte-identical .gz output, attempt after attempt
            fileh = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) if gzipped else raw
            try:
                for record in records:
                    line = json.dumps(record, ensure_ascii=False) + "\n"
                    fileh.write(line.encode("utf8") if gzipped else line)
            finally:
                if gzipped:
                    fileh.close()

        return write

    def __exit__(self, *exc):
        return self._context.__exit__(*exc)


def _write_parquet(fileh, records: Iterable[Dict[str, Any]]) -> None:
    """One row a document; "entities" as a JSON string, since its [id, score] pairs mix
    types that a Parquet column cannot hold. Passthrough keys must keep one type per key."""
    import pyarrow
    import pyarrow.parquet

    rows = [dict(record, entities=json.dumps(record["entities"], ensure_ascii=False))
            for record in records]
    pyarrow.parquet.write_table(pyarrow.Table.from_pylist(rows), fileh)


def _peak_rss_mb() -> Optional[float]:
    try:
        import resource  # not on Windows
    except ImportError:
        return None
    # ru_maxrss is in KiB on Linux (bytes on macOS; the figure is for a report, not control)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


class ShardLinker:
    """The Ray Data actor: loads the pipeline once, then links the shards it is given.

    A failure of one shard (unreadable, or an error inside the pipeline) becomes a
    "failed" result for that shard, so Ray goes on with the others.
    """

    def __init__(self, model: str, *, batch_size: int = 64, output_format: str = "jsonl",
                 code: Optional[str] = None, use_gpu: bool = False, max_attempts: int = 4):
        import spacy

        from ..linker.pipeline import load_linker_pipeline

        try:
            if code is not None:
                spacy.util.import_file("python_code", code)
            if use_gpu:
                spacy.prefer_gpu()
            self.nlp = load_linker_pipeline(model)
            # Each Ray worker holds one CPU: its search stays on one thread.
            for _, pipe in self.nlp.pipeline:
                if getattr(getattr(pipe, "index", None), "n_threads", None) is not None:
                    pipe.index.n_threads = 1
        except Exception as err:  # noqa: BLE001 - the driver shows this line, not Ray's trace
            reason = " ".join(f"{type(err).__name__}: {err}".split())
            raise BioLinkError(Errors.E815.format(path=model, reason=reason)) from None
        self.batch_size, self.output_format = batch_size, output_format
        self.max_attempts = max_attempts

    def __call__(self, batch: Dict[str, Any]) -> Dict[str, List[str]]:
        """Link each shard of a Ray Data batch and return one JSON result per shard. A shard that
        fails, or whose earlier workers died, gives a failed result instead of stopping the run."""
        results = []
        for shard, output, report in zip(batch["shard"], batch["output"], batch["report"]):
            attempts = _record_attempt(Path(report))
            if attempts > self.max_attempts:  # the workers before died on it: give up
                results.append(json.dumps(_failed(shard, Errors.E808.format(
                    shard=shard, n=attempts - 1))))
                continue
            try:
                result = link_shard(self.nlp, shard, output, report=report,
                                    batch_size=self.batch_size, output_format=self.output_format)
            except BioLinkError as err:
                result = _failed(shard, str(err))
            except Exception as err:  # noqa: BLE001 - one shard's failure must not stop the run
                result = _failed(shard, Errors.E814.format(shard=shard,
                                                           reason=f"{type(err).__name__}: {err}"))
            results.append(json.dumps(result))
        return {"result": results}


def attempts_path(report: Path) -> Path:
    """The hidden file beside `report` that counts the attempts at its shard."""
    return report.with_name(f".{report.name}.attempts")


def _record_attempt(report: Path) -> int:
    """Count this attempt at a shard (one line a try) and return the count, this one
    included. A worker killed on the shard never returns, so its line stays."""
    path = attempts_path(report)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf8") as fileh:
        fileh.write(f"{os.getpid()}\n")
    return len(path.read_text(encoding="utf8").splitlines())


def _failed(shard: str, message: str) -> Dict[str, Any]:
    return {"shard": str(shard), "status": "failed", "error": message}


def check_model_dir(model: PathLike) -> Path:
    """Fail on the driver, before Ray starts, when `model` is no saved pipeline with a
    bio_linker (under any name)."""
    from spacy.util import load_config

    model = Path(model).resolve()
    if not model.is_dir():
        raise BioLinkError(Errors.E401.format(path=model, reason="no such directory"))
    if not (model / "config.cfg").is_file():
        raise BioLinkError(Errors.E401.format(path=model, reason="no config.cfg"))
    config = load_config(model / "config.cfg")
    if not configured_linkers(config):
        pipes = list(config.get("nlp", {}).get("pipeline", []))
        raise BioLinkError(Errors.E402.format(path=model, pipes=pipes))
    return model


def remove_stale_temporaries(tasks: Iterable[ShardTask]) -> int:
    """Delete what killed attempts left: atomic_file's `.NAME.*.tmp` beside each output, and
    the attempt counts (each run gives a shard max_attempts again)."""
    removed = 0
    for task in tasks:
        attempts_path(task.report).unlink(missing_ok=True)
        for target in (task.output, task.report):
            if target.parent.is_dir():
                for tmp in target.parent.glob(f".{target.name}.*.tmp"):
                    tmp.unlink(missing_ok=True)
                    removed += 1
    return removed


def link_corpus(input_path: PathLike, model: PathLike, output_dir: PathLike, *,
                num_workers: Optional[int] = None, address: Optional[str] = None,
                batch_size: int = 64, num_gpus: float = 0, output_format: str = "jsonl",
                code: Optional[PathLike] = None, max_attempts: int = 4, progress: bool = True,
                strict: bool = True) -> Dict[str, Any]:
    """Link every shard of `input_path` not yet in `output_dir` on Ray; write `_report.json`.

    num_workers: actors (each loads the pipeline once); default: the cluster's CPUs.
    address: a running Ray cluster to join ("auto", "ray://host:10001"); default: start a
        local one (or use the one this process already started).
    num_gpus: GPUs (or a fraction) per actor, for dense encoders.
    code: a Python file to import in each worker first (custom components, as spaCy's --code).
    max_attempts: tries at a shard whose worker dies on it before it is given up.
    strict: raise E806 when a shard failed (after the report is written); warn W800 for
        malformed lines either way.
    Returns the report.
    """
    started_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    started = time.perf_counter()
    if (num_workers is not None and num_workers < 1) or num_gpus < 0:
        raise BioLinkError(Errors.E812.format(workers=num_workers, gpus=num_gpus))
    todo, done_earlier = plan_shards(input_path, output_dir, output_format=output_format)
    model = check_model_dir(model)
    ray_module = sys.modules.get("ray")
    if ray_module is None or not ray_module.is_initialized():  # else the address is unused
        check_ray_address(address)  # before any output: a dead address fails in seconds
    output_dir = Path(output_dir).resolve()
    output_dir.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(todo)
    results: Dict[str, Dict[str, Any]] = {}
    workers, requested = 0, num_workers
    if todo:
        results, workers, requested = _run_on_ray(todo, model, num_workers=num_workers, address=address,
                                       batch_size=batch_size, num_gpus=num_gpus,
                                       output_format=output_format, code=code,
                                       max_attempts=max_attempts, progress=progress)
        remove_stale_temporaries(todo)
    report = _build_report(todo, done_earlier, results, input_path=input_path, model=model,
                           output_dir=output_dir, started_at=started_at,
                           seconds=time.perf_counter() - started, workers=workers,
                           workers_requested=requested,
                           workers_note=workers_note(workers, requested, len(todo)),
                           address=address)
    report_path = output_dir / REPORT_NAME
    with atomic_file(report_path) as fileh:
        json.dump(report, fileh, indent=2)
    logger.info("Linked %d shard(s) (%d done earlier, %d failed): %d docs in, %d out, %d "
                "malformed; report: %s", report["shards_done_now"], report["shards_done_earlier"],
                report["shards_failed"], report["docs_in"], report["docs_out"], report["errors"],
                report_path)
    if report["errors"]:
        first = report["malformed"][0] if report["malformed"] else {}
        warnings.warn(Warnings.W800.format(
            n=report["errors"], shards=sum(1 for s in report["shards"] if s.get("errors")),
            example=f"{first.get('shard')}:{first.get('line')}", report=report_path))
    if strict and report["failed_shards"]:
        failed = report["failed_shards"]
        names = ", ".join(Path(f["shard"]).name for f in failed[:5]) + (" ..." if len(failed) > 5 else "")
        raise BioLinkError(Errors.E806.format(n=len(failed), total=len(todo) + len(done_earlier),
                                              failed=names, report=report_path))
    return report


def ray_data_problem() -> Optional[str]:
    """Why Ray Data cannot be used here, or None when `import ray.data` works.

    "Not installed" only when there is no `ray`; an installed Ray whose import fails
    (numpy < 2 from the scispacy extra beside a pandas or pyarrow built for numpy >= 2)
    is a conflict between installed packages, and the reason says which and how to fix it.
    """
    try:
        import_ray_data()
    except BioLinkError as err:
        return str(err)
    return None


def import_ray_data():
    """The `ray` module with `ray.data` imported, or a BioLinkError: E800 when Ray is not
    installed, E956 (what failed, numpy's version, what to do) when it is but its import
    fails."""
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        raise BioLinkError(Errors.E800)
    try:
        import ray
        import ray.data  # noqa: F401 - imported for its side effect: ray.data is set
    except Exception as err:  # ImportError, or ValueError "numpy.dtype size changed"
        raise BioLinkError(Errors.E956.format(
            error=f"{type(err).__name__}: {' '.join(str(err).split())[:300]}",
            numpy=_version("numpy"), pandas=_version("pandas"),
            pyarrow=_version("pyarrow"))) from None
    return ray


def _version(package: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def _run_on_ray(todo: List[ShardTask], model: Path, *, num_workers: Optional[int],
                address: Optional[str], batch_size: int, num_gpus: float, output_format: str,
                code: Optional[PathLike], max_attempts: int, progress: bool
                ) -> Tuple[Dict[str, Dict[str, Any]], int, int]:
    """Link `todo` on Ray. Returns the results by shard, the actors started and the
    actors asked for (num_workers, or the cluster's CPUs when None)."""
    ray = import_ray_data()
    from ..io.progress import progress_bar

    started_ray = False
    quiet = _QuietRay()
    if not ray.is_initialized():
        quiet.before_init()
        try:
            ray.init(address=address, include_dashboard=False, logging_level=logging.ERROR,
                     # workers' own stderr (C++ lines, Ray Data notices) stays in Ray's log
                     # files; a shard's failure reaches the driver as a result or an exception
                     log_to_driver=False)
        except (ConnectionError, TimeoutError, ValueError) as err:
            if address is None:
                raise
            reason = " ".join(str(err).split())[:300]
            raise BioLinkError(Errors.E837.format(address=address, reason=reason)) from None
        started_ray = True
    context = ray.data.DataContext.get_current()
    saved = context.enable_progress_bars, context.max_errored_blocks
    results: Dict[str, Dict[str, Any]] = {}
    quiet.enter()
    try:
        context.enable_progress_bars = False  # ours below counts shards and documents
        # a shard whose task errors anyway is left out, not the whole run: the driver
        # reports it (E808) and a re-run retries it
        context.max_errored_blocks = -1
        if num_workers is None:
            num_workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        workers = min(num_workers, len(todo))
        items = [{"shard": str(t.input), "output": str(t.output), "report": str(t.report)}
                 for t in todo]
        # Ray Data restarts a dead actor and retries its task without limit by default;
        # ShardLinker counts the attempts per shard and gives up after max_attempts. One
        # shard in flight per actor: a slow shard does not hold others queued behind it.
        dataset = ray.data.from_items(items, override_num_blocks=len(items)).map_batches(
            ShardLinker, batch_size=1, num_cpus=1, num_gpus=num_gpus or None,
            compute=ray.data.ActorPoolStrategy(size=workers, max_tasks_in_flight_per_actor=1),
            fn_constructor_kwargs={"model": str(model), "batch_size": batch_size,
                                   "output_format": output_format,
                                   "code": str(Path(code).resolve()) if code else None,
                                   "use_gpu": num_gpus > 0, "max_attempts": max_attempts})
        linked_docs = 0
        begun = time.perf_counter()
        with progress_bar(total=len(todo), unit="shard", desc="Linking", disable=not progress) as bar, \
                _worker_errors_as_biolink_errors():
            for row in dataset.iter_rows():
                result = json.loads(row["result"])
                results[result["shard"]] = result
                linked_docs += result.get("docs_in", 0)
                rate = linked_docs / max(time.perf_counter() - begun, 1e-9)
                bar.set_postfix(docs=linked_docs, docs_s=f"{rate:.0f}",
                                failed=sum(r["status"] == "failed" for r in results.values()))
                bar.update(1)
        for task in todo:
            if str(task.input) not in results:
                results[str(task.input)] = _failed(
                    str(task.input), Errors.E808.format(shard=task.input, n=max_attempts))
        return results, workers, num_workers
    finally:
        context.enable_progress_bars, context.max_errored_blocks = saved
        if started_ray:
            ray.shutdown()
            # ray.shutdown() does not wait for the actors' processes: on a loaded box
            # `ray::MapWorker`s (~840 MB each) outlived the command, adopted by init.
            stop_worker_processes({r["pid"] for r in results.values() if r.get("pid")})
        quiet.exit()


# How long joining a cluster (--address HOST:PORT) may wait for its port to answer: Ray
# itself retries a dead address for minutes (NUM_REDIS_GET_RETRIES, gRPC reconnects).
ADDRESS_TIMEOUT_S = 5.0


def check_ray_address(address: Optional[str], timeout: float = ADDRESS_TIMEOUT_S) -> None:
    """E836 unless something accepts a TCP connection at the HOST:PORT of `address`
    ("HOST:PORT" or "ray://HOST:PORT") within `timeout` seconds. "auto", "local" and None
    (Ray finds or starts the cluster itself) are not checked."""
    if not address or address in ("auto", "local"):
        return
    target = address[len("ray://"):] if address.startswith("ray://") else address
    host, _, port = target.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit():
        return  # not HOST:PORT: Ray gives its own error
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except socket.timeout:
        reason = "no answer"
    except OSError as err:
        reason = err.strerror or str(err) or type(err).__name__
    else:
        return
    raise BioLinkError(Errors.E836.format(address=address, host=host, port=port,
                                          reason=reason, timeout=timeout))


def workers_note(workers: int, requested: Optional[int], shards: int) -> Optional[str]:
    """Why fewer workers ran than were asked for (each links whole shards, one at a time,
    so there is no use for more than there are shards to link); None when as many ran."""
    if requested is None or workers >= requested:
        return None
    return (f"{requested} worker(s) asked, {workers} started: each links whole shards, and "
            f"{shards} shard(s) were left to link (split the input into more shards to use "
            f"more workers)")


class _QuietRay:
    """Keeps Ray's own notices out of a normal run's output: the token-authentication
    WARNING, Ray Data's INFO/WARNING lines (execution plan, "progress bars disabled",
    "Cluster resources are not enough ... may hang forever" while actors start on a
    loaded machine) and the driver's `core_worker.cc` error line about constructor
    arguments. Ray errors still raise; set RAY_BACKEND_LOG_LEVEL or the `ray` loggers'
    levels yourself to see the rest (Ray's log files keep everything)."""

    LOGGERS = ("ray", "ray.data")

    def __init__(self):
        self.levels: Dict[str, int] = {}

    def before_init(self) -> None:
        """Before ray.init of a cluster we start: C++ logging below fatal off, unless set."""
        os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "fatal")

    def enter(self) -> None:
        """Ray's Python loggers at ERROR for the run."""
        for name in self.LOGGERS:
            log = logging.getLogger(name)
            self.levels[name] = log.level
            log.setLevel(logging.ERROR)

    def exit(self) -> None:
        """The loggers' levels as they were."""
        for name, level in self.levels.items():
            logging.getLogger(name).setLevel(level)


def stop_worker_processes(pids: Iterable[int], *, grace: float = 10.0) -> List[int]:
    """Wait up to `grace` seconds for the worker processes of a cluster this run started
    (and has shut down) to exit, then end those left: SIGTERM, then SIGKILL. Only
    processes whose command line is a Ray worker's (`ray::...`) are signalled, so a
    reused pid is left alone. Returns the pids that had to be signalled."""
    import signal

    def alive_worker(pid: int) -> bool:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fileh:
                return b"ray::" in fileh.read()
        except OSError:  # gone (or no /proc: nothing to check there)
            return False

    left = set(pids)
    deadline = time.monotonic() + grace
    while left and time.monotonic() < deadline:
        left = {pid for pid in left if alive_worker(pid)}
        if left:
            time.sleep(0.2)
    signalled = sorted(left)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in left:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        stop = time.monotonic() + 3
        while left and time.monotonic() < stop:
            left = {pid for pid in left if alive_worker(pid)}
            if left:
                time.sleep(0.1)
    if signalled:
        logger.info("Ended %d Ray worker process(es) left after shutdown: %s", len(signalled),
                    signalled)
    return signalled


@contextlib.contextmanager
def _worker_errors_as_biolink_errors():
    """A worker that cannot start fails the run; show its E815 line, not Ray's trace."""
    import ray.exceptions

    try:
        yield
    except ray.exceptions.RayError as err:
        found = re.search(r"\[E815\][^\n]*", str(err))
        if found is None:
            raise
        raise BioLinkError(found.group(0)) from None


def _build_report(todo: List[ShardTask], done_earlier: List[ShardTask],
                  results: Dict[str, Dict[str, Any]], **run: Any) -> Dict[str, Any]:
    """The run's report: totals over every shard of the input (this run's and earlier
    runs', read from their shard reports), failures, malformed lines, speed and memory."""
    shards, failed = [], []
    for task in todo:
        result = results.get(str(task.input), {})
        if result.get("status") == "done":
            shards.append(dict(result, run="this"))
        else:
            failed.append({"shard": str(task.input), "error": result.get("error")})
    for task in done_earlier:
        try:
            earlier = json.loads(task.report.read_text(encoding="utf8"))
        except (OSError, json.JSONDecodeError):
            earlier = {"shard": str(task.input), "output": str(task.output), "status": "done",
                       "note": "output from an earlier run without its shard report"}
        shards.append(dict(earlier, run="earlier"))
    now = [s for s in shards if s["run"] == "this"]
    seconds = run.pop("seconds")
    docs_now = sum(s["docs_in"] for s in now)
    workers_rss: Dict[str, float] = {}
    for shard in now:
        workers_rss[str(shard["pid"])] = max(workers_rss.get(str(shard["pid"]), 0),
                                             shard["peak_rss_mb"] or 0)
    malformed = [line for s in shards for line in s.get("malformed", [])][:MAX_LISTED_ERRORS]
    return {
        "engine": "ray", **{k: str(v) if isinstance(v, Path) else v for k, v in run.items()},
        "seconds": round(seconds, 2),
        "shards_total": len(todo) + len(done_earlier), "shards_done_now": len(now),
        "shards_done_earlier": len(done_earlier), "shards_failed": len(failed),
        "docs_in": sum(s.get("docs_in", 0) for s in shards),
        "docs_out": sum(s.get("docs_out", 0) for s in shards),
        "errors": sum(s.get("errors", 0) for s in shards),
        "entities": sum(s.get("entities", 0) for s in shards),
        "this_run": {"docs_in": docs_now, "docs_out": sum(s["docs_out"] for s in now),
                     "errors": sum(s["errors"] for s in now),
                     "docs_per_second": round(docs_now / seconds, 1) if seconds else None},
        "worker_peak_rss_mb": workers_rss,
        "failed_shards": failed,
        "malformed": malformed,
        "shards": [{k: v for k, v in s.items() if k != "malformed"} for s in shards],
    }
