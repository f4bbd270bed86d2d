import gzip
import importlib.util
import json
import subprocess
import sys

import pytest
import spacy

from .conftest import TINY_MEDIC, invoke_cli

CORPUS = """\
1|t|Type 2 diabetes and breast cancer.
1|a|NIDDM patients; STHAG6 carriers; an unknown syndrome.
1\t0\t15\tType 2 diabetes\tDisease\tD003924
1\t20\t33\tbreast cancer\tDisease\tD001943
1\t35\t40\tNIDDM\tDisease\tD003924
1\t51\t57\tSTHAG6\tModifier\tOMIM:613097
1\t71\t88\tunknown syndrome\tDisease\t-1
1\t71\t88\tunknown syndrome\tDisease\tD000001

"""


def run_cli(*args, check=True):
    result = subprocess.run([sys.executable, "-m", "spacy_biolink", *map(str, args)],
                            capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(result.stdout + result.stderr)
    return result


@pytest.fixture
def files(tmp_path):
    dictionary = tmp_path / "medic.txt.gz"
    with gzip.open(dictionary, "wt", encoding="utf8") as f:
        f.write(TINY_MEDIC)
    corpus = tmp_path / "corpus.PubTator.gz"
    with gzip.open(corpus, "wt", encoding="utf8") as f:
        f.write(CORPUS)
    return dictionary, corpus


def test_init_linker_then_evaluate(files, tmp_path):
    dictionary, corpus = files
    invoke_cli("init-linker", tmp_path / "model", "--dictionary", dictionary, "--format", "medic")
    assert (tmp_path / "model" / "config.cfg").is_file()
    result = invoke_cli("evaluate", tmp_path / "model", corpus, "--output", tmp_path / "m.json")
    metrics = json.loads((tmp_path / "m.json").read_text())
    assert metrics["n_evaluated"] == 4
    assert metrics["n_skipped"] == 2
    assert metrics["skipped"] == {"no_id": 1, "not_in_dictionary": 1}
    assert metrics["acc@1"] == 1.0 and metrics["acc@5"] == 1.0
    assert "acc@1" in result.stdout

    # Nothing to score is an error, not acc@1 0.0 (issue 19)
    (tmp_path / "pmids.txt").write_text("2\n")
    none = invoke_cli("evaluate", tmp_path / "model", corpus, "--pmids", tmp_path / "pmids.txt",
                   "--types", "Modifier", "--output", tmp_path / "none.json", check=False)
    assert none.returncode == 1 and "E461" in none.stdout and "Traceback" not in none.stderr
    assert not (tmp_path / "none.json").exists()
    invoke_cli("evaluate", tmp_path / "model", corpus, "--types", "Modifier", "--output", tmp_path / "mod.json")
    assert json.loads((tmp_path / "mod.json").read_text())["n_evaluated"] == 1


def test_every_log_line_is_printed_once(files, tmp_path):
    dictionary, corpus = files
    result = run_cli("init-linker", tmp_path / "model", "--dictionary", dictionary,
                     "--augment", corpus)
    lines = [line for line in result.stderr.splitlines() if "INFO" in line]
    # spaCy's own lines (its handler's format) and this package's lines, each once.
    assert any(line.endswith("[INFO] Created vocabulary") for line in lines), result.stderr
    assert sum("Created vocabulary" in line for line in lines) == 1, result.stderr
    ours = [line for line in lines if line.startswith("INFO spacy_biolink")]
    assert len(ours) == 1 and "bio_linker:" in ours[0], result.stderr


def test_init_linker_takes_dotted_config_overrides(files, tmp_path):
    dictionary, _ = files
    invoke_cli("init-linker", tmp_path / "model", "--dictionary", dictionary,
            "--components.bio_linker.k", "7", "--components.bio_linker.prior_weight", "0",
            "--components.bio_linker.index.chunk_size", "64")
    config = spacy.util.load_config(tmp_path / "model" / "config.cfg")
    assert config["components"]["bio_linker"]["k"] == 7
    assert config["components"]["bio_linker"]["prior_weight"] == 0
    # without an encoder, index overrides apply to the default config's index
    index = config["components"]["bio_linker"]["index"]
    assert (index["@misc"], index["chunk_size"]) == ("spacy-biolink.AutoSparseIndex.v6", 64)


def test_format_is_inferred_and_outputs_are_not_overwritten(files, tmp_path):
    dictionary, _ = files
    invoke_cli("init-linker", tmp_path / "model", "--dictionary", dictionary)
    again = invoke_cli("init-linker", tmp_path / "model", "--dictionary", dictionary, check=False)
    assert again.returncode == 1 and "E403" in again.stdout + again.stderr
    invoke_cli("init-linker", tmp_path / "model", "--dictionary", dictionary, "--force")


def test_bad_dictionary_leaves_nothing_on_disk(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("D1||Alpha\nD2 Beta\n", encoding="utf8")
    result = run_cli("init-linker", tmp_path / "model", "--dictionary", bad, "--format", "medic", check=False)
    assert result.returncode == 1
    assert f"{bad}:2:" in result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "model").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bad.txt"]


def test_evaluate_on_a_missing_model_is_a_clear_error(files, tmp_path):
    _, corpus = files
    result = run_cli("evaluate", tmp_path / "nope", corpus, check=False)
    assert result.returncode == 1 and "E401" in result.stdout + result.stderr
    assert "Traceback" not in result.stderr


def test_assets_default_job(tmp_path):
    """The README's main job, on the shipped assets: build and evaluate on NCBI-disease dev."""
    from pathlib import Path

    assets = Path(__file__).resolve().parents[1] / "assets"
    invoke_cli("init-linker", tmp_path / "model", "--dictionary", assets / "medic_06Jul2012.txt.gz")
    invoke_cli("evaluate", tmp_path / "model", assets / "ncbi_disease" / "NCBIdevelopset_corpus.txt",
            "--output", tmp_path / "m.json")
    metrics = json.loads((tmp_path / "m.json").read_text())
    assert metrics["n_evaluated"] == 787
    # Measured with this command on the shipped assets (lenient is the headline rule).
    assert metrics["acc@1"] == pytest.approx(0.7776, abs=0.005)
    assert metrics["acc@5"] == pytest.approx(0.9136, abs=0.005)
    assert metrics["strict"]["acc@1"] == pytest.approx(0.7764, abs=0.005)


def test_report_compares_linkers_and_end_to_end(files, tmp_path):
    dictionary, corpus = files
    invoke_cli("init-linker", tmp_path / "model", "--dictionary", dictionary)
    invoke_cli("evaluate", tmp_path / "model", corpus, "--ks", "1,3", "--output", tmp_path / "m.json")
    metrics = json.loads((tmp_path / "m.json").read_text())
    assert {"acc@1", "acc@3", "acc@5"} <= set(metrics["strict"])
    # This pipeline has no NER, so end to end it finds nothing; the columns still come.
    invoke_cli("convert", corpus, tmp_path / "gold.spacy")
    invoke_cli("evaluate-e2e", tmp_path / "model", tmp_path / "gold.spacy", "--output", tmp_path / "e2e.json")
    e2e = json.loads((tmp_path / "e2e.json").read_text())
    assert e2e["ner"]["n_gold"] > 0 and e2e["ner"]["n_pred"] == 0
    result = invoke_cli("report", f"tfidf={tmp_path / 'm.json'}", "--end-to-end", f"tfidf={tmp_path / 'e2e.json'}",
                     "--output", tmp_path / "cmp.md", "--plot", tmp_path / "acc.png")
    table = (tmp_path / "cmp.md").read_text()
    assert "| tfidf | 1.0000 | 1.0000 | 1.0000 | 1.0000 | 4 | 2 |" in table
    assert table.splitlines()[0] in result.stdout
    # An end-to-end result named after no linker (a whole pipeline) gets a row of its own.
    invoke_cli("report", f"tfidf={tmp_path / 'm.json'}", "--end-to-end", f"packaged={tmp_path / 'e2e.json'}",
               "--output", tmp_path / "cmp2.md")
    rows = (tmp_path / "cmp2.md").read_text().splitlines()
    assert "| tfidf | 1.0000 | 1.0000 | 1.0000 | 1.0000 | 4 | 2 | - | - | - | - |" in rows
    assert "| packaged | - | - | - | - | - | - | 0.0000 | 0.0000 | 0.0000 | 0.0000 |" in rows
    # The plot needs the `plots` extra; the core install writes the table alone.
    if importlib.util.find_spec("matplotlib") is not None:
        assert (tmp_path / "acc.png").read_bytes()[:4] == b"\x89PNG"
    bad = invoke_cli("report", "tfidf", "--output", tmp_path / "x.md", check=False)
    assert bad.returncode == 1 and "E404" in bad.stdout + bad.stderr
    assert not (tmp_path / "x.md").exists()
