"""`link --engine ray`: shards in, shards out on a local Ray cluster, exactly once."""
import gzip
import importlib.util
import json
import os
from pathlib import Path
import shutil
import textwrap

import pytest

from spacy_biolink.runners.distributed import (iter_shard_documents, link_corpus, link_rows, link_shard,
                                               output_name, plan_shards, ray_data_problem)
from spacy_biolink.errors import BioLinkError
from spacy_biolink.runners.local import link_file

from .conftest import TINY_MEDIC, make_linker_nlp

# Not only "is ray there": with the scispacy extra's numpy < 2, `import ray.data` fails
# although ray is installed; the tests skip with that reason rather than fail with E956.
_RAY_PROBLEM = ray_data_problem() if importlib.util.find_spec("ray") is not None else (
    "ray is not installed (an extra: pip install -e \".[distributed]\")")
needs_ray = pytest.mark.skipif(_RAY_PROBLEM is not None, reason=str(_RAY_PROBLEM))

TEXTS = ["Type 2 diabetes and breast cancer were found.",
         "Huntington's chorea in a zzqx vvkw family.",
         "NIDDM, IDDM and HD.",
         "No disease here."]


@pytest.fixture(scope="module")
def ray_cluster():
    """One local cluster for the module: starting Ray takes seconds."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """The tiny linker with a ruler standing in for an NER (see test_link_cli.py)."""
    from spacy_biolink import load_dictionary

    folder = tmp_path_factory.mktemp("model")
    (folder / "medic.txt").write_text(TINY_MEDIC, encoding="utf8")
    nlp = make_linker_nlp(load_dictionary(folder / "medic.txt"), threshold=0.5)
    ruler = nlp.add_pipe("entity_ruler", before="bio_linker")
    ruler.add_patterns([{"label": "Disease", "pattern": text} for text in
                        ["Type 2 diabetes", "breast cancer", "Huntington's chorea", "zzqx vvkw",
                         "NIDDM", "IDDM", "HD"]])
    nlp.to_disk(folder / "pipeline")
    return folder / "pipeline"


def write_shards(folder: Path, n_shards: int, docs_per_shard: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for shard in range(n_shards):
        lines = [json.dumps({"id": f"{shard}-{i}", "text": TEXTS[(shard + i) % len(TEXTS)]})
                 for i in range(docs_per_shard)]
        (folder / f"part-{shard}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf8")
    return folder


def read_jsonl(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf8") as fileh:
        return [json.loads(line) for line in fileh]


def by_id(records):
    return {r["id"]: r for r in records}


@needs_ray
@pytest.mark.distributed
def test_two_workers_give_the_single_process_output(ray_cluster, model_dir, tmp_path):
    inputs = write_shards(tmp_path / "in", n_shards=3, docs_per_shard=5)
    with gzip.open(inputs / "part-9.txt.gz", "wt", encoding="utf8") as fileh:
        fileh.write("\n".join(TEXTS) + "\n")
    report = link_corpus(inputs, model_dir, tmp_path / "out", num_workers=2, batch_size=2,
                         progress=False)
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == [
        "_report.json", "_shards", "part-0.jsonl", "part-1.jsonl", "part-2.jsonl",
        "part-9.jsonl.gz"]
    for shard in sorted(inputs.iterdir()):
        name = output_name(shard)
        link_file(model_dir, shard, tmp_path / "local" / name, progress=False)
        local, distributed = read_jsonl(tmp_path / "local" / name), read_jsonl(out / name)
        key = (lambda r: r.get("id", r["text"]))
        assert sorted(distributed, key=key) == sorted(local, key=key)
    assert {r["id"]: [e["kb_id"] for e in r["entities"]]
            for r in read_jsonl(out / "part-0.jsonl")}["0-0"] == ["D003924", "D001943"]
    assert (report["docs_in"], report["docs_out"], report["errors"]) == (19, 19, 0)
    assert report["shards_done_now"] == 4 and report["failed_shards"] == []
    # which actor takes which shard is Ray's choice: one ready first may take all four
    assert report["workers"] == 2 and 1 <= len(report["worker_peak_rss_mb"]) <= 2
    assert json.loads((out / "_report.json").read_text()) == report


KILL_CODE = """
import os, signal
from pathlib import Path
from spacy.language import Language

@Language.factory("kill_worker", default_config={"marker": "", "once": "", "always": ""})
def make_kill_worker(nlp, name, marker, once, always):
    def kill_worker(doc):
        if doc.text == always or (doc.text == once and not Path(marker).exists()):
            Path(marker).write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        return doc
    return kill_worker
"""


def test_a_killed_worker_loses_and_duplicates_nothing(ray_cluster, model_dir, tmp_path):
    """A component SIGKILLs its worker mid-shard: once on a document of shard 1 (Ray
    restarts the actor, the shard is linked again, every document is written exactly once),
    and every time on one of shard 2 (given up after max_attempts, the others finish)."""
    import spacy

    code = tmp_path / "kill_worker.py"
    code.write_text(textwrap.dedent(KILL_CODE), encoding="utf8")
    spacy.util.import_file("kill_worker_code", code)
    marker = tmp_path / "killed"
    nlp = spacy.load(model_dir)
    nlp.add_pipe("kill_worker", first=True, config={
        "marker": str(marker), "once": "shard 1 doc 6", "always": "shard 2 doc 1"})
    nlp.to_disk(tmp_path / "model")
    inputs = write_shards(tmp_path / "in", n_shards=4, docs_per_shard=8)
    for shard in (1, 2):
        lines = [json.dumps({"id": f"{shard}-{i}", "text": f"shard {shard} doc {i}"})
                 for i in range(8)]
        (inputs / f"part-{shard}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf8")

    report = link_corpus(inputs, tmp_path / "model", tmp_path / "out", num_workers=2,
                         batch_size=2, code=code, max_attempts=2, progress=False, strict=False)
    assert marker.exists(), "no worker was killed: the test tests nothing"
    ids = [r["id"] for shard in (0, 1, 3)
           for r in read_jsonl(tmp_path / "out" / f"part-{shard}.jsonl")]
    assert sorted(ids) == sorted(f"{s}-{i}" for s in (0, 1, 3) for i in range(8))
    assert (report["docs_in"], report["docs_out"], report["shards_failed"]) == (24, 24, 1)
    assert "E808" in report["failed_shards"][0]["error"]
    assert "part-2.jsonl" in report["failed_shards"][0]["shard"]
    # the killed attempts' half-written temporary files are gone, never renamed
    assert sorted(p.name for p in (tmp_path / "out").glob("part-*")) == [
        "part-0.jsonl", "part-1.jsonl", "part-3.jsonl"]
    assert not [p for p in (tmp_path / "out").rglob(".*")]
    # without --code the workers cannot build kill_worker: one clear line, not Ray's trace
    with pytest.raises(BioLinkError, match=r"E815.*kill_worker.*--code"):
        link_corpus(inputs, tmp_path / "model", tmp_path / "out2", num_workers=1, progress=False)


@needs_ray
@pytest.mark.distributed
def test_a_rerun_only_links_what_is_missing(ray_cluster, model_dir, tmp_path):
    inputs = write_shards(tmp_path / "in", n_shards=4, docs_per_shard=3)
    out = tmp_path / "out"
    first = link_corpus(inputs / "part-1.jsonl", model_dir, out, progress=False)
    assert first["shards_done_now"] == 1
    # a crash mid-write leaves only a temporary file: that shard is not done
    (out / ".part-2.jsonl.abc.tmp").write_text('{"id": "2-0"}\n', encoding="utf8")
    done_before = (out / "part-1.jsonl").stat().st_mtime_ns

    report = link_corpus(inputs, model_dir, out, num_workers=2, progress=False)
    assert (report["shards_done_now"], report["shards_done_earlier"]) == (3, 1)
    assert sorted(Path(s["shard"]).name for s in report["shards"] if s["run"] == "this") \
        == ["part-0.jsonl", "part-2.jsonl", "part-3.jsonl"]
    assert (out / "part-1.jsonl").stat().st_mtime_ns == done_before
    assert (report["docs_in"], report["docs_out"]) == (12, 12)
    assert not list(out.glob(".*.tmp"))

    again = link_corpus(inputs, model_dir, out, progress=False)
    assert (again["shards_done_now"], again["shards_done_earlier"], again["docs_out"]) == (0, 4, 12)


@needs_ray
@pytest.mark.distributed
def test_malformed_lines_are_counted_and_an_unreadable_shard_fails_alone(ray_cluster, model_dir,
                                                                         tmp_path):
    inputs = write_shards(tmp_path / "in", n_shards=3, docs_per_shard=3)
    with open(inputs / "part-1.jsonl", "a", encoding="utf8") as fileh:
        fileh.write('{"id": "bad json"\n\n{"id": "no text"}\n'
                    '{"id": "1-9", "text": "abc", "entities": [[0, 99, "Disease"]]}\n')
    (inputs / "part-3.jsonl.gz").write_bytes(b"\x1f\x8b\x08 this is no gzip stream")
    with pytest.warns(UserWarning, match="W800"), pytest.raises(BioLinkError, match="E806") as err:
        link_corpus(inputs, model_dir, tmp_path / "out", num_workers=1, progress=False)
    assert "part-3.jsonl.gz" in str(err.value)
    report = json.loads((tmp_path / "out" / "_report.json").read_text())
    assert (report["docs_in"], report["docs_out"], report["errors"]) == (12, 9, 3)
    assert [(m["shard"], m["line"], m["error"][1:5]) for m in report["malformed"]] == [
        ("part-1.jsonl", 4, "E752"), ("part-1.jsonl", 6, "E753"), ("part-1.jsonl", 7, "E754")]
    assert "part-1.jsonl:4" in report["malformed"][0]["error"]
    assert len(read_jsonl(tmp_path / "out" / "part-1.jsonl")) == 3
    assert [Path(f["shard"]).name for f in report["failed_shards"]] == ["part-3.jsonl.gz"]
    # the shared opener (files.py) names a truncated gzip (E015) before the shard reader would
    assert "E015" in report["failed_shards"][0]["error"]
    assert sorted(p.name for p in (tmp_path / "out").glob("part-*")) == [
        "part-0.jsonl", "part-1.jsonl", "part-2.jsonl"]


@needs_ray
@pytest.mark.distributed
def test_cli_parquet_in_and_out_and_local_engine_refuses_ray_options(ray_cluster, model_dir,
                                                                     tmp_path):
    import pyarrow
    import pyarrow.parquet
    import spacy
    from typer.testing import CliRunner

    from spacy_biolink.cli import app

    folder = tmp_path / "in"
    folder.mkdir()
    table = pyarrow.Table.from_pylist([{"pmid": i, "text": text} for i, text in enumerate(TEXTS)])
    pyarrow.parquet.write_table(table, folder / "part-0.parquet")
    link_shard(spacy.load(model_dir), folder / "part-0.parquet", tmp_path / "part-0.jsonl")
    records = read_jsonl(tmp_path / "part-0.jsonl")
    assert [(r["pmid"], r["text"]) for r in records] == list(enumerate(TEXTS))
    result = CliRunner().invoke(app, ["link", str(folder), "--model", str(model_dir), "--output",
                                      str(tmp_path / "pq"), "--engine", "ray", "--num-workers",
                                      "1", "--output-format", "parquet"])
    assert result.exit_code == 0, result.output
    assert "docs in" in result.output
    rows = pyarrow.parquet.read_table(tmp_path / "pq" / "part-0.parquet").to_pylist()
    assert [dict(r, entities=json.loads(r["entities"])) for r in rows] == records
    result = CliRunner().invoke(app, ["link", str(folder), "--model", str(model_dir), "--output",
                                      str(tmp_path / "o.jsonl"), "--num-workers", "2"])
    assert result.exit_code == 1 and "E809" in result.output

def test_plan_names_outputs_after_inputs_and_refuses_clashes(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    for name in ["a.jsonl", "b.txt.gz", "c.parquet", "_report.json", ".hidden.jsonl"]:
        (folder / name).write_text("")
    todo, done = plan_shards(folder, tmp_path / "out")
    assert [t.output.name for t in todo] == ["a.jsonl", "b.jsonl.gz", "c.jsonl"] and not done
    with pytest.warns(UserWarning, match="W801"):
        (folder / "notes.md").write_text("")
        plan_shards(folder, tmp_path / "out")
    (folder / "a.txt").write_text("")
    with pytest.raises(BioLinkError, match="E805"):
        plan_shards(folder, tmp_path / "out")
    with pytest.raises(BioLinkError, match="E813"):
        plan_shards(folder, folder)
    with pytest.raises(BioLinkError, match="E813"):
        plan_shards(folder / "a.jsonl", folder)


def test_link_shard_without_ray_matches_link_file(linker_nlp, tmp_path):
    """The batch function itself (what the Spark recipe calls) needs no Ray."""
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(json.dumps({"id": i, "text": t, "entities": [[0, 4, "Disease"]]})
                              for i, t in enumerate(TEXTS)) + "\n", encoding="utf8")
    result = link_shard(linker_nlp, path, tmp_path / "a.jsonl")
    link_file(linker_nlp, path, tmp_path / "b.jsonl", progress=False)
    assert read_jsonl(tmp_path / "a.jsonl") == read_jsonl(tmp_path / "b.jsonl")
    assert (result["docs_in"], result["docs_out"], result["pid"]) == (4, 4, os.getpid())
    assert [type(d).__name__ for d in iter_shard_documents(path)] == ["InputDocument"] * 4


def test_link_rows_keeps_order_and_marks_malformed_rows(linker_nlp):
    rows = [{"id": 1, "text": TEXTS[0], "entities": [[0, 15, "Disease"]]},
            {"id": 2, "text": None},
            {"id": 3, "text": TEXTS[1], "entities": json.dumps([[0, 19, "Disease"]])}]
    first, bad, third = link_rows(linker_nlp, rows)
    assert [(e["text"], e["kb_id"]) for e in first["entities"]] == [("Type 2 diabetes", "D003924")]
    assert bad["id"] == 2 and "E807" in bad["error"] and "entities" not in bad
    assert (third["id"], third["entities"][0]["kb_id"]) == (3, "D006816")


def spark_recipe() -> str:
    """The Spark recipe as docs/ray.md shows it."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "ray.md").read_text(encoding="utf8")
    start = page.index("```python\nimport json\n\nimport pandas as pd")
    return page[start + len("```python\n"):page.index("```", start + 10)]


@pytest.mark.slow  # a Spark session takes a minute to start on 2 cores
@pytest.mark.skipif(importlib.util.find_spec("pyspark") is None or shutil.which("java") is None,
                    reason="the Spark recipe of docs/ray.md needs pyspark and Java 17 (not in any extra)")
def test_the_documented_spark_recipe_gives_the_link_records(model_dir, tmp_path):
    inputs = write_shards(tmp_path / "in", n_shards=2, docs_per_shard=3)
    code = spark_recipe().replace(
        'MODEL, SHARDS, OUTPUT = "/shared/models/pipeline", "/shared/pubmed/shards", "/shared/pubmed/linked"',
        f"MODEL, SHARDS, OUTPUT = {str(model_dir)!r}, {str(inputs)!r}, {str(tmp_path / 'out')!r}")
    assert str(model_dir) in code
    try:
        exec(compile(code, "docs/ray.md (Spark recipe)", "exec"), {"__name__": "spark_recipe"})
    finally:
        from pyspark.sql import SparkSession

        SparkSession.builder.getOrCreate().stop()
    spark_records = [json.loads(line) for path in (tmp_path / "out").glob("part-*")
                     for line in path.read_text(encoding="utf8").splitlines()]
    local = []
    for shard in sorted(inputs.iterdir()):
        link_file(model_dir, shard, tmp_path / "local" / shard.name, progress=False)
        local += read_jsonl(tmp_path / "local" / shard.name)
    assert by_id(spark_records) == by_id(local) and len(spark_records) == len(local) == 6


def test_local_engine_says_a_directory_needs_ray(model_dir, tmp_path):
    from typer.testing import CliRunner

    from spacy_biolink.cli import app

    inputs = write_shards(tmp_path / "in", n_shards=1, docs_per_shard=1)
    result = CliRunner().invoke(app, ["link", str(inputs), "--model", str(model_dir),
                                      "--output", str(tmp_path / "out.jsonl")])
    assert result.exit_code == 1 and "E810" in result.output and "--engine ray" in result.output
    result = CliRunner().invoke(app, ["link", str(inputs), "--model", str(model_dir),
                                      "--output", str(tmp_path / "out"), "--engine", "spark"])
    assert result.exit_code == 1 and "E811" in result.output


@pytest.mark.distributed
def test_cli_ray_run_leaves_no_worker_and_no_ray_noise(model_dir, tmp_path):
    """`link --engine ray` as a user runs it (its own local cluster, in a process of its
    own): once the command has exited no `ray::` process of that run is left (issue 37:
    `ray::MapWorker`s of ~840 MB each outlived it), Ray's own warnings stay out of the
    output, and fewer workers than asked says why."""
    import subprocess
    import sys
    import time

    psutil = pytest.importorskip("psutil")

    def ray_processes():
        """ray:: processes, less those of the module's cluster (this process started it,
        so they descend from it; the command's cluster does not)."""
        found = set()
        for proc in psutil.process_iter(["pid", "cmdline"]):
            try:
                if any("ray::" in part for part in proc.info["cmdline"] or []) and \
                        os.getpid() not in {parent.pid for parent in proc.parents()}:
                    found.add(proc.info["pid"])
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                pass
        return found

    before = ray_processes()  # the module's cluster (other tests) is not this run's
    shards = write_shards(tmp_path / "in", 1, 3)
    result = subprocess.run([sys.executable, "-m", "spacy_biolink", "link", str(shards), "-m",
                             str(model_dir), "-o", str(tmp_path / "out"), "--engine", "ray",
                             "--num-workers", "2"], capture_output=True, text=True, timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    deadline = time.monotonic() + 5
    while ray_processes() - before and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not ray_processes() - before, "ray:: processes outlived the command"
    for noise in ("core_worker.cc", "may hang forever", "WARNING", "token"):
        assert noise not in output, output
    assert "1 worker" in output and "1 shard" in output, output
    report = json.loads((tmp_path / "out" / "_report.json").read_text())
    assert report["workers"] == 1 and report["workers_requested"] == 2
    assert "shard" in report["workers_note"]


@needs_ray
def test_an_address_where_no_cluster_answers_fails_within_seconds(model_dir, tmp_path):
    """Issue 59: `--address 127.0.0.1:1` (nothing listens) had Ray retry for minutes."""
    import subprocess
    import sys
    import time

    shards = write_shards(tmp_path / "in", 2, 1)
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "spacy_biolink", "link", str(shards), "-m",
                             str(model_dir), "-o", str(tmp_path / "out"), "--engine", "ray",
                             "--address", "127.0.0.1:1"], capture_output=True, text=True,
                            timeout=60)
    output = " ".join((result.stdout + result.stderr).split())
    assert time.monotonic() - started < 30, output
    assert result.returncode != 0, output
    assert "E836" in output and "--address 127.0.0.1:1" in output, output
    assert "Traceback" not in output, output
    assert not (tmp_path / "out").exists()  # checked before any output


def test_check_ray_address_names_the_address():
    from spacy_biolink.runners.distributed import check_ray_address

    for address in ("127.0.0.1:1", "ray://127.0.0.1:1"):
        with pytest.raises(BioLinkError, match=rf"E836\] --address {address}: no Ray cluster "
                                               r"answers at 127\.0\.0\.1:1"):
            check_ray_address(address, timeout=2)
    for address in (None, "auto", "local"):
        check_ray_address(address)  # Ray finds or starts these itself
