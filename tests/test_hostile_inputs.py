"""Inputs that would hang, blow up memory, or be read silently wrong. Each test fails on
the code before the fix; sizes are small but still show the bound (a timing with a
generous limit, or memory measured with tracemalloc)."""
import gzip
import os
import subprocess
import sys
import textwrap
import time
import tracemalloc
import warnings
from pathlib import Path

import pytest

from spacy_biolink import load_dictionary
from spacy_biolink.errors import BioLinkError

import spacy_biolink  # noqa: E402

# Where the spacy_biolink under test lives, for subprocesses to import the same one.
ROOT = Path(spacy_biolink.__file__).resolve().parents[1]


# ------------------------------------------------------------ hangs and blow-ups

def test_many_lines_sharing_one_name_load_in_linear_time(tmp_path):
    # A name shared by every concept was checked against a list of its owners per line:
    # 50,000 lines took 14 s (quadratic); linear, they take well under a second.
    path = tmp_path / "same.txt"
    path.write_text("".join(f"D{i:06d}||colon cancer\n" for i in range(50_000)))
    started = time.perf_counter()
    dictionary = load_dictionary(path)
    assert time.perf_counter() - started < 6
    assert dictionary.n_names == 1 and dictionary.n_concepts == 50_000
    assert len(dictionary.concepts_of_name(0)) == 50_000


def test_one_concept_with_many_alternative_ids_loads_in_linear_time(tmp_path):
    path = tmp_path / "ids.txt"
    path.write_text("".join(f"D000001|ALT{i}||colon cancer\n" for i in range(50_000)))
    started = time.perf_counter()
    dictionary = load_dictionary(path)
    assert time.perf_counter() - started < 6
    assert len(dictionary.ids_of(0)) == 50_001


def test_a_repeated_line_is_not_stored_again(tmp_path, monkeypatch):
    # One line repeated (a gzip of a few KB inflating to GBs) kept a canonical name and an
    # id per line; now memory does not grow with the number of repeats. Small blocks, so
    # that both sizes span many and the block buffers weigh the same.
    from spacy_biolink.io import files

    monkeypatch.setattr(files, "_BLOCK_SIZE", 1 << 14)
    # Such a file inflates about 250-fold, over the cap (E026): raised as a user would.
    monkeypatch.setenv("SPACY_BIOLINK_MAX_GZIP_RATIO", "100000")

    def peak(repeats: int) -> int:
        path = tmp_path / f"rep{repeats}.txt.gz"
        with gzip.open(path, "wb") as fileh:
            fileh.write(b"D000001||colon cancer|bowel cancer\n" * repeats)
        tracemalloc.start()
        try:
            dictionary = load_dictionary(path)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
            assert dictionary.n_concepts == 1 and dictionary.canonical_name(0) == "colon cancer"

    small, large = peak(10_000), peak(40_000)
    assert large - small < 1_000_000, (small, large)


@pytest.mark.parametrize("compress", [False, True])
def test_a_line_without_end_is_refused_with_file_and_line(tmp_path, compress, monkeypatch):
    # 6 MiB of "x" gzips 1000-fold, over the inflation cap (E026): raised, to reach E950.
    monkeypatch.setenv("SPACY_BIOLINK_MAX_GZIP_RATIO", "100000")
    path = tmp_path / ("bomb.txt.gz" if compress else "bomb.txt")
    opener = gzip.open if compress else open
    with opener(path, "wb") as fileh:
        fileh.write(b"D1||flu\nD2||a")
        for _ in range(6):
            fileh.write(b"x" * (1 << 20))  # 6 MiB, over the 4 MiB limit, and no newline
    with pytest.raises(BioLinkError, match=r"E950.*bomb\.txt(\.gz)?:2:.*4 MiB"):
        load_dictionary(path)


def test_a_gzip_bomb_of_blank_lines_fails_within_seconds(tmp_path):
    # Issue 59: 1 MiB of gzip inflating to 1 GiB of blank lines kept init-linker busy for
    # minutes. Here 128 MiB (128 KiB of gzip): the code before read all 128M lines (~50 s).
    path = tmp_path / "bomb.txt.gz"
    with gzip.open(path, "wb") as fileh:
        for _ in range(16):
            fileh.write(b"\n" * (8 << 20))
    env = {k: v for k, v in os.environ.items() if k != "SPACY_BIOLINK_MAX_GZIP_RATIO"}
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "spacy_biolink", "init-linker",
                             str(tmp_path / "out"), "-d", str(path), "--format", "medic"],
                            capture_output=True, text=True, timeout=60, cwd=ROOT, env=env)
    assert time.perf_counter() - started < 20
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "E026" in output and "bomb.txt.gz" in output, output
    assert "SPACY_BIOLINK_MAX_GZIP_RATIO" in output
    assert not (tmp_path / "out").exists()


def test_the_gzip_inflation_cap_is_set_by_an_environment_variable(tmp_path, monkeypatch):
    from spacy_biolink.io.files import iter_lines

    path = tmp_path / "dict.txt.gz"
    with gzip.open(path, "wb") as fileh:
        fileh.write(b"D1||flu\n" * (300_000))  # 2.4 MiB, gzipped about 300-fold
    with pytest.raises(BioLinkError, match=r"E026.*dict\.txt\.gz.*more than 100x"):
        load_dictionary(path, "medic")
    monkeypatch.setenv("SPACY_BIOLINK_MAX_GZIP_RATIO", "5000")
    assert sum(1 for _ in iter_lines(path)) == 300_000
    monkeypatch.setenv("SPACY_BIOLINK_MAX_GZIP_RATIO", "lots")
    with pytest.raises(BioLinkError, match="E027.*SPACY_BIOLINK_MAX_GZIP_RATIO='lots'"):
        load_dictionary(path, "medic")


def test_iter_lines_limit_counts_lines_spanning_blocks(tmp_path, monkeypatch):
    from spacy_biolink.io import files

    monkeypatch.setattr(files, "_BLOCK_SIZE", 8)
    path = tmp_path / "lines.txt"
    path.write_bytes(b"short\n" + b"y" * 40 + b"\nend\n")
    assert [t for _, t in files.iter_lines(path, max_line_bytes=40)][-1] == "end"
    with pytest.raises(BioLinkError, match=r"E950.*lines\.txt:2:"):
        list(files.iter_lines(path, max_line_bytes=39))


FIFO_SCRIPT = textwrap.dedent("""
    import os, sys, threading
    from spacy_biolink import load_dictionary
    from spacy_biolink.errors import BioLinkError
    fifo, data, fmt = sys.argv[1], sys.argv[2].encode(), sys.argv[3] or None
    def write():
        with open(fifo, "wb") as fileh:
            fileh.write(data)
    threading.Thread(target=write, daemon=True).start()
    try:
        print(load_dictionary(fifo, fmt).n_concepts)
    except BioLinkError as err:
        print(err)
""")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
@pytest.mark.parametrize("fmt,data,expected", [
    ("", "D1||colon cancer\nD2||flu\n", "2"),
    ("medic", "D1||colon cancer\nD2||flu\n", "2"),
    ("medic", "D1||flu\nD1|colon\n", "medic.fifo:2:"),  # an error names the pipe
])
def test_a_fifo_dictionary_is_read_once(tmp_path, fmt, data, expected):
    # `-d <(zcat medic.gz)`: sniffing opened the pipe, then the reader opened it again and
    # waited for a writer that was gone (a hang). Run apart, so a hang fails the test.
    fifo = tmp_path / "medic.fifo"
    os.mkfifo(fifo)
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    try:
        done = subprocess.run([sys.executable, "-c", FIFO_SCRIPT, str(fifo), data, fmt],
                              capture_output=True, text=True, timeout=60, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail("reading a FIFO dictionary hung")
    assert done.returncode == 0, done.stderr
    assert expected in done.stdout
    assert "spacy-biolink-" not in done.stdout  # not the temporary copy's path


def test_abbreviation_detection_is_bounded_in_the_number_of_parentheses():
    # 20,000 "(WDn)" groups took minutes (each definition re-read the text before it and
    # was resolved against every other); now a doc past the limit is skipped with W950,
    # said once, and one under it is fast.
    import spacy

    from spacy_biolink.text.abbreviations import MAX_PARENTHESES, AbbreviationResolver

    nlp = spacy.blank("en")
    resolver = AbbreviationResolver(nlp.vocab)
    under = nlp(" ".join(f"word{i} disease{i} (WD{i})." for i in range(MAX_PARENTHESES)))
    started = time.perf_counter()
    found = resolver.long_forms(under)
    assert time.perf_counter() - started < 5
    assert found["WD7"] == "word7 disease7" and len(found) == MAX_PARENTHESES
    over = nlp(" ".join(f"word{i} disease{i} (WD{i})." for i in range(20_000)))
    started = time.perf_counter()
    with pytest.warns(UserWarning, match="W950"):
        assert resolver.long_forms(over) == {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once
        assert resolver.long_forms(over) == {}
    assert time.perf_counter() - started < 5
    # The resolver still works on ordinary docs afterwards.
    assert resolver.long_forms(nlp("Wilson disease (WD) is rare.")) == {"WD": "Wilson disease"}


def test_tokenizing_a_long_nested_parenthesis_is_bounded(monkeypatch):
    import spacy

    from spacy_biolink.text import tokenize

    monkeypatch.setattr(tokenize, "_warned", False)
    nlp = spacy.blank("en")
    entity = "(" * 20_000 + "x" + ")" * 20_000  # 40 KB: minutes in spaCy's tokenizer
    text = f"A  {entity}  b. Colon cancer (CC) here.\n"
    started = time.perf_counter()
    with pytest.warns(UserWarning, match="W951"):
        doc = tokenize.make_doc(nlp, text)
    assert time.perf_counter() - started < 5
    assert doc.text == text
    start = text.index("x")
    assert doc.char_span(start, start + 1).text == "x"
    assert [t.text for t in doc[-8:-1]] == ["Colon", "cancer", "(", "CC", ")", "here", "."]
    # Ordinary text is spaCy's tokenization, unchanged.
    plain = "Breast-cancer (BC) risk ((x)) rose."
    assert [t.text for t in tokenize.make_doc(nlp, plain)] == [t.text for t in nlp.make_doc(plain)]


def test_link_input_with_a_long_entity_is_tokenized_in_bounded_time(tmp_path):
    import json

    import spacy

    from spacy_biolink.runners.local import make_input_doc, read_input_documents

    entity = "(" * 20_000 + "x" + ")" * 20_000
    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps({"text": f"a {entity} b", "entities": [[2, 2 + len(entity), "D"]]}))
    (document,) = read_input_documents(path)
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # W951, tested above
        doc = make_input_doc(spacy.blank("en"), document, path)
    assert time.perf_counter() - started < 5
    assert doc.ents[0].text == entity


# ------------------------------------------------------------ silently wrong

@pytest.mark.parametrize("entities", [[[False, True, "Disease"]], [[0, True, "Disease"]],
                                      [{"start": False, "end": 3, "label": "Disease"}]])
def test_boolean_offsets_in_link_jsonl_are_refused(tmp_path, entities):
    import json

    from spacy_biolink.runners.local import read_input_documents

    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps({"text": "ok"}) + "\n"
                    + json.dumps({"text": "flu and cancer", "entities": entities}) + "\n")
    with pytest.raises(BioLinkError, match=r"docs\.jsonl:2.*true/false"):
        list(read_input_documents(path))


@pytest.mark.parametrize("text,line", [("D000001\tCalcimycin\nD000002\tTemefos\n", 1),
                                       ("MESH:D000001\tCalcimycin\n", 1),
                                       ("id\tname\n613097\tTooth agenesis\n", 2)])
def test_an_id_first_tsv_is_refused(tmp_path, text, line):
    path = tmp_path / "ids.tsv"
    path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the "id<TAB>name" header's W952
        with pytest.raises(BioLinkError, match=rf"E951.*ids\.tsv:{line}:.*Swap"):
            load_dictionary(path, "tsv")
        with pytest.raises(BioLinkError, match="E951"):
            load_dictionary(path)  # the format inferred


def test_a_tsv_header_line_is_skipped_with_a_note(tmp_path):
    path = tmp_path / "names.tsv"
    path.write_text("Name\tID\nCalcimycin\tD000001\nHD\tD006816|OMIM:143100\n")
    with pytest.warns(UserWarning, match=r"W952.*names\.tsv:1"):
        dictionary = load_dictionary(path)
    assert sorted(dictionary.names) == ["Calcimycin", "HD"]
    assert dictionary.concept_index("ID") is None


def test_a_name_first_tsv_is_read_as_before(tmp_path):
    path = tmp_path / "names.tsv"
    path.write_text("Calcimycin\tD000001\n613097\tOMIM:613097\nIL2\tD007376\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dictionary = load_dictionary(path)
    assert dictionary.n_concepts == 3


@pytest.mark.parametrize("nil_id", ["", "   "])
def test_an_empty_nil_id_is_refused(nil_id):
    import spacy

    nlp = spacy.blank("en")
    with pytest.raises(BioLinkError, match="E952"):
        nlp.add_pipe("bio_linker", config={"nil_id": nil_id})


def test_add_names_with_an_empty_name_is_refused(tiny_dictionary):
    from tests.conftest import make_linker_nlp

    linker = make_linker_nlp(tiny_dictionary).get_pipe("bio_linker")
    n_names = linker.dictionary.n_names
    for pairs in ([("", "D003924")], [("  ", "D003924")], [("ok", "D003924"), ("\t", "D006816")]):
        with pytest.raises(BioLinkError, match="E953"):
            linker.add_names(pairs)
    assert linker.dictionary.n_names == n_names
    assert linker.add_names([("sugar disease", "D003924")]) == 1


def test_a_type_filter_naming_no_dictionary_type_warns_at_initialize_and_load(tmp_path):
    import spacy

    path = tmp_path / "typed.tsv"
    path.write_text("flu\tD007251\tT047\ncolon cancer\tD003110\tT191\n")
    dictionary = load_dictionary(path)
    nlp = spacy.blank("en")
    nlp.add_pipe("bio_linker", config={"type_filter": {"Chemical": ["T196"]}})
    with pytest.warns(UserWarning, match="W020.*Chemical"):
        nlp.get_pipe("bio_linker").initialize(dictionary=dictionary)
    nlp.to_disk(tmp_path / "model")
    with pytest.warns(UserWarning, match="W020.*Chemical"):
        spacy.load(tmp_path / "model")


def test_an_unknown_verifier_mode_is_refused_before_any_work(tmp_path):
    from spacy_biolink.linker.pipeline import init_linker

    with pytest.raises(BioLinkError, match=r"E704.*'maybe'.*nil, next"):
        # The dictionary does not exist: the mode is checked first.
        init_linker(tmp_path / "out", tmp_path / "missing.txt", verifier_mode="maybe")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("content,pmids", [("", None), ("\n\n", None),
                                           ("1|t|Flu.\n1|a|x\n1\t0\t3\tFlu\tDisease\tD007251\n\n",
                                            {"2"})])
def test_convert_of_an_empty_corpus_is_refused(tmp_path, content, pmids):
    from spacy_biolink.corpora.docbin import convert_pubtator

    corpus = tmp_path / "corpus.txt"
    corpus.write_text(content)
    with pytest.raises(BioLinkError, match=r"E954.*corpus\.txt"):
        convert_pubtator(corpus, tmp_path / "out.spacy", pmids=pmids)
    assert not (tmp_path / "out.spacy").exists()


def test_convert_cli_of_an_empty_corpus_exits_nonzero(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("")
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    result = subprocess.run([sys.executable, "-m", "spacy_biolink", "convert", str(corpus),
                             str(tmp_path / "out.spacy")], capture_output=True, text=True,
                            timeout=120, env=env)
    assert result.returncode != 0
    assert "E954" in result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out.spacy").exists()


BAD_MEDIC = "D1||flu\nD2||bad\u0085name\nD3|x\nD4||colon cancer\nD5||\ufeffbom\n"


def test_e016_advice_removes_c1_control_characters(tmp_path):
    import re
    import shutil

    path = tmp_path / "dict.txt"
    path.write_text(BAD_MEDIC.replace("D3|x", "D3||x"), encoding="utf8")
    with pytest.raises(BioLinkError, match="E016") as caught:
        load_dictionary(path)
    assert "--on-bad-line skip" in str(caught.value)
    if shutil.which("perl") is None:
        pytest.skip("no perl to run the advice with")
    command = re.search(r"`(perl .*?)`", str(caught.value)).group(1)
    subprocess.run(command, shell=True, check=True, cwd=tmp_path)
    cleaned = load_dictionary(Path(f"{path}.clean"))
    assert "badname" in cleaned.names and cleaned.n_concepts == 5


@pytest.mark.parametrize("fmt,text,n_bad", [
    ("medic", BAD_MEDIC, 3),
    ("tsv", "flu\tD1\nbad\u0085\tD2\nnothing\nok\tD3\n", 2),
    ("jsonl", '{"concept_id": "D1", "canonical_name": "flu"}\n{"concept_id": 1.5}\n'
              '{"concept_id": "D2", "canonical_name": "a\\u0085b"}\n[' * 1 + "\n", 3),
    ("ctd", "# Fields:\n# DiseaseName\tDiseaseID\nflu\tMESH:D1\n\tMESH:D2\nx\u0086\tMESH:D3\n", 2),
])
def test_on_bad_line_skip_counts_and_names_the_skipped_lines(tmp_path, fmt, text, n_bad):
    path = tmp_path / f"dict.{fmt}"
    path.write_text(text, encoding="utf8")
    with pytest.raises(BioLinkError, match=rf"dict\.{fmt}:\d+"):
        load_dictionary(path, fmt)  # strict stays the default
    with pytest.warns(UserWarning, match=rf"W953.*Skipped {n_bad} bad line\(s\).*line \d+") as caught:
        dictionary = load_dictionary(path, fmt, on_bad_line="skip")
    assert dictionary.n_concepts >= 1
    assert len([w for w in caught if "W953" in str(w.message)]) == 1


def test_on_bad_line_names_the_first_five_of_many(tmp_path):
    path = tmp_path / "dict.txt"
    path.write_text("D0||ok\n" + "".join(f"D{i}|x{i}\n" for i in range(1, 40)))
    with pytest.warns(UserWarning, match="W953") as caught:
        load_dictionary(path, "medic", on_bad_line="skip")
    message = str(caught[0].message)
    import re

    assert "Skipped 39 bad" in message and len(re.findall(r"line \d+: ", message)) == 5


def test_on_bad_line_values_and_formats_are_checked(tmp_path):
    path = tmp_path / "dict.txt"
    path.write_text("D1||flu\n")
    with pytest.raises(BioLinkError, match="E955.*maybe"):
        load_dictionary(path, on_bad_line="maybe")
    obo = tmp_path / "x.obo"
    obo.write_text("format-version: 1.4\n\n[Term]\nid: X:1\nname: flu\n")
    with pytest.raises(BioLinkError, match="E955.*obo"):
        load_dictionary(obo, on_bad_line="skip")


def test_loader_v3_has_on_bad_line_and_v2_is_unchanged(tmp_path):
    import inspect

    import spacy
    from spacy.util import registry

    path = tmp_path / "dict.txt"
    path.write_text(BAD_MEDIC)
    v2 = registry.misc.get("spacy-biolink.load_dictionary.v2")
    assert "on_bad_line" not in inspect.signature(v2).parameters
    v3 = registry.misc.get("spacy-biolink.load_dictionary.v3")
    with pytest.raises(BioLinkError, match="E955"):
        v3(path=str(path), on_bad_line="sometimes")
    with pytest.warns(UserWarning, match="W953"):
        assert v3(path=str(path), on_bad_line="skip")().n_concepts == 2
    nlp = spacy.blank("en")
    nlp.add_pipe("bio_linker")
    nlp.config["initialize"]["components"]["bio_linker"] = {"dictionary": {
        "@misc": "spacy-biolink.load_dictionary.v3", "path": str(path), "on_bad_line": "skip"}}
    with pytest.warns(UserWarning, match="W953"):
        nlp.initialize()
    assert nlp.get_pipe("bio_linker").dictionary.n_concepts == 2


def test_init_linker_on_bad_line_skip_writes_it_into_the_dictionary_loader(tmp_path):
    from spacy_biolink.linker.pipeline import init_linker

    path = tmp_path / "dict.txt"
    path.write_text(BAD_MEDIC)
    with pytest.raises(BioLinkError, match="E955"):
        init_linker(tmp_path / "never", path, on_bad_line="sometimes")
    with pytest.warns(UserWarning, match="W953"):
        nlp = init_linker(tmp_path / "model", path, on_bad_line="skip")
    assert nlp.get_pipe("bio_linker").dictionary.n_concepts == 2
    config = (tmp_path / "model" / "config.cfg").read_text()
    assert "spacy-biolink.load_dictionary.v4" in config and 'on_bad_line = "skip"' in config


def test_overlapping_gold_mentions_are_evaluated_with_a_warning(tmp_path, tiny_dictionary):
    # Issue 59: two gold mentions sharing characters were both evaluated, with no word.
    from spacy_biolink.evaluation import evaluate_gold_mentions
    from tests.conftest import make_linker_nlp

    nlp = make_linker_nlp(tiny_dictionary)
    one_doc = "2|t|Huntington Disease.\n2|a|\n2\t0\t18\tHuntington Disease\tDisease\tD006816\n"
    corpus = tmp_path / "gold.txt"
    corpus.write_text("1|t|Type 2 diabetes and breast cancer.\n1|a|None.\n"
                      "1\t0\t15\tType 2 diabetes\tDisease\tD003924\n"
                      "1\t7\t15\tdiabetes\tDisease\tD003924\n"
                      "1\t20\t33\tbreast cancer\tDisease\tD001943\n"
                      "1\t20\t26\tbreast\tDisease\tD001943\n\n"
                      + one_doc)
    with pytest.warns(UserWarning, match=r"W312\] 2 pair\(s\).*gold\.txt:3 'Type 2 diabetes' at "
                                         r"0-15 and .*gold\.txt:4 'diabetes' at 7-15"):
        result = evaluate_gold_mentions(nlp, corpus)
    assert result["n_evaluated"] == 5  # evaluated as before: each one a query
    corpus.write_text(one_doc)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        evaluate_gold_mentions(nlp, corpus)


# ------------------------------------------------------------ installs

@pytest.fixture
def ray_data_broken(monkeypatch):
    """`import ray.data` failing as it does with numpy < 2 beside a pandas built for 2,
    with `ray` itself found."""
    import builtins
    import importlib.util
    import types

    real_import, real_find_spec = builtins.__import__, importlib.util.find_spec

    def fake_import(name, *args, **kwargs):
        if name == "ray.data" or name.startswith("ray.data."):
            raise ImportError("numpy.core.multiarray failed to import (pandas was built "
                              "against numpy 2)")
        if name == "ray":
            return types.ModuleType("ray")
        return real_import(name, *args, **kwargs)

    def fake_find_spec(name, *args, **kwargs):
        if name == "ray":
            return importlib.machinery.ModuleSpec("ray", None)
        return real_find_spec(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    monkeypatch.setattr(importlib.util, "find_spec", fake_find_spec)


def test_ray_data_that_fails_to_import_is_a_conflict_not_a_missing_extra(ray_data_broken):
    from spacy_biolink.runners.distributed import import_ray_data, ray_data_problem

    problem = ray_data_problem()
    assert problem is not None and "E956" in problem and "E800" not in problem
    assert "numpy.core.multiarray failed to import" in problem and "numpy 2." in problem
    with pytest.raises(BioLinkError, match="E956.*pip check"):
        import_ray_data()


def test_ray_tests_skip_with_the_reason_when_ray_data_is_broken(ray_data_broken, monkeypatch):
    # test_distributed's guard: it asked only whether `ray` exists, so the Ray tests ran
    # and failed with E800 instead of skipping.
    import importlib

    import tests.test_distributed as module

    try:
        marker = importlib.reload(module).needs_ray
        assert marker.args[0] is True and "E956" in marker.kwargs["reason"]
    finally:
        monkeypatch.undo()
        importlib.reload(module)  # the module as the real environment makes it


def test_link_engine_ray_says_what_conflicts(ray_data_broken, tmp_path, tiny_dictionary):
    from typer.testing import CliRunner

    from spacy_biolink.cli import app
    from tests.conftest import make_linker_nlp

    nlp = make_linker_nlp(tiny_dictionary)
    ruler = nlp.add_pipe("entity_ruler", before="bio_linker")
    ruler.add_patterns([{"label": "Disease", "pattern": "breast cancer"}])
    nlp.to_disk(tmp_path / "model")
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "part-0.jsonl").write_text('{"id": "a", "text": "breast cancer"}\n')
    result = CliRunner().invoke(app, ["link", str(inputs), "--model", str(tmp_path / "model"),
                                      "--output", str(tmp_path / "out"), "--engine", "ray"])
    assert result.exit_code == 1, result.output
    assert "E956" in result.output and "not installed" not in result.output.split("Installed")[0]


# ------------------------------------------------------------ fuzzing (hypothesis)
# test_reader_properties.py fuzzes each reader with arbitrary bytes and well-formed
# files; these add line-shaped input built from each format's own pieces (so that it
# gets past the first check), both on_bad_line settings, and the `link` JSONL input,
# and require more of an error: it names the file, and a line's error its line.

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])
PIECES = ["||", "|", "\t", "D000001", "MESH:D003924", "OMIM:613097", "C0011860", "name",
          "id", "colon cancer", "#", "# Fields:", "# DiseaseName\tDiseaseID", "{", "}",
          '"concept_id": "D1"', '"canonical_name": "flu"', '"aliases": ["x"]', ",", ":",
          "[", "]", "\u0085", "\x00", "\ufeff", "\r", " ", "\u00e9", "\U0001f600", "1", "true"]
LINES = st.lists(st.lists(st.sampled_from(PIECES), max_size=8).map("".join), max_size=8)
LINE_ERRORS = ("E001", "E006", "E013", "E016", "E950", "E951")


def check_error(err: BioLinkError, path: Path) -> None:
    message = str(err)
    assert path.name in message, message
    if message[1:5] in LINE_ERRORS:
        assert re_search(rf"{path.name}:\d+", message), message


def re_search(pattern: str, text: str):
    import re

    return re.search(pattern, text)


@FUZZ
@given(lines=LINES, fmt=st.sampled_from(["medic", "biosyn", "ctd", "tsv", "jsonl", None]),
       on_bad_line=st.sampled_from(["error", "skip"]), compress=st.booleans())
def test_fuzz_dictionary_readers_give_a_result_or_an_error_naming_file_and_line(
        tmp_path, lines, fmt, on_bad_line, compress):
    path = tmp_path / ("fuzz.txt.gz" if compress else "fuzz.txt")
    data = "\n".join(lines).encode("utf8")
    path.write_bytes(gzip.compress(data) if compress else data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            dictionary = load_dictionary(path, fmt, on_bad_line=on_bad_line)
        except BioLinkError as err:
            check_error(err, path)
            if on_bad_line == "skip":  # skipping leaves no malformed-line error
                assert str(err)[1:5] not in ("E001", "E016"), str(err)
            return
    assert dictionary.n_names >= 1


@FUZZ
@given(data=st.binary(max_size=300), fmt=st.sampled_from(["umls", "obo"]))
def test_fuzz_umls_and_obo_readers_give_a_result_or_an_error_naming_the_file(tmp_path, data, fmt):
    path = tmp_path / ("MRCONSO.RRF" if fmt == "umls" else "fuzz.obo")
    path.write_bytes(data)
    try:
        load_dictionary(path, fmt)
    except BioLinkError as err:
        check_error(err, path)


JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 40) | st.floats(allow_nan=True)
                    | st.text(max_size=12),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.sampled_from(["text", "entities", "start", "end",
                                                       "label", "id"]), inner, max_size=4),
                    max_leaves=12)
RECORDS = st.fixed_dictionaries({"text": st.text(max_size=40) | JSON},
                                optional={"entities": JSON | st.lists(
                                    st.tuples(st.integers(-2, 45) | st.booleans(),
                                              st.integers(-2, 45) | st.booleans(),
                                              st.sampled_from(["Disease", ""]) | JSON),
                                    max_size=3), "id": JSON}) | JSON


@FUZZ
@given(records=st.lists(RECORDS, max_size=4), garbage=st.sampled_from(["", "{", "[1,", "\x00",
                                                                       "\"text\"", "{}"]))
def test_fuzz_link_jsonl_input_gives_docs_or_an_error_naming_file_and_line(
        tmp_path, records, garbage):
    import json

    import spacy

    from spacy_biolink.runners.local import make_input_doc, read_input_documents

    path = tmp_path / "docs.jsonl"
    lines = [json.dumps(r) for r in records] + [garbage]
    path.write_text("\n".join(lines) + "\n", encoding="utf8")
    nlp = spacy.blank("en")
    try:
        for document in read_input_documents(path):
            # Offsets are ints, never bools taken as 0 and 1.
            assert all(type(s) is int and type(e) is int for s, e, _ in document.entities or [])
            doc = make_input_doc(nlp, document, path)
            assert doc.text == document.text
            for ent in doc.ents:
                assert 0 <= ent.start_char < ent.end_char <= len(doc.text)
    except BioLinkError as err:
        assert re_search(r"docs\.jsonl:\d+", str(err)), str(err)
