"""The cross-encoder reranker (rerank.py, training/rerank.py) on a tiny random BERT."""
import pickle
from pathlib import Path

import numpy
import pytest
import spacy

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from spacy_biolink.encoders.torch_wrapper import torch_module  # noqa: E402
from spacy_biolink.errors import BioLinkError  # noqa: E402
from spacy_biolink.linker.pipeline import init_linker  # noqa: E402
from spacy_biolink.linker.stages.reranker import (Reranker, RerankItem, fit_temperature,  # noqa: E402
                                                  mention_context)
from spacy_biolink.training import train_from_config  # noqa: E402
from spacy_biolink.training.checkpoints import CHECKPOINT_FILE  # noqa: E402

from .conftest import build_tiny_bert  # noqa: E402

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "reranker.cfg"

# "cancer" alone matches all three names equally: only the sentence says which one.
DICTIONARY = """\
D000001||Breast Cancer
D000002||Ovarian Cancer
D000003||Colon Cancer
"""
SENTENCES = [("Tumours of the breast are common; this cancer is treated.", "D000001"),
             ("Tumours of the ovary are rare; this cancer is treated.", "D000002"),
             ("Tumours of the colon are common; this cancer is treated.", "D000003")]


@pytest.fixture(autouse=True, scope="module")
def one_thread(torch_one_thread):
    yield


def pubtator(sentences) -> str:
    lines = []
    for pmid, (text, concept) in enumerate(sentences, start=1):
        start = text.index("cancer")
        lines += [f"{pmid}|t|{text}", f"{pmid}|a|",
                  f"{pmid}\t{start}\t{start + 6}\tcancer\tDisease\t{concept}", ""]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    path = tmp_path_factory.mktemp("data")
    (path / "dict.txt").write_text(DICTIONARY, encoding="utf8")
    (path / "train.txt").write_text(pubtator(SENTENCES), encoding="utf8")
    words = {w.strip(".;,").lower() for text, _ in SENTENCES for w in text.split()}
    words |= {"breast", "ovarian", "colon", "cancer", "*", ";"}
    build_tiny_bert(path / "bert", words)
    return path


def overrides(data, output_k=3, **extra):
    settings = {"paths.dictionary": str(data / "dict.txt"), "paths.train": str(data / "train.txt"),
                "paths.dev": str(data / "train.txt"), "paths.backbone": str(data / "bert"),
                "training.k": output_k, "training.batch_size": 3,
                "training.learning_rate": 0.003, "training.head_learning_rate": 0.01,
                "training.initial_retriever_weight": 0.0, "reranker.max_length": 40}
    settings.update(extra)
    return settings


@pytest.fixture(scope="module")
def trained(data, tmp_path_factory):
    """A reranker overfitted on the three sentences (train = dev)."""
    out = tmp_path_factory.mktemp("reranker")
    meta = train_from_config(CONFIG, out, overrides=overrides(data, **{"training.max_epochs": 25}))
    return out, meta


def test_training_from_config_learns_from_context(trained):
    out, meta = trained
    # TF-IDF ties the three names: it is right once in three; the sentence settles it.
    assert meta["dev_retriever_acc@1"] == pytest.approx(1 / 3)
    assert meta["dev_acc@1"] == 1.0
    assert meta["use_context"] is True
    for name in ("reranker.cfg", "reranker.json", "model", "meta.json", "training.jsonl",
                 CHECKPOINT_FILE):
        assert (out / name).is_file()


def test_without_context_it_cannot_tell_them_apart(data, tmp_path):
    meta = train_from_config(CONFIG, tmp_path, overrides=overrides(
        data, **{"training.max_epochs": 10, "reranker.use_context": False}))
    assert meta["use_context"] is False
    # The same query and candidates three times: at most one of the three right.
    assert meta["dev_acc@1"] <= 1 / 3 + 1e-9


def test_pipeline_stage_reorders_and_round_trips(data, trained, tmp_path):
    out, _ = trained
    nlp = init_linker(tmp_path / "linker", data / "dict.txt", reranker=out)
    plain = init_linker(None, data / "dict.txt")

    def link(pipeline):
        docs = []
        for text, _ in SENTENCES:
            doc = pipeline.make_doc(text)
            start = text.index("cancer")
            doc.ents = [doc.char_span(start, start + 6, label="Disease")]
            docs.append(pipeline(doc))
        return [d.ents[0].kb_id_ for d in docs], [d.ents[0]._.kb_ents for d in docs]

    gold = [c for _, c in SENTENCES]
    ids, ents = link(nlp)
    assert ids == gold
    # Skipping the stage gives TF-IDF's order: the same concept for all three.
    assert len(set(link(plain)[0])) == 1
    # Scores are probabilities over the k candidates.
    assert all(abs(sum(s for _, s in e) - 1.0) < 1e-4 for e in ents)
    loaded = spacy.load(tmp_path / "linker")
    assert loaded.get_pipe("bio_linker").reranker is not None
    assert link(loaded) == (ids, ents)
    linker = nlp.get_pipe("bio_linker")
    # The stage is config ([components.bio_linker.stages.reranker]); its weights travel in
    # the bytes, so a linker built from the same config links the same.
    stages = nlp.config["components"]["bio_linker"]["stages"]
    assert stages["reranker"]["@misc"] == "spacy-biolink.CrossEncoderRerankerStage.v1"
    copy = spacy.blank("en")
    copy.add_pipe("bio_linker", config={"threshold": 0.0, "stages": stages})
    copy.get_pipe("bio_linker").from_bytes(linker.to_bytes())
    assert link(copy) == (ids, ents)
    # A value given at load is the value used: k = 1 leaves one candidate to rerank.
    one = spacy.load(tmp_path / "linker",
                     config={"components": {"bio_linker": {"stages": {"reranker": {"k": 1}}}}})
    assert one.get_pipe("bio_linker").reranker.k == 1
    assert all(len(e) == 1 and e[0][1] == 1.0 for e in link(one)[1])


def test_loading_never_unpickles(trained, monkeypatch):
    out, _ = trained

    def refuse(*args, **kwargs):
        raise AssertionError("unpickling")

    monkeypatch.setattr(pickle, "loads", refuse)
    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(torch, "load", refuse)
    reranker = Reranker.from_disk(out)
    assert reranker.k == 3
    assert (out / "model").read_bytes()[:1] != b"\x80"  # not a pickle stream


def test_a_foreign_architecture_is_refused(trained, tmp_path):
    out, _ = trained
    for name in ("model", "reranker.json"):
        (tmp_path / name).write_bytes((out / name).read_bytes())
    (tmp_path / "reranker.cfg").write_text(
        "[model]\n@architectures = \"spacy.PyTorchWrapper.v1\"\n", encoding="utf8")
    with pytest.raises(BioLinkError, match="E120"):
        Reranker.from_disk(tmp_path)
    with pytest.raises(BioLinkError, match="E531"):
        Reranker.from_disk(tmp_path / "missing")


def test_threshold_gives_nil_where_unsure(data, trained, tmp_path):
    out, _ = trained
    sure = init_linker(None, data / "dict.txt", reranker=out)
    unsure = init_linker(None, data / "dict.txt", reranker=out,
                         overrides={"components.bio_linker.threshold": 0.999999})
    text = "Something unrelated: cancer here."
    for nlp, expect_nil in ((sure, False), (unsure, True)):
        doc = nlp.make_doc(text)
        start = text.index("cancer")
        doc.ents = [doc.char_span(start, start + 6, label="Disease")]
        assert (nlp(doc).ents[0].kb_id_ == "NIL") is expect_nil


def test_context_changes_scores_only_when_on(data, trained):
    out, _ = trained
    linker = init_linker(None, data / "dict.txt").get_pipe("bio_linker")
    reranker = Reranker.from_disk(out)
    items = [RerankItem("cancer", text, text.index("cancer"), text.index("cancer") + 6,
                        [(0, 0.5), (1, 0.5), (2, 0.5)]) for text, _ in SENTENCES]
    on = reranker.rerank(linker.dictionary, items)
    assert len({tuple(c for c, _ in r) for r in on}) == 3
    reranker.model.attrs["use_context"] = False
    off = reranker.rerank(linker.dictionary, items)
    assert off[0] == off[1] == off[2]
    assert mention_context("cancer", SENTENCES[0][0], 40, 46, use_context=False) == "cancer"
    marked = mention_context("cancer", "First one. Tumours here; this cancer is bad. Next.",
                             30, 36)
    assert marked == "cancer ; Tumours here; this * cancer * is bad."


def test_repeated_pairs_are_scored_once(data, trained):
    out, _ = trained
    linker = init_linker(None, data / "dict.txt").get_pipe("bio_linker")
    reranker = Reranker.from_disk(out)
    text = SENTENCES[0][0]
    item = RerankItem("cancer", text, text.index("cancer"), text.index("cancer") + 6,
                      [(0, 0.5), (1, 0.4), (2, 0.3)])
    first = reranker.rerank(linker.dictionary, [item, item])
    assert reranker.n_scored == 3
    assert reranker.rerank(linker.dictionary, [item]) == first[:1]
    assert reranker.n_scored == 3


def test_resume_repeats_a_straight_run(data, tmp_path):
    settings = overrides(data, **{"training.max_epochs": 2, "training.eval_frequency": 1,
                                  "training.batch_size": 1})
    straight = train_from_config(CONFIG, tmp_path / "a", overrides=settings)
    first = dict(settings, **{"training.max_epochs": 1})
    train_from_config(CONFIG, tmp_path / "b", overrides=first)
    resumed = train_from_config(CONFIG, tmp_path / "b", overrides=settings, resume=True)
    a = Reranker.from_disk(tmp_path / "a")
    b = Reranker.from_disk(tmp_path / "b")
    assert resumed["dev_acc@1"] == straight["dev_acc@1"]
    for (name, x), (_, y) in zip(torch_module(a.model).state_dict().items(),
                                 torch_module(b.model).state_dict().items()):
        assert torch.equal(x, y), name


def test_temperature_fit():
    logits = [numpy.array([4.0, 0.0]), numpy.array([4.0, 0.0]), numpy.array([0.0, 4.0])]
    positives = [numpy.array([True, False])] * 2 + [numpy.array([True, False])]
    # One confident mistake in three: a flatter softmax (T > 1) fits better.
    assert fit_temperature(logits, positives) > 1.0
    assert fit_temperature(logits[:2], positives[:2]) < 1.0


def test_bad_settings_are_refused(trained):
    out, _ = trained
    with pytest.raises(BioLinkError, match="E530"):
        Reranker.from_disk(out, k=0)
