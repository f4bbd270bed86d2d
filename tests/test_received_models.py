"""What a saved or received model can do on load: no code from a received model, the config
as the source of truth for settings, saved values validated, out-of-range settings
refused, and saves that a kill cannot break."""
import os
import pickle
import signal
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import List
import warnings

import pytest
import spacy
import srsly
from thinc.api import Config

from spacy_biolink.errors import BioLinkError

from .conftest import doc_with_ents, make_linker_nlp

TEXT = ("Patients with type 2 diabetes and breast cancer were enrolled.",
        ["type 2 diabetes", "breast cancer"])


def links(nlp):
    doc = nlp(doc_with_ents(nlp, *TEXT))
    return [(e.kb_id_, e._.kb_ents) for e in doc.ents]


# Security ------------------------------------------------------------------------


class _Payload:
    """Unpickling this creates the marker file: harmless proof that code ran."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _pickling_shim_bytes(marker) -> bytes:
    """What thinc's PyTorchShim reads with torch.load: a msgpack'ed {config, state} whose
    state is a pickle, here of the payload."""
    return srsly.msgpack_dumps({"config": {}, "state": pickle.dumps(_Payload(marker))})


def _lstm_model_bytes(marker) -> bytes:
    """thinc's PyTorchLSTM.v1 saved state with the payload in its shim."""
    from thinc.api import registry

    model = registry.resolve({"m": {"@layers": "PyTorchLSTM.v1", "nO": 4, "nI": 4}})["m"]
    msg = srsly.msgpack_loads(model.to_bytes())
    msg["shims"] = [[_pickling_shim_bytes(marker) for _ in shims] for shims in msg["shims"]]
    return srsly.msgpack_dumps(msg)


def _craft_pipeline(tmp_path, encoder_block: dict, marker) -> Path:
    """A saved (uninitialized) pipeline whose config names `encoder_block` as the
    bio_linker encoder and whose encoder file carries a pickle payload."""
    path = tmp_path / "received"
    nlp = spacy.blank("en")
    nlp.add_pipe("bio_linker")
    nlp.to_disk(path)
    config = Config().from_disk(path / "config.cfg", interpolate=False)
    config["components"]["bio_linker"]["encoder"] = encoder_block
    config.to_disk(path / "config.cfg")
    (path / "bio_linker" / "encoder").write_bytes(_lstm_model_bytes(marker))
    return path


LSTM_BLOCK = {"@layers": "PyTorchLSTM.v1", "nO": 4, "nI": 4}


def test_the_crafted_payload_runs_when_thinc_reads_it(tmp_path, monkeypatch):
    """The test below means something: thinc itself does run this payload."""
    pytest.importorskip("torch")
    from thinc.api import registry

    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    marker = tmp_path / "pwned"
    model = registry.resolve({"m": LSTM_BLOCK})["m"]
    with pytest.raises(Exception):
        model.from_bytes(_lstm_model_bytes(marker))
    assert marker.exists()


@pytest.mark.parametrize("block", [
    LSTM_BLOCK,
    # nested: a HybridEncoder whose dense part is the pickling layer
    {"@architectures": "spacy-biolink.HybridEncoder.v1", "dense": LSTM_BLOCK,
     "sparse": {"@architectures": "spacy-biolink.TfidfEncoder.v1"}},
], ids=["top", "nested"])
def test_received_model_naming_a_pickling_layer_runs_no_code(tmp_path, monkeypatch, block):
    pytest.importorskip("torch")
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    marker = tmp_path / "pwned"
    path = _craft_pipeline(tmp_path, block, marker)
    with pytest.raises(BioLinkError, match=r"E12[01].*(PyTorchLSTM|with_padded)"):
        spacy.load(path)
    assert not marker.exists()


def test_linker_pipeline_loader_names_the_architecture(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    from spacy_biolink.linker.pipeline import load_linker_pipeline

    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    marker = tmp_path / "pwned"
    path = _craft_pipeline(tmp_path, LSTM_BLOCK, marker)
    with pytest.raises(BioLinkError, match=r"E120.*PyTorchLSTM\.v1"):
        load_linker_pipeline(path)
    assert not marker.exists()


def _craft_encoder_dir(tmp_path, block: dict, marker, meta=None) -> Path:
    """A trained-encoder directory (as `train` writes it) naming `block`, its model file
    carrying the payload."""
    path = tmp_path / "encoder"
    path.mkdir()
    Config({"model": block}).to_disk(path / "encoder.cfg")
    (path / "model").write_bytes(_lstm_model_bytes(marker))
    srsly.write_json(path / "meta.json", meta or {"method": "dan"})
    return path


def test_received_encoder_directory_runs_no_code(tmp_path, monkeypatch, tiny_medic_path):
    pytest.importorskip("torch")
    from spacy_biolink.encoders.saved import load_encoder
    from spacy_biolink.linker.pipeline import init_linker

    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    marker = tmp_path / "pwned"
    encoder = _craft_encoder_dir(tmp_path, LSTM_BLOCK, marker)
    with pytest.raises(BioLinkError, match=r"E120.*PyTorchLSTM\.v1"):
        load_encoder(encoder)
    with pytest.raises(BioLinkError, match=r"E12[01]"):
        init_linker(tmp_path / "out", tiny_medic_path, encoder=encoder)
    assert not marker.exists()
    assert not (tmp_path / "out").exists()


def test_received_verifier_runs_no_code(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    from spacy_biolink.linker.stages.verifier import CandidateVerifier

    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    marker = tmp_path / "pwned"
    verifier = _craft_encoder_dir(tmp_path, LSTM_BLOCK, marker, meta={"method": "siamese"})
    with pytest.raises(BioLinkError, match=r"E120.*PyTorchLSTM\.v1"):
        CandidateVerifier.from_trained(verifier)
    # the same inside a pipeline's bytes
    data = srsly.msgpack_dumps({"model_config": Config({"model": LSTM_BLOCK}).to_str(),
                                "model": _lstm_model_bytes(marker), "threshold": 0.5,
                                "mode": "nil", "max_tries": 3})
    with pytest.raises(BioLinkError, match=r"E120.*PyTorchLSTM\.v1"):
        CandidateVerifier.from_bytes(data)
    # an encoder architecture is not a verifier either
    Config({"model": {"@architectures": "spacy-biolink.TfidfEncoder.v1"}}).to_disk(
        verifier / "encoder.cfg")
    with pytest.raises(BioLinkError, match=r"E120.*TfidfEncoder"):
        CandidateVerifier.from_trained(verifier)
    assert not marker.exists()


def test_a_torch_layer_read_with_torch_load_is_refused_even_under_our_name():
    """The model-tree check looks at how each layer's weights are read, not only at names."""
    pytest.importorskip("torch")
    import torch
    from thinc.api import Model, PyTorchWrapper_v2

    from spacy_biolink.encoders.checks import check_model

    disguised = Model("dan_encoder", lambda model, X, is_train: (X, lambda d: d),
                      layers=[PyTorchWrapper_v2(torch.nn.Linear(2, 2))])
    with pytest.raises(BioLinkError, match=r"E121.*'pytorch'.*torch\.load"):
        check_model(disguised)


def test_from_bytes_checks_a_swapped_in_model(linker_nlp):
    pytest.importorskip("torch")
    from thinc.api import registry

    linker = linker_nlp.get_pipe("bio_linker")
    data = linker.to_bytes()
    linker.linker.model = registry.resolve({"m": LSTM_BLOCK})["m"]
    with pytest.raises(BioLinkError, match=r"E121.*with_padded"):
        linker.from_bytes(data)


# The config is the source of truth for settings ------------------------------------


@pytest.fixture
def saved(tiny_dictionary, tmp_path):
    nlp = make_linker_nlp(tiny_dictionary)
    nlp.to_disk(tmp_path / "saved")
    return tmp_path / "saved"


def test_load_time_config_overrides_reach_the_linker(saved):
    nlp = spacy.load(saved, config={"components": {"bio_linker": {"threshold": 0.99, "k": 1}}})
    linker = nlp.get_pipe("bio_linker")
    assert (linker.cfg["threshold"], linker.cfg["k"]) == (0.99, 1)
    assert nlp.config["components"]["bio_linker"]["threshold"] == 0.99
    # "type 2 diabetes" is a dictionary name (score 1.0); nothing else reaches 0.99
    assert [len(ents) for _, ents in links(nlp)] == [1, 1]
    assert len(links(spacy.load(saved))[0][1]) > 1


def test_an_edited_config_cfg_is_honoured(saved):
    config = Config().from_disk(saved / "config.cfg", interpolate=False)
    config["components"]["bio_linker"]["max_entities_per_mention"] = 1
    config["components"]["bio_linker"]["nil_id"] = "NONE"
    config.to_disk(saved / "config.cfg")
    linker = spacy.load(saved).get_pipe("bio_linker")
    assert linker.cfg["max_entities_per_mention"] == 1 and linker.cfg["nil_id"] == "NONE"


@pytest.mark.parametrize("key,value", [
    ("k", 0), ("k", -5), ("k", 2.5), ("max_entities_per_mention", -1), ("threshold", "high"),
    ("index_sources", "X"), ("index_level", "token"), ("cache_size", -1),
    ("sieve_threshold", 3), ("prior_weight", -1), ("initialized", "yes")])
def test_damaged_saved_settings_are_reported_on_load(saved, key, value):
    cfg = srsly.read_json(saved / "bio_linker" / "cfg")
    cfg[key] = value
    srsly.write_json(saved / "bio_linker" / "cfg", cfg)
    with pytest.raises(BioLinkError, match=rf"E123.*{key}"):
        spacy.load(saved)


def test_a_config_that_changes_what_the_index_holds_asks_for_a_rebuild(saved):
    with pytest.raises(BioLinkError, match=r"E124.*index_sources = 'OD'.*'O'"):
        spacy.load(saved, config={"components": {"bio_linker": {"index_sources": "O"}}})
    with pytest.raises(BioLinkError, match=r"E124.*index_level"):
        spacy.load(saved, config={"components": {"bio_linker": {"index_level": "concept"}}})


def test_a_saved_cfg_from_another_version_still_loads(saved, tiny_dictionary):
    expected = links(spacy.load(saved))
    cfg = srsly.read_json(saved / "bio_linker" / "cfg")
    # an older version wrote fewer keys, a newer one may write more
    for key in ("index_sources", "index_level", "sieve_threshold", "prior_weight"):
        del cfg[key]
    cfg["some_future_setting"] = {"a": 1}
    srsly.write_json(saved / "bio_linker" / "cfg", cfg)
    assert links(spacy.load(saved)) == expected


def test_bytes_round_trip_keeps_the_receivers_settings(linker_nlp):
    data = linker_nlp.get_pipe("bio_linker").to_bytes()
    other = spacy.blank("en")
    other.add_pipe("bio_linker", config={"k": 2, "threshold": 0.5})
    other.get_pipe("bio_linker").from_bytes(data)
    assert other.get_pipe("bio_linker").cfg["k"] == 2
    assert all(len(ents) <= 2 and all(s >= 0.5 for _, s in ents) for _, ents in links(other))


# Out-of-range values ------------------------------------------------------------


@pytest.mark.parametrize("threshold", [1.01, -1.5, 7])
def test_a_threshold_no_cosine_can_reach_is_refused(threshold):
    nlp = spacy.blank("en")
    with pytest.raises(BioLinkError, match=r"E125.*\[-1\.0, 1\.0\]"):
        nlp.add_pipe("bio_linker", config={"threshold": threshold})


def test_threshold_range_follows_the_encoder(saved):
    nlp = spacy.blank("en")
    nlp.add_pipe("bio_linker", config={"threshold": 1.0})  # the edge is fine
    # the annotation prior adds to scores: no upper bound then
    nlp.add_pipe("bio_linker", name="with_prior", config={"threshold": 1.2, "prior_weight": 0.01})
    with pytest.raises(BioLinkError, match="E125"):
        spacy.load(saved, config={"components": {"bio_linker": {"threshold": 2.0}}})


def test_with_the_prior_the_threshold_bound_is_checked_once_the_counts_are_known(
        tiny_dictionary):
    nlp = spacy.blank("en")
    nlp.add_pipe("bio_linker", config={"threshold": 1.2, "prior_weight": 0.01})
    # no augmentation: the prior adds nothing, so 1.2 is out of reach
    with pytest.raises(BioLinkError, match="E125"), pytest.warns(UserWarning, match="W001"):
        nlp.get_pipe("bio_linker").initialize(dictionary=tiny_dictionary)
    assert not nlp.get_pipe("bio_linker").is_initialized


def test_hybrid_score_range_is_the_weighted_sum():
    from spacy.util import registry

    from spacy_biolink.linker.component import score_range

    tfidf = {"@architectures": "spacy-biolink.TfidfEncoder.v1"}
    model = registry.resolve({"m": {"@architectures": "spacy-biolink.HybridEncoder.v1",
                                    "dense": tfidf, "sparse": tfidf, "dense_weight": 2.0,
                                    "sparse_weight": 0.5}})["m"]
    assert score_range(model) == (-2.5, 2.5)
    model.attrs["similarity"] = "inner_product"
    assert score_range(model) is None


HUGE = "99999999999999999999"


def _cli(*args):
    from typer.testing import CliRunner

    from spacy_biolink.cli import app

    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


@pytest.mark.parametrize("args", [["--batch-size", "0"], ["--batch-size", "-3"],
                                  ["--n-process", "0"], ["--n-process", "-5"],
                                  # overflowed, or opened processes until no file was left
                                  ["--batch-size", HUGE], ["--n-process", HUGE],
                                  ["--engine", "ray", "--num-workers", HUGE],
                                  ["--engine", "ray", "--batch-size", HUGE],
                                  ["--engine", "ray", "--num-gpus", "1e308"],
                                  ["--engine", "ray", "--num-gpus", "nan"]])
def test_link_refuses_out_of_range_batch_and_process_counts(saved, tmp_path, args):
    (tmp_path / "in.txt").write_text("NIDDM here.\n", encoding="utf8")
    result = _cli("link", tmp_path / "in.txt", "--model", saved, "--output",
                  tmp_path / "out.jsonl", *args)
    assert result.exit_code == 1 and "E480" in result.output and args[-2] in result.output
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize("ks", ["0", "1,-5", "a"])
def test_evaluate_refuses_bad_ks(saved, tmp_path, ks):
    (tmp_path / "c.txt").write_text("1|t|NIDDM here.\n1\t0\t5\tNIDDM\tDisease\tD003924\n\n",
                                    encoding="utf8")
    result = _cli("evaluate", saved, tmp_path / "c.txt", f"--ks={ks}")
    assert result.exit_code == 1 and "E481" in result.output


@pytest.mark.parametrize("ks", [HUGE, "1,1001"])
def test_evaluate_refuses_a_k_too_large_naming_the_range(saved, tmp_path, ks):
    # 99999999999999999999 was an OverflowError traceback, after the model was loaded
    (tmp_path / "c.txt").write_text("1|t|NIDDM here.\n1\t0\t5\tNIDDM\tDisease\tD003924\n\n",
                                    encoding="utf8")
    result = _cli("evaluate", saved, tmp_path / "c.txt", f"--ks={ks}")
    assert result.exit_code == 1, result.output
    assert "E480" in result.output and "--ks" in result.output and "[1, 1000]" in result.output


def test_evaluate_gold_mentions_refuses_bad_ks(linker_nlp, tmp_path):
    from spacy_biolink.evaluation import evaluate_gold_mentions

    with pytest.raises(BioLinkError, match="E481"):
        evaluate_gold_mentions(linker_nlp, tmp_path / "unused.txt", ks=[0, 1])


@pytest.mark.parametrize("args,option", [
    (["visualize", "{saved}", "--text", "NIDDM", "--output", "{tmp}/p.html", "--limit", "0"],
     "--limit"),
    (["eval-synonyms", "tfidf", "-d", "{dict}", "--test-rounds", "0"], "--test-rounds"),
    (["eval-synonyms", "tfidf", "-d", "{dict}", "--train-queries", "-1"], "--train-queries"),
    (["train-vectors", "{tmp}/vec", "-d", "{dict}", "--dim", "0"], "--dim"),
    (["train-vectors", "{tmp}/vec", "-d", "{dict}", "--window", "0"], "--window"),
    (["train-vectors", "{tmp}/vec", "-d", "{dict}", "--epochs", "0"], "--epochs"),
    # Too large, inf or nan: each was taken and failed (or ran for ever) deep inside.
    (["visualize", "{saved}", "--text", "NIDDM", "--output", "{tmp}/p.html", "--doc", HUGE],
     "--doc"),
    (["eval-synonyms", "tfidf", "-d", "{dict}", "--test-rounds", HUGE], "--test-rounds"),
    (["eval-synonyms", "tfidf", "-d", "{dict}", "--seed", HUGE], "--seed"),
    (["eval-synonyms", "tfidf", "-d", "{dict}", "--zero-shot-concepts", "nan"],
     "--zero-shot-concepts"),
    (["eval-synonyms", "tfidf", "-d", "{dict}", "--zero-shot-concepts", "-5"],
     "--zero-shot-concepts"),
    (["train-vectors", "{tmp}/vec", "-d", "{dict}", "--dim", HUGE], "--dim"),
    (["train-vectors", "{tmp}/vec", "-d", "{dict}", "--epochs", HUGE], "--epochs"),
    (["train-vectors", "{tmp}/vec", "-d", "{dict}", "--seed", HUGE], "--seed"),
    (["ner-vectors", "{tmp}/vec", "-d", "{dict}", "--dim", HUGE], "--dim"),
    (["ner-vectors", "{tmp}/vec", "-d", "{dict}", "--rows", "0"], "--rows"),
    (["ner-patterns", "{tmp}/p.jsonl", "-c", "{tmp}/x.spacy", "--min-count", HUGE],
     "--min-count"),
    (["init-linker", "{tmp}/vec", "-d", "{dict}", "--verifier-threshold", "7"],
     "--verifier-threshold"),
    (["assemble", "{saved}", "{saved}", "{tmp}/vec", "--nil-threshold", "inf"],
     "--nil-threshold"),
])
def test_sibling_commands_refuse_out_of_range_counts(saved, tmp_path, tiny_medic_path, args,
                                                     option):
    args = [a.format(saved=saved, tmp=tmp_path, dict=tiny_medic_path) for a in args]
    result = _cli(*args)
    assert result.exit_code == 1 and "E480" in result.output and option in result.output
    assert not (tmp_path / "vec").exists() and not (tmp_path / "p.html").exists()


# Saving over a pipeline: a kill leaves the old one or the new one ---------------------

_WRITE_EVENTS = ("open", "os.rename", "os.mkdir", "shutil.rmtree", "os.remove", "os.rmdir")


def _save_in_child(nlp, path: Path, kill_at: int) -> List[str]:
    """nlp.to_disk(path) in a forked child that SIGKILLs itself just before its
    kill_at-th write to the file system under path (an open for writing, a rename, a
    mkdir, a removal); kill_at < 0: no kill. Returns the writes a full save makes
    ("event path"), or [] after a kill."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        os.close(read_end)
        seen = []
        root = str(path)

        def hook(event, args):
            if event not in _WRITE_EVENTS or not str(args[0]).startswith(root):
                return
            if event == "open":
                mode, flags = args[1], args[2]
                writing = any(c in mode for c in "wax+") if isinstance(mode, str) else \
                    bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
                if not writing:
                    return
            if len(seen) == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            seen.append(f"{event} {os.path.relpath(str(args[0]), root)}")

        try:
            sys.addaudithook(hook)
            nlp.to_disk(path)
            os.write(write_end, "\n".join(seen).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    _, status = os.waitpid(pid, 0)
    with os.fdopen(read_end) as fileh:
        writes = fileh.read().split("\n")
    if kill_at < 0:
        assert os.WIFEXITED(status), status
        return writes
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    return []


def test_a_save_killed_at_any_point_leaves_the_old_or_the_new_pipeline(tiny_dictionary,
                                                                      tmp_path):
    """Killed before each of the ~35 writes of nlp.to_disk over an existing pipeline, the
    bio_linker loads as the old or the new one; the whole pipeline too where the kill
    fell at a rename (spaCy's own files are rewritten in place, not ours to make atomic)."""
    from spacy_biolink import load_dictionary

    from .conftest import TINY_MEDIC

    old_nlp = make_linker_nlp(tiny_dictionary)
    (tmp_path / "bigger.txt").write_text(TINY_MEDIC + "D999999||Zebra syndrome|type 2 zebra\n",
                                         encoding="utf8")
    new_nlp = make_linker_nlp(load_dictionary(tmp_path / "bigger.txt"))
    texts = [("Type 2 zebra and breast cancer.", ["Type 2 zebra", "breast cancer"])]

    def outputs(nlp):
        return [[(e.kb_id_, e._.kb_ents) for e in nlp(doc_with_ents(nlp, *t)).ents] for t in texts]

    old, new = outputs(old_nlp), outputs(new_nlp)
    assert old != new
    reader = old_nlp  # its bio_linker reads each state left on disk
    pristine = tmp_path / "pristine"
    old_nlp.to_disk(pristine)
    path = tmp_path / "model"
    shutil.copytree(pristine, path)
    writes = _save_in_child(new_nlp, path, -1)
    assert outputs(spacy.load(path)) == new
    assert any(w.startswith("os.rename bio_linker") for w in writes), writes
    seen = {"old": 0, "new": 0}
    for kill_at, write in enumerate(writes):
        shutil.rmtree(path)
        shutil.copytree(pristine, path)
        _save_in_child(new_nlp, path, kill_at)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r".*\[W010\]")
            reader.get_pipe("bio_linker").from_disk(path / "bio_linker")
            got = outputs(reader)
            assert got in (old, new), f"killed before {write!r}: a mix of old and new"
            if write.startswith("os.rename"):
                assert outputs(spacy.load(path)) == got
        seen["old" if got == old else "new"] += 1
    assert seen["old"] and seen["new"]
    # the next save clears what the killed ones left
    new_nlp.to_disk(path)
    assert not list(path.glob(".bio_linker.*"))


def test_init_linker_reports_temp_dirs_of_killed_runs(tmp_path, tiny_medic_path):
    from spacy_biolink.linker.pipeline import init_linker

    leftover = tmp_path / ".out.k1ll3d.tmp"
    (leftover / "bio_linker").mkdir(parents=True)
    with pytest.warns(UserWarning, match=r"W011.*k1ll3d"):
        init_linker(tmp_path / "out", tiny_medic_path)
    assert (tmp_path / "out" / "config.cfg").is_file()


def test_a_half_written_linker_names_what_is_missing(saved):
    shutil.rmtree(saved / "bio_linker" / "index")
    with pytest.raises(BioLinkError, match=r"E104.*missing index"):
        spacy.load(saved)


def test_a_config_that_changes_the_folding_of_indexed_names_asks_for_a_rebuild(saved):
    with pytest.raises(BioLinkError, match=r"E124.*normalizer\.strip_plurals"):
        spacy.load(saved, config={"components": {"bio_linker": {
            "normalizer": {"strip_plurals": False}}}})
