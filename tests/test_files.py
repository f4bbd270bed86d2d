"""files.py: the one opener and the one writer, and the bad inputs of issue 19 through
the readers and commands that use them."""
import gzip
import json
import os
import stat

import pytest
from typer.testing import CliRunner

from spacy_biolink.cli import app
from spacy_biolink.corpora.pubtator import read_pubtator
from spacy_biolink.errors import BioLinkError
from spacy_biolink.io.files import (atomic_directory, atomic_file, check_output_path, iter_lines,
                                    json_text, read_json, read_text, write_json)
from spacy_biolink.kb.readers import load_dictionary
from spacy_biolink.text.normalize import read_spelling_map
from spacy_biolink.io.util import atomic_file as util_atomic_file, open_text

from .conftest import TINY_MEDIC

CORPUS = ("1|t|Type 2 diabetes and breast cancer.\n"
          "1|a|NIDDM patients.\n"
          "1\t0\t15\tType 2 diabetes\tDisease\tD003924\n"
          "1\t20\t33\tbreast cancer\tDisease\tD001943\n\n")
runner = CliRunner()


def invoke(*args):
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


# ------------------------------------------------------------------ reading

def test_lines_are_numbered_stripped_and_bom_free(tmp_path):
    path = tmp_path / "x.txt"
    path.write_bytes("\ufeffa\r\nb\n\nc".encode("utf8"))
    assert list(iter_lines(path)) == [(1, "a"), (2, "b"), (3, ""), (4, "c")]
    with open_text(path) as fileh:  # util.open_text keeps file-object code working
        assert list(fileh) == ["a\n", "b\n", "\n", "c\n"]


def test_gzip_is_detected_by_content_not_name(tmp_path):
    path = tmp_path / "dictionary.txt"  # gzip without the .gz name
    path.write_bytes(gzip.compress(TINY_MEDIC.encode("utf8")))
    assert load_dictionary(path).n_concepts == 6


def test_bom_is_not_part_of_the_first_id(tmp_path):
    path = tmp_path / "medic.txt"
    path.write_bytes(b"\xef\xbb\xbf" + TINY_MEDIC.encode("utf8"))
    dictionary = load_dictionary(path)
    assert dictionary.concept_ids[0] == "D003924"
    gz = tmp_path / "medic.txt.gz"
    gz.write_bytes(gzip.compress(b"\xef\xbb\xbf" + TINY_MEDIC.encode("utf8")))
    assert load_dictionary(gz).concept_ids[0] == "D003924"


def test_latin1_file_names_path_line_and_iconv(tmp_path):
    path = tmp_path / "medic.txt"
    path.write_bytes(TINY_MEDIC.encode("utf8") + "D1||Diab\xe8te\n".encode("latin1"))
    with pytest.raises(BioLinkError, match=r"E013.*medic.txt:7: not UTF-8 text \(byte 0xe8 at "
                                           r"column 9\).*iconv -f latin1 -t utf8"):
        load_dictionary(path)


def test_truncated_and_corrupt_gzip(tmp_path):
    data = gzip.compress(TINY_MEDIC.encode("utf8") * 200)
    truncated = tmp_path / "medic.txt.gz"
    truncated.write_bytes(data[:-40])
    with pytest.raises(BioLinkError, match=r"E015.*medic.txt.gz: the gzip data is truncated.*gzip -t"):
        load_dictionary(truncated, format="medic")
    corrupt = tmp_path / "corrupt.PubTator.gz"
    corrupt.write_bytes(data[:10] + bytes(200))
    with pytest.raises(BioLinkError, match="E015"):
        list(read_pubtator(corrupt))


def test_plain_file_named_gz(tmp_path):
    path = tmp_path / "spelling.txt.gz"
    path.write_text("diabetis||diabetes\n", encoding="utf8")
    with pytest.raises(BioLinkError, match=r"E014.*spelling.txt.gz is named .gz but is not gzip"):
        read_spelling_map(path)


def test_directory_missing_and_unreadable(tmp_path):
    with pytest.raises(BioLinkError, match=r"E011.*is a directory"):
        list(read_pubtator(tmp_path))
    # a dictionary may be a UMLS META directory: this one holds no MRCONSO.RRF
    with pytest.raises(BioLinkError, match=r"E041.*is a directory"):
        load_dictionary(tmp_path)
    with pytest.raises(BioLinkError, match="E010"):
        read_text(tmp_path / "nope.txt")
    if os.geteuid() != 0:  # root reads anything
        path = tmp_path / "secret.txt"
        path.write_text("x")
        path.chmod(0)
        with pytest.raises(BioLinkError, match="E012"):
            read_text(path)


def test_read_json_errors_name_line_and_column(tmp_path):
    path = tmp_path / "m.json"
    path.write_text('{\n  "a": 1,\n}\n')
    with pytest.raises(BioLinkError, match=r"E017.*m.json:3:1: not valid JSON"):
        read_json(path)
    path.write_text("[1]")
    with pytest.raises(BioLinkError, match="E018.*JSON array"):
        read_json(path, type=dict)
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}')
    assert read_json(path) == {"a": 1}


@pytest.mark.parametrize("char", ["\x00", "\x1b", "\r", "\x7f", "\ufeff"])
def test_control_characters_in_names_are_malformed_lines(tmp_path, char):
    path = tmp_path / "medic.txt"
    path.write_text(TINY_MEDIC.replace("NIDDM", f"NID{char}DM"), encoding="utf8")
    with pytest.raises(BioLinkError, match=r"medic.txt:1:.*control character U\+"):
        load_dictionary(path)


def test_control_character_escaped_in_json_and_tab_in_medic_name(tmp_path):
    jsonl = tmp_path / "kb.jsonl"
    jsonl.write_text('{"concept_id": "D1", "canonical_name": "Al\\u0000pha"}\n')
    with pytest.raises(BioLinkError, match=r"E001.*kb.jsonl:1:.*U\+0000"):
        load_dictionary(jsonl)
    medic = tmp_path / "medic.txt"
    medic.write_text("D1||Al\tpha|Beta\n")
    with pytest.raises(BioLinkError, match=r"E001.*medic.txt:1:.*U\+0009"):
        load_dictionary(medic, format="medic")


def test_pubtator_with_bom_and_crlf(tmp_path):
    path = tmp_path / "c.PubTator"
    path.write_bytes(b"\xef\xbb\xbf" + CORPUS.replace("\n", "\r\n").encode("utf8"))
    [doc] = read_pubtator(path)
    assert doc.pmid == "1" and doc.title == "Type 2 diabetes and breast cancer."
    assert [m.text for m in doc.mentions] == ["Type 2 diabetes", "breast cancer"]
    assert not doc.offset_mismatches


# ------------------------------------------------------------------ writing

def test_atomic_file_permissions_follow_the_umask(tmp_path, umask_022):
    with atomic_file(tmp_path / "out.json") as fileh:
        fileh.write("{}")
    assert stat.S_IMODE((tmp_path / "out.json").stat().st_mode) == 0o644
    os.umask(0o077)
    with util_atomic_file(tmp_path / "private.json") as fileh:  # the old import still works
        fileh.write("{}")
    assert stat.S_IMODE((tmp_path / "private.json").stat().st_mode) == 0o600


def test_atomic_directory_permissions_follow_the_umask(tmp_path, umask_022):
    with atomic_directory(tmp_path / "model") as tmp:
        (tmp / "a.txt").write_text("x")
    assert stat.S_IMODE((tmp_path / "model").stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "model" / "a.txt").stat().st_mode) == 0o644


def test_saved_pipeline_permissions_follow_the_umask(tmp_path, tiny_medic_path, umask_022):
    result = invoke("init-linker", tmp_path / "model", "--dictionary", tiny_medic_path)
    assert result.exit_code == 0, result.output
    modes = {stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "model").rglob("*")}
    assert modes == {0o644, 0o755}


def test_atomic_file_leaves_nothing_on_error(tmp_path):
    (tmp_path / "out.txt").write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_file(tmp_path / "out.txt") as fileh:
            fileh.write("new")
            raise RuntimeError
    assert (tmp_path / "out.txt").read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_check_output_path(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    with pytest.raises(BioLinkError, match=r"E023.*a_file is a file, not a directory"):
        check_output_path(blocker / "deeper" / "out.json")
    with pytest.raises(BioLinkError, match=r"E021.*is a directory, but"):
        check_output_path(tmp_path)
    with pytest.raises(BioLinkError, match=r"E022.*is a file, but"):
        check_output_path(blocker, kind="dir")
    with pytest.raises(BioLinkError, match="E403"):
        check_output_path(tmp_path, kind="dir")
    assert check_output_path(tmp_path, kind="dir", force=True) == tmp_path
    assert check_output_path(tmp_path / "new" / "deeper" / "out.json")
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        with pytest.raises(BioLinkError, match=r"E020.*permission denied"):
            check_output_path(locked / "out.json")


# ------------------------------------------------------------------ commands

@pytest.fixture
def model(tmp_path, tiny_medic_path):
    result = invoke("init-linker", tmp_path / "model", "--dictionary", tiny_medic_path)
    assert result.exit_code == 0, result.output
    corpus = tmp_path / "corpus.PubTator"
    corpus.write_text(CORPUS, encoding="utf8")
    return tmp_path / "model", corpus


def test_unwritable_output_is_checked_before_the_work(model, tmp_path, monkeypatch):
    model_dir, corpus = model
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    import spacy_biolink.evaluation as evaluation

    def never(*args, **kwargs):
        raise AssertionError("evaluated before checking the output")

    monkeypatch.setattr(evaluation, "evaluate_gold_mentions", never)
    for flag in ("--output", "--errors"):
        result = invoke("evaluate", model_dir, corpus, flag, blocker / "m.json")
        assert result.exit_code == 1 and "E023" in result.output
    result = invoke("evaluate", model_dir, corpus, "--output", tmp_path)
    assert result.exit_code == 1 and "E021" in result.output


def test_evaluate_with_nothing_to_score(model, tmp_path):
    model_dir, corpus = model
    result = invoke("evaluate", model_dir, corpus, "--types", "Chemical", "--output",
                    tmp_path / "m.json")
    assert result.exit_code == 1 and "E461" in result.output
    assert "--types Chemical" in " ".join(result.output.split())
    assert not (tmp_path / "m.json").exists()


def test_pmids_file_with_a_bom(model, tmp_path):
    model_dir, corpus = model
    pmids = tmp_path / "pmids.txt"
    pmids.write_bytes(b"\xef\xbb\xbf1\r\n")
    result = invoke("evaluate", model_dir, corpus, "--pmids", pmids, "--output", tmp_path / "m.json")
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "m.json").read_text())["n_evaluated"] == 2


def test_train_vectors_refuses_an_existing_directory(tmp_path, tiny_medic_path):
    pytest.importorskip("gensim")
    precious = tmp_path / "thesis"
    precious.mkdir()
    (precious / "chapter1.tex").write_text("years of work")
    result = invoke("train-vectors", precious, "--dictionary", tiny_medic_path, "--dim", 4,
                    "--epochs", 1)
    assert result.exit_code == 1 and "E403" in result.output
    assert (precious / "chapter1.tex").read_text() == "years of work"
    result = invoke("train-vectors", precious, "--dictionary", tiny_medic_path, "--dim", 4,
                    "--epochs", 1, "--force")
    assert result.exit_code == 0, result.output
    assert (precious / "words.txt").is_file() and not (precious / "chapter1.tex").exists()


def test_train_refuses_an_existing_output(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("x")
    result = invoke("train", "configs/dan.cfg", "--output", out)
    assert result.exit_code == 1 and "E403" in result.output
    assert (out / "keep.txt").is_file()


def test_misspelled_override_names_the_valid_keys(tmp_path, tiny_medic_path):
    result = invoke("init-linker", tmp_path / "model", "--dictionary", tiny_medic_path,
                    "--components.bio_linker.tresh", "0.5")
    assert result.exit_code == 1
    assert "E460" in result.output
    assert "--components.bio_linker.threshold" in " ".join(result.output.split())
    assert not (tmp_path / "model").exists()
    result = invoke("train", "configs/dan.cfg", "--output", tmp_path / "t",
                    "--training.max_epoch", "3")
    assert result.exit_code == 1
    assert "E460" in result.output and "--training.max_epochs" in " ".join(result.output.split())
    result = invoke("train", "configs/dan.cfg", "--output", tmp_path / "t",
                    "--paths.dictonary", "x")
    assert result.exit_code == 1 and "--paths.dictionary" in " ".join(result.output.split())


def test_report_rejects_a_foreign_json(tmp_path):
    metrics = tmp_path / "m.json"
    metrics.write_text('{"lenient": {"acc@1": "high"}}')
    result = invoke("report", f"a={metrics}", "--output", tmp_path / "r.md")
    assert result.exit_code == 1 and "E462" in result.output


def test_leftovers_of_killed_runs_are_cleaned(tmp_path):
    import subprocess
    import sys

    from spacy_biolink.io.files import _temp_prefix

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    target = tmp_path / "model"
    mine = _temp_prefix(target)  # .model.HOST-PID.
    stale = tmp_path / (mine.replace(f"-{os.getpid()}.", f"-{dead.pid}.") + "abcd1234.tmp")
    stale.mkdir()
    (stale / "half_written").write_text("x")
    live = tmp_path / (mine + "live0000.tmp")  # this process: still writing
    live.mkdir()
    other = tmp_path / ".model.otherhost-1.abcd1234.tmp"  # another host: cannot tell
    other.mkdir()
    with atomic_directory(target) as tmp:
        (tmp / "a.txt").write_text("new")
    assert not stale.exists() and live.is_dir() and other.is_dir()
    assert (target / "a.txt").read_text() == "new"


def test_a_run_killed_between_the_two_renames_leaves_the_old_output(tmp_path):
    target = tmp_path / "model"
    backup = tmp_path / ".model.old"  # atomic_directory had moved the old one aside
    backup.mkdir()
    (backup / "a.txt").write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_directory(target):
            raise RuntimeError
    assert (target / "a.txt").read_text() == "old" and not backup.exists()


def test_unreadable_input_and_unwritable_output_as_any_user(tmp_path, monkeypatch):
    """Permission errors, also where the tests run as root (who may read and write
    anything): os.access is what files.py asks."""
    path = tmp_path / "medic.txt"
    path.write_text(TINY_MEDIC)
    monkeypatch.setattr(os, "access", lambda *args, **kwargs: False)
    with pytest.raises(BioLinkError, match=r"E012.*medic.txt: permission denied"):
        load_dictionary(path)
    with pytest.raises(BioLinkError, match=r"E020.*permission denied.*make .* writable"):
        check_output_path(tmp_path / "out.json")


def test_json_is_written_with_every_digit(tmp_path):
    """What the models write (temperatures, Platt weights, thresholds, numpy figures in
    meta.json) is read back as the same numbers; srsly's writer keeps about ten digits."""
    import numpy
    import srsly

    values = {"temperature": 1.1051709181828183, "tiny": 1e-300, "third": 0.1 + 0.2,
              "float32": numpy.float32(0.1), "counts": numpy.arange(3), "int": numpy.int64(7)}
    assert srsly.json_loads(srsly.json_dumps(values["temperature"])) != values["temperature"]
    write_json(tmp_path / "values.json", values, indent=2)
    back = read_json(tmp_path / "values.json", type=dict)
    assert back == {"temperature": 1.1051709181828183, "tiny": 1e-300, "third": 0.1 + 0.2,
                    "float32": float(numpy.float32(0.1)), "counts": [0, 1, 2], "int": 7}
    assert json.loads(json_text(values)) == back
    with pytest.raises(TypeError, match="set is not JSON serializable"):
        json_text({"bad": {1}})
