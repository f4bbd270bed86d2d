"""Transformer name encoders (BioSyn, triplet network) on a tiny random BERT built here."""
import json
import math
from pathlib import Path

import numpy
import pytest
import spacy

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from spacy.util import registry  # noqa: E402

from spacy_biolink import load_dictionary  # noqa: E402
from spacy_biolink.encoders.saved import load_encoder  # noqa: E402
from spacy_biolink.encoders.torch_wrapper import torch_module  # noqa: E402
from spacy_biolink.encoders.transformer import build_for_training  # noqa: E402
from spacy_biolink.errors import BioLinkError  # noqa: E402
from spacy_biolink.training import train_from_config  # noqa: E402
from spacy_biolink.training.dev import build_linker, dev_accuracy  # noqa: E402
from spacy_biolink.training.losses import batch_hard_soft_margin_triplet, marginal_nll  # noqa: E402

from .conftest import build_tiny_bert  # noqa: E402

CONFIGS = Path(__file__).resolve().parents[1] / "configs"

# Concepts whose training mentions share few characters with their names, so TF-IDF
# alone gets them wrong and the dense part has something to learn.
DICTIONARY = """\
D000001||Myocardial Infarction|cardiac infarct
D000002||Cerebral Hemorrhage|brain bleed
D000003||Renal Insufficiency|kidney failure
D000004||Hepatic Fibrosis|liver scarring
D000005||Pulmonary Embolism|lung clot
D000006||Gastric Ulcer|stomach ulcer
"""
MENTIONS = [("heart attack", "D000001"), ("stroke with bleeding", "D000002"),
            ("nephropathy", "D000003"), ("cirrhosis", "D000004"),
            ("pe", "D000005"), ("peptic lesion", "D000006")]


@pytest.fixture(autouse=True, scope="module")
def one_thread(torch_one_thread):
    yield


def pubtator(mentions) -> str:
    lines = []
    for pmid, (text, concept) in enumerate(mentions, start=1):
        title = f"Patient with {text}."
        lines += [f"{pmid}|t|{title}", f"{pmid}|a|No abstract.",
                  f"{pmid}\t13\t{13 + len(text)}\t{text}\tDisease\t{concept}", ""]
    return "\n".join(lines) + "\n"


def words_of(text: str):
    return text.lower().replace(",", " ").split()


@pytest.fixture(scope="module")
def backbone(tmp_path_factory) -> Path:
    """A tiny random BERT whose vocab holds the words of the dictionary and mentions."""
    return build_tiny_bert(tmp_path_factory.mktemp("tiny_bert"), backbone_words())


def backbone_words() -> set:
    text = DICTIONARY + " ".join(t for t, _ in MENTIONS) + " patient with no abstract"
    return {w for line in text.splitlines() for w in words_of(line.replace("|", " "))
            if not w.startswith("d0")}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    path = tmp_path_factory.mktemp("data")
    (path / "dict.txt").write_text(DICTIONARY, encoding="utf8")
    (path / "train.txt").write_text(pubtator(MENTIONS), encoding="utf8")
    (path / "dev.txt").write_text(pubtator(MENTIONS), encoding="utf8")
    return path


def train_overrides(data, backbone, **extra):
    settings = {"paths.dictionary": str(data / "dict.txt"), "paths.train": str(data / "train.txt"),
                "paths.dev": str(data / "dev.txt"), "paths.backbone": str(backbone)}
    settings.update(extra)
    return settings


BIOSYN_FAST = {"training.learning_rate": 0.003, "training.max_epochs": 6,
               "training.batch_size": 3, "training.topk": 6,
               # dev = train here: adding train to the dictionary would make dev trivial
               "training.dev_augment_train": False}


def test_encoders_round_trip_bytes(backbone, data):
    names = ["Heart attack", "kidney failure", "zzz unknown", ""]
    for block in ({"@architectures": "spacy-biolink.TransformerEncoder.v1", "pooling": "mean",
                   "max_length": 8, "normalize": True},
                  {"@architectures": "spacy-biolink.BioSynEncoder.v1", "max_length": 25}):
        model, model_config, _ = build_for_training({"paths": {"backbone": str(backbone)},
                                                     "encoder": block})
        if "vectorizer" in model.attrs:
            model.initialize(X=["heart attack", "kidney failure", "liver"])
            with torch.no_grad():
                torch_module(model).sparse_weight.fill_(0.7)
        before = model.predict(names)
        rebuilt = registry.resolve({"model": model_config})["model"]
        rebuilt.from_bytes(model.to_bytes())
        after = rebuilt.predict(names)
        if model.attrs["output"] == "sparse":
            assert (before != after).nnz == 0
            width = torch_module(model).width
            # inner product of hybrid rows = dense score + lambda * tfidf score
            d = before[:, :width].toarray()
            s = before[:, width:].toarray() / math.sqrt(0.7)
            assert numpy.allclose((before @ before.T).toarray(), d @ d.T + 0.7 * s @ s.T,
                                  atol=1e-4)
        else:
            assert before.shape == (4, 32)
            assert numpy.array_equal(before, after)
            assert numpy.allclose(numpy.linalg.norm(before, axis=1), 1.0, atol=1e-5)


def test_architecture_without_backbone_config_says_what_to_do():
    with pytest.raises(BioLinkError, match="E652"):
        registry.resolve({"model": {"@architectures": "spacy-biolink.TransformerEncoder.v1"}})


def test_missing_backbone_directory(tmp_path):
    with pytest.raises(BioLinkError, match="E651"):
        build_for_training({"paths": {"backbone": str(tmp_path / "nope")},
                            "encoder": {"@architectures": "spacy-biolink.TransformerEncoder.v1"}})


def test_marginal_nll_by_hand():
    scores = torch.tensor([[2.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    positives = torch.tensor([[False, True, True], [False, False, False]])
    p = (math.exp(1) + 1) / (math.exp(2) + math.exp(1) + 1)
    # the second mention has no positive candidate: it counts 0
    assert float(marginal_nll(scores, positives)) == pytest.approx(-math.log(p) / 2, rel=1e-5)


def test_batch_hard_triplet_by_hand():
    embeddings = torch.tensor([[0.0], [1.0], [3.0], [5.0]], requires_grad=True)
    labels = torch.tensor([0, 0, 1, 1])
    # (d_hardest_pos, d_hardest_neg) per anchor: (1, 3), (1, 2), (2, 2), (2, 4)
    expected = numpy.mean([math.log1p(math.exp(d)) for d in (1 - 3, 1 - 2, 2 - 2, 2 - 4)])
    loss = batch_hard_soft_margin_triplet(embeddings, labels)
    assert float(loss.detach()) == pytest.approx(expected, rel=1e-5)
    loss.backward()
    assert torch.isfinite(embeddings.grad).all()


def test_biosyn_learns_and_cli_pipeline_matches(backbone, data, tmp_path):
    from typer.testing import CliRunner

    from spacy_biolink.cli import app

    out = tmp_path / "biosyn"
    meta = train_from_config(CONFIGS / "biosyn.cfg", out,
                             overrides=train_overrides(data, backbone, **BIOSYN_FAST))
    records = [json.loads(line) for line in (out / "training.jsonl").read_text().splitlines()]
    assert records[-1]["loss"] < records[0]["loss"]
    untrained_model, _, _ = build_for_training({"paths": {"backbone": str(backbone)},
                                                "encoder": {"@architectures": "spacy-biolink.BioSynEncoder.v1"}})
    untrained = dev_accuracy(untrained_model, load_dictionary(data / "dict.txt"), data / "dev.txt",
                             index_config={"@misc": "spacy-biolink.SparseIndex.v1"})["acc@1"]
    assert meta["dev_acc@1"] >= 0.8 > untrained
    assert (out / "training.png").is_file()

    # train -> init-linker --encoder -> spacy.load gives what the in-memory model gives
    pipeline = tmp_path / "pipeline"
    result = CliRunner().invoke(app, ["init-linker", str(pipeline), "--dictionary",
                                      str(data / "dict.txt"), "--encoder", str(out)])
    assert result.exit_code == 0, result.output
    loaded = spacy.load(pipeline)
    model, _ = load_encoder(out)
    in_memory = build_linker(model, load_dictionary(data / "dict.txt"))
    texts = [t for t, _ in MENTIONS] + ["renal failure", "liver fibrosis"]
    got = [loaded.get_pipe("bio_linker").linker.link_texts([t], 3)[t] for t in texts]
    want = [in_memory.get_pipe("bio_linker").linker.link_texts([t], 3)[t] for t in texts]
    assert [[c for c, _ in g] for g in got] == [[c for c, _ in w] for w in want]
    # the pipeline does not need the backbone directory any more
    assert str(backbone) not in (pipeline / "config.cfg").read_text()

    # BioSyn's rows are [dense | sqrt(lambda) tfidf]: HybridIndex ranks them as the
    # exhaustive search does when its candidates cover the dictionary
    index = ["--components.bio_linker.index.@misc", "spacy-biolink.HybridIndex.v1",
             "--components.bio_linker.index.dense_width", "32",
             "--components.bio_linker.index.dense.@misc", "spacy-biolink.FaissIndex.v1",
             "--components.bio_linker.index.sparse.@misc", "spacy-biolink.SparseIndex.v1"]
    result = CliRunner().invoke(app, ["init-linker", str(tmp_path / "candidates"), "--dictionary",
                                      str(data / "dict.txt"), "--encoder", str(out), *index])
    assert result.exit_code == 0, result.output
    candidates = spacy.load(tmp_path / "candidates").get_pipe("bio_linker")
    assert type(candidates.index).__name__ == "HybridIndex"
    for text, exhaustive in zip(texts, got):
        found = candidates.linker.link_texts([text], 3)[text]
        assert [c for c, _ in found] == [c for c, _ in exhaustive]
        assert numpy.allclose([s for _, s in found], [s for _, s in exhaustive], atol=1e-4)


def test_biosyn_resume_continues_the_same_run(data, tmp_path):
    # With dropout, epoch 2 matches only if the resume restores torch's generator (the
    # GPU's too, when training runs there).
    backbone = build_tiny_bert(tmp_path / "bert", backbone_words(), dropout=0.1)
    settings = dict(BIOSYN_FAST, **{"training.max_epochs": 2})
    straight = tmp_path / "straight"
    train_from_config(CONFIGS / "biosyn.cfg", straight, overrides=train_overrides(data, backbone, **settings))
    resumed = tmp_path / "resumed"
    train_from_config(CONFIGS / "biosyn.cfg", resumed,
                      overrides=train_overrides(data, backbone, **dict(settings, **{"training.max_epochs": 1})))
    train_from_config(CONFIGS / "biosyn.cfg", resumed, resume=True,
                      overrides=train_overrides(data, backbone, **settings))
    logs = [[json.loads(line) for line in (d / "training.jsonl").read_text().splitlines()]
            for d in (straight, resumed)]
    assert [r["epoch"] for r in logs[1]] == [1, 2]
    assert logs[1][1]["loss"] == pytest.approx(logs[0][1]["loss"], rel=1e-5)
    assert logs[1][1]["sparse_weight"] == pytest.approx(logs[0][1]["sparse_weight"], rel=1e-5)


def test_triplet_trains_and_loads(backbone, data, tmp_path):
    out = tmp_path / "triplet"
    meta = train_from_config(CONFIGS / "triplet.cfg", out, overrides=train_overrides(
        data, backbone, **{"training.max_epochs": 4, "training.learning_rate": 0.003,
                           "training.concepts_per_batch": 3, "training.search": "O"}))
    records = [json.loads(line) for line in (out / "training.jsonl").read_text().splitlines()]
    assert records[-1]["loss"] < records[0]["loss"]
    assert meta["method"] == "triplet" and meta["search"]["texts"] == "O"
    model, _ = load_encoder(out)
    assert model.attrs["output"] == "dense"
    nlp = build_linker(model, load_dictionary(data / "dict.txt"),
                       index_config={"@misc": "spacy-biolink.FaissIndex.v1", "kind": "flat"})
    assert nlp.get_pipe("bio_linker").linker.link_texts(["kidney failure"], 1)["kidney failure"][0][0] \
        == nlp.get_pipe("bio_linker").dictionary.concept_index("D000003")


def test_unknown_training_set_is_refused(backbone, data, tmp_path):
    with pytest.raises(BioLinkError, match="E654"):
        train_from_config(CONFIGS / "triplet.cfg", tmp_path / "x", overrides=train_overrides(
            data, backbone, **{"training.training_set": "X"}))


def test_biosyn_trains_on_distinct_mention_concept_pairs(data, tmp_path):
    from spacy_biolink.text.normalize import MentionNormalizer
    from spacy_biolink.training.biosyn import BioSynTrainer
    from spacy_biolink.training.data import read_dictionary

    corpus = tmp_path / "repeated.txt"
    corpus.write_text(pubtator(MENTIONS * 3), encoding="utf8")
    dictionary = read_dictionary(data / "dict.txt")
    settings = dict(max_epochs=1, batch_size=2, learning_rate=1e-5, sparse_learning_rate=0.01,
                    weight_decay=0.0, topk=4, initial_sparse_weight=0.0, max_train_mentions=0,
                    encode_batch_size=8, dev_augment_train=False)
    distinct, _ = BioSynTrainer(**settings, deduplicate=True).training_mentions(
        dictionary, corpus, MentionNormalizer(), seed=0)
    repeated, _ = BioSynTrainer(**settings).training_mentions(
        dictionary, corpus, MentionNormalizer(), seed=0)
    assert len(repeated) == 3 * len(distinct)
    assert len(set(distinct)) == len(distinct)


def test_biosyn_zero_epochs_saves_the_untrained_backbone(backbone, data, tmp_path):
    out = tmp_path / "untrained"
    meta = train_from_config(CONFIGS / "biosyn.cfg", out, overrides=train_overrides(
        data, backbone, **{**BIOSYN_FAST, "training.max_epochs": 0}))
    assert meta["epoch"] == 0 and meta["sparse_weight"] == 0.0
    untrained, _, _ = build_for_training({"paths": {"backbone": str(backbone)},
                                          "encoder": {"@architectures": "spacy-biolink.BioSynEncoder.v1"}})
    from spacy_biolink.encoders.transformer import embed

    saved, _ = load_encoder(out)
    texts = [t for t, _ in MENTIONS]
    assert numpy.allclose(embed(saved, texts), embed(untrained, texts), atol=1e-5)
