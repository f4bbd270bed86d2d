"""Nothing lost, no traceback: outputs, saves, interrupts and misuse.

- An output that is one of the command's inputs, and --force on a directory holding them,
  are refused before any work (every command, through cli/app.py's fail_cleanly).
- save_pipeline replaces a saved pipeline so that a kill at any of its filesystem steps
  leaves the old pipeline or the new one, loadable and linking.
- Ctrl-C, a document past nlp.max_length, damaged spaCy-owned files of a saved pipeline,
  config edits and misuse of the pipe from Python give coded errors.
"""
import os
import re
import shutil
import signal
import time
import warnings
from pathlib import Path

import pytest
import spacy
import typer
from typer.testing import CliRunner

from spacy_biolink import save_pipeline
from spacy_biolink.cli import app
from spacy_biolink.errors import BioLinkError
from spacy_biolink.io import files
from spacy_biolink.kb.readers import load_dictionary
from spacy_biolink.linker.pipeline import load_linker_pipeline

from .conftest import TINY_MEDIC, doc_with_ents, make_linker_nlp

COMMANDS = typer.main.get_command(app).commands
runner = CliRunner()
EXTRA = "D009369||Neoplasms|tumor|cancer\n"  # the concept only the new pipeline has


def invoke(args, code=None):
    result = runner.invoke(app, [str(a) for a in args])
    raw = result.exception is not None and not isinstance(result.exception, SystemExit)
    assert not raw, f"{args}: raw {result.exception!r}"
    assert "Traceback" not in result.output, result.output
    if code is not None:
        assert f"[{code}]" in result.output, result.output
        assert result.exit_code != 0
    return result


def tiny_nlp(tmp_path, text=TINY_MEDIC, name="dict.txt"):
    path = tmp_path / name
    path.write_text(text, encoding="utf8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make_linker_nlp(load_dictionary(path))


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory):
    """A tiny saved pipeline (blank English + bio_linker), shared read-only."""
    tmp = tmp_path_factory.mktemp("model")
    return save_pipeline(tiny_nlp(tmp), tmp / "model")


# ---------------------------------------------------------------- data loss

def _output_params(command):
    return [p for p in command.params if p.name in ("output", "output_dir", "output_path")]


@pytest.mark.parametrize("name", sorted(n for n, c in COMMANDS.items() if _output_params(c)))
def test_every_command_refuses_an_output_that_is_its_input(name, tmp_path):
    """The input given as the output: E030 before any work, the input unchanged."""
    command = COMMANDS[name]
    victim = tmp_path / "input.txt"
    victim.write_text("precious\n", encoding="utf8")
    args, options = [], []
    for param in command.params:
        if param.name in ("output", "output_dir", "output_path"):
            value = victim
        elif param.name == "metrics":
            value = f"a={victim}"
        else:
            value = victim
        if param.param_type_name == "argument" and param.required:
            args.append(value)
        elif param.param_type_name == "option" and (param.required or param.name == "output"):
            options += [param.opts[0], value]
    given = [p for p in command.params if not _output_params_named(p) and (
        (p.param_type_name == "argument" and p.required) or
        (p.param_type_name == "option" and p.required))]
    if not given:  # its inputs are all optional: give one
        first = next(p for p in command.params if p.name in ("dictionary", "corpus"))
        options += [first.opts[0], victim]
    invoke([name, *args, *options], "E030")
    assert victim.read_text(encoding="utf8") == "precious\n"


def _output_params_named(param):
    return param.name in ("output", "output_dir", "output_path")


def test_link_refuses_to_replace_a_read_only_output_without_force(saved_model, tmp_path):
    # Issue 59: a 0444 output was replaced, exit 0 (root may write it: the mode decides).
    docs = tmp_path / "docs.txt"
    docs.write_text("Type 2 diabetes.\n", encoding="utf8")
    output = tmp_path / "ro.jsonl"
    output.write_text("kept\n", encoding="utf8")
    output.chmod(0o444)
    result = invoke(["link", docs, "-m", saved_model, "-o", output], "E035")
    assert "ro.jsonl is read-only (mode 444)" in " ".join(result.output.split())
    assert "--force" in result.output
    assert output.read_text(encoding="utf8") == "kept\n"
    result = invoke(["link", docs, "-m", saved_model, "-o", output, "--force"])
    assert result.exit_code == 0, result.output
    assert output.read_text(encoding="utf8").startswith("{")
    # Other file outputs refuse it too, without offering a --force they do not have.
    output.chmod(0o444)
    with pytest.raises(BioLinkError, match=r"E035.*chmod u\+w") as err:
        files.check_output_path(output, what="the metrics")
    assert "--force" not in str(err.value)


def test_link_evaluate_visualize_refuse_their_input_as_output(saved_model, tmp_path):
    docs = tmp_path / "docs.txt"
    docs.write_text("Type 2 diabetes.\n", encoding="utf8")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("1|t|Type 2 diabetes\n1\t0\t15\tType 2 diabetes\tDisease\tD003924\n\n",
                      encoding="utf8")
    before = {p: p.read_bytes() for p in (docs, corpus)}
    invoke(["link", docs, "-m", saved_model, "-o", docs], "E030")
    invoke(["evaluate", saved_model, corpus, "--output", corpus], "E030")
    invoke(["evaluate", saved_model, corpus, "--errors", corpus], "E030")
    invoke(["visualize", saved_model, docs, "-o", docs], "E030")
    invoke(["convert", corpus, corpus], "E030")
    # the same file under another name: a symlink and a hard link
    (tmp_path / "link.txt").symlink_to(docs)
    os.link(docs, tmp_path / "hard.txt")
    invoke(["link", docs, "-m", saved_model, "-o", tmp_path / "link.txt"], "E030")
    invoke(["link", docs, "-m", saved_model, "-o", tmp_path / "hard.txt"], "E030")
    # a file of the model directory the command reads
    config = (saved_model / "config.cfg").read_bytes()
    invoke(["link", docs, "-m", saved_model, "-o", saved_model / "config.cfg"], "E030")
    assert (saved_model / "config.cfg").read_bytes() == config
    assert {p: p.read_bytes() for p in before} == before
    # two outputs on one file
    invoke(["evaluate", saved_model, corpus, "--output", tmp_path / "m.json",
            "--errors", tmp_path / "m.json"], "E033")


def test_train_force_refuses_a_directory_holding_its_config_or_data(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "dict.txt").write_text(TINY_MEDIC, encoding="utf8")
    (data / "x.cfg").write_text("[paths]\ndictionary = null\n", encoding="utf8")
    invoke(["train", data / "x.cfg", "-o", data, "--force",
            "--paths.dictionary", data / "dict.txt"], "E031")
    outside = tmp_path / "x.cfg"
    outside.write_text(f"[paths]\ndictionary = \"{data / 'dict.txt'}\"\n", encoding="utf8")
    invoke(["train", outside, "-o", data, "--force"], "E031")  # named in the config
    invoke(["train", outside, "-o", data, "--force",
            f"--paths.dictionary={data / 'dict.txt'}"], "E031")
    assert sorted(p.name for p in data.iterdir()) == ["dict.txt", "x.cfg"]


def test_train_refuses_an_output_that_only_an_override_names_as_input(tmp_path):
    """The config names no file, so only the `--paths.x` overrides (the command's context
    args, handed over as click's or typer's vendored Context) say what train reads."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "dict.txt").write_text(TINY_MEDIC, encoding="utf8")
    config = tmp_path / "x.cfg"
    config.write_text("[paths]\ndictionary = null\n", encoding="utf8")
    invoke(["train", config, "-o", data, "--force", "--paths.dictionary", data / "dict.txt"],
           "E031")
    invoke(["train", config, "-o", data, "--force", "--paths.dictionary", data], "E030")
    assert sorted(p.name for p in data.iterdir()) == ["dict.txt"]


def test_init_linker_force_refuses_a_directory_holding_its_dictionary(tmp_path, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    (data / "dict.txt").write_text(TINY_MEDIC, encoding="utf8")
    invoke(["init-linker", data, "-d", data / "dict.txt", "--force"], "E031")
    monkeypatch.chdir(data)
    invoke(["init-linker", ".", "-d", "dict.txt", "--force"], "E031")
    assert (data / "dict.txt").read_text(encoding="utf8") == TINY_MEDIC
    # the current directory itself, even when the dictionary is elsewhere
    (tmp_path / "other.txt").write_text(TINY_MEDIC, encoding="utf8")
    invoke(["init-linker", ".", "-d", tmp_path / "other.txt", "--force"], "E032")
    assert (data / "dict.txt").is_file() and Path.cwd() == data


# ---------------------------------------------------------------- atomic whole save

# The filesystem calls a save makes; the child dies at the N-th one, before it runs.
_COUNTED = [(os, "replace"), (os, "rename"), (os, "mkdir"), (os, "unlink"), (os, "remove"),
            (os, "rmdir"), (os, "chmod"), (shutil, "rmtree"), (files, "exchange_paths")]


def _kill_at(n, action):
    """Run `action` with every filesystem step counted; os._exit at step `n` (never when
    n is 0). Returns the names of the steps taken, in order."""
    import builtins
    import io

    steps = []

    def step(name):
        steps.append(name)
        if len(steps) == n:
            os._exit(137)  # as SIGKILL: no cleanup, no finally

    def counting(name, func):
        def wrapper(*args, **kwargs):
            step(name)
            return func(*args, **kwargs)
        return wrapper

    real_open = builtins.open

    def counting_open(file, mode="r", *args, **kwargs):
        if not any(c in mode for c in "wax+"):
            return real_open(file, mode, *args, **kwargs)
        step("open")
        opened = real_open(file, mode, *args, **kwargs)
        step("opened")  # created or truncated, nothing written yet: a 0-byte file
        return opened

    for module, name in _COUNTED:
        setattr(module, name, counting(name, getattr(module, name)))
    builtins.open = io.open = counting_open
    action()
    return steps


def _fork_and_kill(n, action, timeout=30.0):
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            _kill_at(n, action)
            os._exit(0)
        except BaseException:
            os._exit(1)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise AssertionError(f"the save killed at step {n} hung")
        time.sleep(0.01)


def _tree(path):
    """Every file under `path` (the one .NAME.old a two-rename save may leave in its
    place too), with its content."""
    path = Path(path)
    if not path.exists():
        path = path.with_name(f".{path.name}.old")
    return tuple(sorted((str(p.relative_to(path)), p.read_bytes())
                        for p in path.rglob("*") if p.is_file()))


def _version(path, verified=None):
    """"old" or "new": which pipeline `path` loads as, checked by linking with it. With
    `verified` (a dict of trees already loaded and linked), a tree identical to one of
    those is not loaded again: that keeps 30+ kill points within seconds."""
    if verified is not None:
        tree = _tree(path)
        if tree not in verified:
            verified[tree] = _version(path)
        return verified[tree]
    nlp = load_linker_pipeline(path)
    linker = nlp.get_pipe("bio_linker")
    doc = nlp.get_pipe("bio_linker")(doc_with_ents(nlp, "a breast tumor", ["breast tumor"]))
    assert doc.ents[0].kb_id_ == "D001943"
    return {6: "old", 7: "new"}[linker.dictionary.n_concepts]


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two-renames"])
def test_a_kill_anywhere_in_save_pipeline_leaves_old_or_new(tmp_path, exchange, monkeypatch):
    """Kill the save at every one of its filesystem steps (>= 30): the directory then
    loads and links as the old pipeline or the new one, and the next save cleans up."""
    if not exchange:
        monkeypatch.setattr(files, "exchange_paths", lambda a, b: False)
    elif files._renameat2() is None:
        pytest.skip("no renameat2 here")
    pristine = save_pipeline(tiny_nlp(tmp_path), tmp_path / "pristine")
    new = tiny_nlp(tmp_path, TINY_MEDIC + EXTRA, "dict_new.txt")
    assert _version(pristine) == "old"

    probe = tmp_path / "probe"
    shutil.copytree(pristine, probe / "model")
    assert _fork_and_kill(0, lambda: save_pipeline(new, probe / "model")) == 0
    assert _version(probe / "model") == "new"
    # whole trees, byte for byte: a mix of old and new files would be neither
    trees = {_tree(pristine): "old", _tree(probe / "model"): "new"}
    # count the steps once in this process, then kill at each
    shutil.rmtree(probe)
    shutil.copytree(pristine, probe / "model")
    with monkeypatch.context() as patched:
        for module, name in _COUNTED:
            patched.setattr(module, name, getattr(module, name))
        import builtins
        import io
        patched.setattr(builtins, "open", builtins.open)
        patched.setattr(io, "open", io.open)
        steps = _kill_at(0, lambda: save_pipeline(new, probe / "model"))
    assert len(steps) >= 30, steps
    # Without renameat2 the steps before the swap are the same as with it: kill only
    # around the swap there (the last os.replace calls of the save).
    swap = [i for i, name in enumerate(steps, 1) if name in ("replace", "exchange_paths")][-2:]
    points = range(1, len(steps) + 1) if exchange else range(swap[0] - 2, swap[-1] + 3)
    seen, verified = [], {}
    for n in points:
        model = tmp_path / f"k{n}" / "model"
        shutil.copytree(pristine, model)
        assert _fork_and_kill(n, lambda: save_pipeline(new, model)) == 137
        if not model.exists():  # killed between the two renames: the old one, said so
            assert not exchange
            with pytest.warns(UserWarning, match="W010"):
                load_linker_pipeline(model)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            seen.append(_version(model, verified))
        assert trees.get(_tree(model)) == seen[-1], f"killed at step {n} ({steps[n - 1]})"
    assert set(seen) == {"old", "new"}
    assert seen == sorted(seen, reverse=True)  # old until the swap, new from then on
    # the next save removes what the killed one left and puts the new pipeline in place
    save_pipeline(new, model)
    assert _version(model) == "new"
    assert [p.name for p in model.parent.iterdir()] == ["model"]


def test_init_linker_saves_through_save_pipeline(tmp_path, monkeypatch):
    from spacy_biolink.linker import pipeline
    from spacy_biolink.runners import assemble

    calls = []
    real = files.save_pipeline
    for module in (pipeline, assemble):
        monkeypatch.setattr(module, "save_pipeline",
                            lambda nlp, path, **kw: calls.append(path) or real(nlp, path, **kw))
    (tmp_path / "dict.txt").write_text(TINY_MEDIC, encoding="utf8")
    invoke(["init-linker", tmp_path / "m", "-d", tmp_path / "dict.txt"])
    assert calls == [tmp_path / "m"] and _version(tmp_path / "m") == "old"


# ---------------------------------------------------------------- tracebacks

def test_ctrl_c_is_one_line_and_exit_130(tmp_path, monkeypatch):
    import spacy_biolink.corpora as corpora
    import spacy_biolink.linker.pipeline as pipeline

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline, "load_linker_pipeline", interrupted)
    monkeypatch.setattr(corpora, "convert_pubtator", interrupted)
    corpus = tmp_path / "c.txt"
    corpus.write_text("1|t|x\n\n", encoding="utf8")
    for args in (["evaluate", tmp_path, corpus], ["convert", corpus, tmp_path / "o.spacy"]):
        result = invoke(args, "E034")
        assert result.exit_code == 130
        assert "KeyboardInterrupt" not in result.output
        assert len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize("exchange", [True, False])
def test_ctrl_c_after_the_swap_says_the_output_is_the_new_one(tmp_path, monkeypatch, exchange):
    # Issue 59: Ctrl-C while the replaced model was being deleted, after the new one had
    # been swapped in, said "Interrupted" (E034): the user took the old model to be there.
    (tmp_path / "dict.txt").write_text(TINY_MEDIC, encoding="utf8")
    (tmp_path / "big.txt").write_text(TINY_MEDIC + EXTRA, encoding="utf8")
    invoke(["init-linker", tmp_path / "m", "-d", tmp_path / "dict.txt"])
    if not exchange:
        monkeypatch.setattr(files, "exchange_paths", lambda a, b: False)
    real_rmtree = shutil.rmtree

    def interrupted_rmtree(path, *args, **kwargs):
        if Path(path).name.startswith(".m.") and (Path(path) / "config.cfg").exists():
            raise KeyboardInterrupt  # the old pipeline, being removed after the swap
        return real_rmtree(path, *args, **kwargs)

    monkeypatch.setattr(files.shutil, "rmtree", interrupted_rmtree)
    result = invoke(["init-linker", tmp_path / "m", "-d", tmp_path / "big.txt", "--force"],
                    "E038")
    assert result.exit_code == 130
    assert str(tmp_path / "m") in " ".join(result.output.split())
    assert _version(tmp_path / "m") == "new"
    monkeypatch.setattr(files.shutil, "rmtree", real_rmtree)
    # The next command starts afresh: a Ctrl-C before any swap is E034 again.
    import spacy_biolink.linker.pipeline as pipeline

    monkeypatch.setattr(pipeline, "load_linker_pipeline",
                        lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt))
    corpus = tmp_path / "c.txt"
    corpus.write_text("1|t|x\n\n", encoding="utf8")
    invoke(["evaluate", tmp_path / "m", corpus], "E034")


LONG = "x" * 1_000_001  # past spaCy's default nlp.max_length


def test_a_document_past_max_length_names_it(saved_model, tmp_path):
    corpus = tmp_path / "long.txt"
    corpus.write_text(f"1|t|ok\n\n4242|t|{LONG}\n4242\t0\t1\tx\tDisease\tD003924\n\n",
                      encoding="utf8")
    result = invoke(["evaluate", saved_model, corpus], "E470")
    assert "PMID 4242" in " ".join(result.output.split())
    result = invoke(["convert", corpus, tmp_path / "out.spacy"], "E470")
    assert "PMID 4242" in " ".join(result.output.split())
    assert not (tmp_path / "out.spacy").exists()
    docs = tmp_path / "docs.txt"
    docs.write_text(f"fine\n{LONG}\n", encoding="utf8")
    result = invoke(["link", docs, "-m", saved_model, "-o", tmp_path / "out.jsonl"], "E470")
    assert f"{docs}:2:" in " ".join(result.output.split())


def _damage(saved_model, tmp_path, relative, data):
    model = tmp_path / "model"
    shutil.copytree(saved_model, model)
    (model / relative).write_bytes(data)
    return model


@pytest.mark.parametrize("relative,data", [
    ("config.cfg", b"\xff\xfe[nlp]"), ("meta.json", b"{nope"), ("meta.json", b"[]"),
    ("tokenizer", b""), ("tokenizer", b"\x93junkjunk"), ("vocab/strings.json", b"\x00{"),
    ("vocab/vectors.cfg", b""), ("vocab/lookups.bin", b"\x00garbage"),
    ("vocab/key2row", b""), ("vocab/vectors", b"\x00garbage"),
])
def test_a_damaged_spacy_file_is_named(saved_model, tmp_path, relative, data):
    model = _damage(saved_model, tmp_path, relative, data)
    with pytest.raises(BioLinkError, match=r"\[E190\]") as err:
        load_linker_pipeline(model)
    assert relative in str(err.value)
    (tmp_path / "docs.txt").write_text("Type 2 diabetes\n", encoding="utf8")
    invoke(["link", tmp_path / "docs.txt", "-m", model, "-o", tmp_path / "o.jsonl"], "E190")


@pytest.mark.parametrize("data", [b"", b"\x00garbage{", b"[1, 2]"])
def test_a_damaged_normalizer_is_named(saved_model, tmp_path, data):
    model = _damage(saved_model, tmp_path, "bio_linker/normalizer", data)
    with pytest.raises(BioLinkError, match=r"\[E104\].*normalizer"):
        load_linker_pipeline(model)


def _edit_config(saved_model, tmp_path, old, new):
    model = tmp_path / "model"
    shutil.copytree(saved_model, model)
    text = (model / "config.cfg").read_text(encoding="utf8")
    assert old in text
    (model / "config.cfg").write_text(text.replace(old, new, 1), encoding="utf8")
    return model


def test_config_edits_give_coded_errors(saved_model, tmp_path):
    block = re.search(r"\[components\.bio_linker\.normalizer\]\n[^\[]*",
                      (saved_model / "config.cfg").read_text(encoding="utf8")).group().strip()
    model = _edit_config(saved_model, tmp_path / "a", block,
                         "[components.bio_linker.normalizer]\n"
                         "@misc = \"spacy.first_longest_spans_filter.v1\"")
    with pytest.raises(BioLinkError, match=r"\[E193\]"):
        load_linker_pipeline(model)
    model = _edit_config(saved_model, tmp_path / "b", '@tokenizers = "spacy.Tokenizer.v1"',
                         '@tokenizers = "nope.Tokenizer.v9"')
    with pytest.raises(BioLinkError, match=r"\[E192\].*nope.Tokenizer.v9"):
        load_linker_pipeline(model)
    model = _edit_config(saved_model, tmp_path / "c", "train = null", "train = ${paths.train}")
    with pytest.raises(BioLinkError, match=r"\[E192\]"):
        load_linker_pipeline(model)
    # the same loop in a config given to init-linker
    (tmp_path / "dict.txt").write_text(TINY_MEDIC, encoding="utf8")
    invoke(["init-linker", tmp_path / "m", "-d", tmp_path / "dict.txt",
            "--config", model / "config.cfg"], "E192")


def test_python_api_misuse_gives_coded_errors(tmp_path):
    nlp = tiny_nlp(tmp_path)
    linker = nlp.get_pipe("bio_linker")
    data = linker.to_bytes()
    other = tiny_nlp(tmp_path).get_pipe("bio_linker")
    for garbage in (b"garbage", b"\x00\x01\x02", data[: len(data) // 2], data[:7]):
        with pytest.raises(BioLinkError, match=r"\[E(194|104)\]"):
            other.from_bytes(garbage)
    with pytest.raises(BioLinkError, match=r"\[E195\]"):
        linker.add_names([(None, "D003110")])
    with pytest.raises(BioLinkError, match=r"\[E195\]"):
        linker.add_names("colon cancer")
    with pytest.raises(BioLinkError, match=r"\[E196\]"):
        linker("text")
    with pytest.raises(BioLinkError, match=r"\[E196\]"):
        list(linker.pipe(["text"]))
    assert linker.add_names([("colon cancer", "D001943")]) == 1
