"""CCA+DAN encoder, its trainer, the distance-weighted sampler and the hybrid encoder."""
import json
from pathlib import Path

import numpy
import pytest
import spacy
from spacy.util import registry

from spacy_biolink.errors import BioLinkError
from spacy_biolink.encoders.wordvectors import WordVectors, tokenize

from .conftest import TINY_MEDIC, doc_with_ents

torch = pytest.importorskip("torch")

DIM = 16
CONFIG = Path(__file__).resolve().parents[1] / "configs" / "dan.cfg"
# configs/dan.cfg's validation schedule (the trainer's own defaults are the paper's: 0, 1)
EVAL_FREQUENCY, PATIENCE = 200, 10
CORPUS = """\
1|t|NIDDM and megacolon.
1|a|Selective tooth agenesis type 6 and Huntington disease.
1\t0\t5\tNIDDM\tDisease\tD003924
1\t10\t19\tmegacolon\tDisease\tD006527
1\t21\t52\tSelective tooth agenesis type 6\tDisease\tOMIM:613097
1\t57\t75\tHuntington disease\tDisease\tD006816

"""


def tiny_vectors() -> WordVectors:
    words = sorted({w for line in TINY_MEDIC.splitlines() for name in line.split("|")[2:]
                    for w in tokenize(name)} | {"megacolon", "selective", "tooth"})
    rng = numpy.random.default_rng(0)
    return WordVectors(words, rng.normal(size=(len(words), DIM)).astype(numpy.float32))


def overfit_overrides(tmp_path, **extra):
    return {"paths.dictionary": str(tmp_path / "medic.txt"), "paths.vectors": str(tmp_path / "vec"),
            "training.zero_shot_concepts": 0, "training.test_rounds": 0,
            "training.validation_rounds": 0, "training.max_epochs": 40,
            "training.batch_size": 8, "training.learning_rate": 0.01,
            "encoder.hidden_width": 64, "encoder.dropout": 0.0,
            "training.eval_frequency": 0, "training.patience": 1, **extra}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A CCA+DAN overfitted on the 6-concept dictionary (every name trained on)."""
    from spacy_biolink.training import train_from_config

    torch.set_num_threads(1)
    tmp_path = tmp_path_factory.mktemp("dan")
    (tmp_path / "medic.txt").write_text(TINY_MEDIC, encoding="utf8")
    tiny_vectors().to_disk(tmp_path / "vec")
    meta = train_from_config(CONFIG, tmp_path / "out",
                             overrides=overfit_overrides(tmp_path))
    return tmp_path, meta


def test_overfits_tiny_dictionary_and_names_retrieve_their_synonyms(trained):
    from spacy_biolink.encoders.saved import load_encoder
    from spacy_biolink.evaluation.synonym_retrieval import SynonymSplit, ranking_metrics

    tmp_path, meta = trained
    records = [json.loads(line) for line in (tmp_path / "out" / "training.jsonl").open()]
    assert records[0]["loss"] > 0.3
    assert records[-1]["loss"] < 0.02
    assert meta["method"] == "CCA+DAN" and meta["training_names"] == 17
    model, _ = load_encoder(tmp_path / "out")
    split = SynonymSplit.from_disk(tmp_path / "out" / "split.json")
    rows = model.predict(split.texts)
    assert rows.dtype == numpy.float32 and rows.shape == (17, DIM)
    numpy.testing.assert_allclose(numpy.linalg.norm(rows, axis=1), 1.0, rtol=1e-5)
    scores = ranking_metrics(rows, split.concepts, rows, split.concepts,
                             query_candidate=numpy.arange(len(rows)))
    assert scores["mAP"] == 1.0 and scores["queries"] == 17


def test_saved_model_rebuilds_from_config_with_vectors_and_cca_inside(trained):
    from spacy_biolink.encoders.dan import dan_network
    from spacy_biolink.encoders.saved import load_encoder, read_encoder_config

    tmp_path, _ = trained
    model_config, index_config, _ = read_encoder_config(tmp_path / "out")
    assert model_config["width"] == DIM and index_config["kind"] == "flat"
    model, _ = load_encoder(tmp_path / "out")
    rebuilt = registry.resolve({"model": model_config})["model"]
    assert not len(rebuilt.attrs["vectors"])
    rebuilt.from_bytes(model.to_bytes())
    assert len(rebuilt.attrs["vectors"]) == len(tiny_vectors())
    projection = dan_network(rebuilt).name_projection.numpy()
    assert not numpy.allclose(projection, numpy.eye(DIM))  # the fitted CCA came along
    texts = ["type 2 diabetes", "breast tumor", "no known words here"]
    numpy.testing.assert_array_equal(model.predict(texts), rebuilt.predict(texts))
    rebuilt.initialize(X=["anything"])  # bio_linker's initialize keeps trained weights
    numpy.testing.assert_array_equal(model.predict(texts), rebuilt.predict(texts))


def test_init_linker_with_encoder_links_and_reloads(trained, tmp_path):
    from spacy_biolink.linker.pipeline import init_linker

    work, _ = trained
    with pytest.warns(UserWarning, match="W001"):
        nlp = init_linker(tmp_path / "nlp", work / "medic.txt", encoder=work / "out")
    # The encoder's flat index becomes AutoFaissIndex.v1: still flat at this size, and
    # the same results as the flat index the encoder was saved with.
    index = nlp.get_pipe("bio_linker").index
    assert index.__class__.__name__ == "AutoFaissIndex" and index.kind == "flat"
    assert nlp.config["components"]["bio_linker"]["index"]["@misc"] == \
        "spacy-biolink.AutoFaissIndex.v1"
    doc = nlp(doc_with_ents(nlp, "Patients with type 2 diabetes.", ["type 2 diabetes"]))
    assert doc.ents[0].kb_id_ == "D003924"
    with pytest.warns(UserWarning, match="W001"):
        flat = init_linker(None, work / "medic.txt", encoder=work / "out",
                           overrides={"components.bio_linker.index.kind": "flat"})
    assert flat.get_pipe("bio_linker").index.__class__.__name__ == "FaissIndex"
    same = flat(doc_with_ents(flat, "Patients with type 2 diabetes.", ["type 2 diabetes"]))
    assert same.ents[0]._.kb_ents == doc.ents[0]._.kb_ents
    reloaded = spacy.load(tmp_path / "nlp")
    again = reloaded(doc_with_ents(reloaded, "Patients with type 2 diabetes.", ["type 2 diabetes"]))
    assert again.ents[0]._.kb_ents == doc.ents[0]._.kb_ents


def test_init_linker_index_overrides_apply_over_the_encoders_index(trained, tmp_path):
    from spacy_biolink.linker.pipeline import init_linker

    work, _ = trained
    with pytest.warns(UserWarning, match="W001"):
        nlp = init_linker(tmp_path / "nlp", work / "medic.txt", encoder=work / "out",
                          overrides={"components.bio_linker.index.kind": "hnsw"})
    assert nlp.get_pipe("bio_linker").index.kind == "hnsw"
    assert nlp.config["components"]["bio_linker"]["index"]["kind"] == "hnsw"
    doc = nlp(doc_with_ents(nlp, "Patients with type 2 diabetes.", ["type 2 diabetes"]))
    assert doc.ents[0].kb_id_ == "D003924"
    assert spacy.load(tmp_path / "nlp").get_pipe("bio_linker").index.kind == "hnsw"


def test_hybrid_scores_are_the_weighted_sum_of_both_cosines(trained):
    from spacy_biolink.encoders.saved import load_encoder

    tmp_path, _ = trained
    dan, _ = load_encoder(tmp_path / "out")
    config = {"model": {"@architectures": "spacy-biolink.HybridEncoder.v1",
                        "dense_weight": 2.0, "sparse_weight": 0.5,
                        "dense": {"@architectures": "spacy-biolink.DanEncoder.v1",
                                  "width": DIM, "hidden_width": 64},
                        "sparse": {"@architectures": "spacy-biolink.TfidfEncoder.v1"}}}
    hybrid = registry.resolve(config)["model"]
    hybrid.layers[0].from_bytes(dan.to_bytes())
    names = ["type 2 diabetes", "niddm", "breast cancer", "huntington disease"]
    hybrid.initialize(X=names)
    rows = hybrid.predict(names)
    dense = hybrid.layers[0].predict(names)
    tfidf = hybrid.layers[1].predict(names).toarray()
    expected = 2.0 * dense @ dense.T + 0.5 * tfidf @ tfidf.T
    numpy.testing.assert_allclose((rows @ rows.T).toarray(), expected, atol=1e-5)
    assert hybrid.attrs["output"] == "sparse"


def test_cca_gives_whitened_maximally_correlated_variates():
    from spacy_biolink.encoders.dan import fit_cca, project

    rng = numpy.random.default_rng(1)
    shared = rng.normal(size=(500, 2))
    x = numpy.hstack([shared, rng.normal(size=(500, 3))]) @ rng.normal(size=(5, 5))
    y = numpy.hstack([shared + 0.1 * rng.normal(size=(500, 2)),
                      rng.normal(size=(500, 3))]) @ rng.normal(size=(5, 5))
    x_mean, x_proj, y_mean, y_proj = fit_cca(x, y, regularization=1e-6)
    px, py = project(x, x_mean, x_proj), project(y, y_mean, y_proj)
    numpy.testing.assert_allclose(numpy.cov(px.T, bias=True), numpy.eye(5), atol=1e-3)
    correlations = [numpy.corrcoef(px[:, i], py[:, i])[0, 1] for i in range(5)]
    assert correlations[0] > 0.98 and correlations[1] > 0.98
    assert max(abs(c) for c in correlations[2:]) < 0.3
    with pytest.raises(BioLinkError, match="E624"):
        fit_cca(x[:1], y[:1])


def test_untrained_or_mismatched_encoder_says_what_to_do():
    from spacy_biolink.encoders.dan import set_word_vectors

    model = registry.resolve({"model": {"@architectures": "spacy-biolink.DanEncoder.v1",
                                        "width": 8, "hidden_width": 4}})["model"]
    with pytest.raises(BioLinkError, match="E622"):
        model.initialize(X=["a name"])
    with pytest.raises(BioLinkError, match="E621"):
        set_word_vectors(model, tiny_vectors())
    with pytest.raises(BioLinkError, match="E620"):
        registry.resolve({"model": {"@architectures": "spacy-biolink.DanEncoder.v1"}})


def test_distance_weighted_negatives_are_other_concepts_closer_more_often():
    from spacy_biolink.training.samplers import distance_weighted_negatives

    # Name 0's other-concept neighbours: 2 is close (cos 0.9), 3 far (cos 0).
    embeddings = numpy.array([[1, 0], [1, 0], [0.9, 0.43589], [0, 1]], numpy.float32)
    concepts = numpy.array([0, 0, 1, 2])
    draws = numpy.array([distance_weighted_negatives(embeddings, concepts, n_nearest=3,
                                                     rng=numpy.random.default_rng(s))
                         for s in range(300)])
    assert (concepts[draws] != concepts[None, :]).all()
    close = (draws[:, 0] == 2).mean()
    # P(2) = (1 / 0.1) / (1 / 0.1 + 1 / 1) = 0.91
    assert 0.85 < close < 0.97
    again = distance_weighted_negatives(embeddings, concepts, n_nearest=3,
                                        rng=numpy.random.default_rng(0))
    numpy.testing.assert_array_equal(again, draws[0])


def test_losses_reach_zero_when_geometry_is_right():
    from spacy_biolink.training.losses import (cosine_triplet_batch_mean,
                                               prototype_cosine_distance)

    a = torch.tensor([[1.0, 0.0]])
    assert cosine_triplet_batch_mean(a, a, torch.tensor([[0.0, 1.0]]), 0.1).item() == 0.0
    assert cosine_triplet_batch_mean(a, torch.tensor([[0.0, 1.0]]), a, 0.1).item() == \
        pytest.approx(1.1)
    encodings = torch.tensor([[1.0, 0.1], [1.0, -0.1], [0.0, 1.0]])
    groups = torch.tensor([0, 0, 1])
    targets = torch.tensor([[2.0, 0.0], [0.0, 3.0]])
    assert prototype_cosine_distance(encodings, groups, targets).item() == pytest.approx(0.0, abs=1e-6)


def test_per_triplet_hinge_keeps_the_gradient_of_a_violating_triplet():
    from spacy_biolink.training.losses import (cosine_triplet_batch_mean,
                                               cosine_triplet_per_triplet)

    # Triplet 0 violates the margin (its negative is the anchor itself); triplet 1 meets
    # it by far. The batch means cancel out, the per-triplet hinge does not.
    anchors = torch.tensor([[1.0, 0.0], [1.0, 0.0]], requires_grad=True)
    positives = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
    negatives = torch.tensor([[1.0, 0.0], [-1.0, 0.0]])
    assert cosine_triplet_batch_mean(anchors, positives, negatives, 0.1).item() == 0.0
    per_triplet = cosine_triplet_per_triplet(anchors, positives, negatives, 0.1)
    assert per_triplet.item() == pytest.approx(1.1 / 2)
    per_triplet.backward()
    assert anchors.grad[0].abs().sum() > 0 and anchors.grad[1].abs().sum() == 0


def test_paper_triplet_hinge_also_overfits(tmp_path, monkeypatch):
    from spacy_biolink.training import losses, train_from_config

    calls = []
    per_triplet = losses.cosine_triplet_per_triplet
    monkeypatch.setattr(losses, "cosine_triplet_per_triplet",
                        lambda *args: calls.append(1) or per_triplet(*args))
    monkeypatch.setattr(losses, "cosine_triplet_batch_mean", None)
    torch.set_num_threads(1)
    (tmp_path / "medic.txt").write_text(TINY_MEDIC, encoding="utf8")
    tiny_vectors().to_disk(tmp_path / "vec")
    meta = train_from_config(CONFIG, tmp_path / "out", overrides=overfit_overrides(
        tmp_path, **{"training.triplet_hinge": "triplet"}))
    assert meta["settings"]["triplet_hinge"] == "triplet" and calls
    records = [json.loads(line) for line in (tmp_path / "out" / "training.jsonl").open()]
    assert records[-1]["loss"] < 0.02 < records[0]["loss"]


def test_training_excludes_held_out_names_and_zero_shot_concepts(tmp_path):
    from spacy_biolink.evaluation.synonym_retrieval import TRAIN, ZERO_SHOT, make_split
    from spacy_biolink.kb.readers import load_dictionary
    from spacy_biolink.training.dan import DanTrainer

    (tmp_path / "medic.txt").write_text(TINY_MEDIC, encoding="utf8")
    (tmp_path / "corpus.txt").write_text(CORPUS, encoding="utf8")
    dictionary = load_dictionary(tmp_path / "medic.txt")
    split = make_split(dictionary, seed=3, zero_shot_concepts=1, test_rounds=1,
                       validation_rounds=1)
    config = {"paths": {"train": str(tmp_path / "corpus.txt")}}
    texts, concepts, added = DanTrainer().training_items(config, dictionary, split)
    zero_shot = {split.concept_ids[c] for c in split.concepts[split.indices(ZERO_SHOT)]}
    held_out = {t for t, r in zip(split.texts, split.roles) if r != TRAIN}
    assert not held_out & set(texts)
    assert not zero_shot & {split.concept_ids[c] for c in concepts}
    assert texts[:len(split.indices(TRAIN))] == split.texts_of(TRAIN)
    # "megacolon" is a new name of a training concept unless that concept is zero-shot.
    assert ("megacolon" in texts) == ("D006527" not in zero_shot)
    assert added == len(texts) - len(split.indices(TRAIN)) and added >= 1


def scripted_validation(monkeypatch, scores):
    """Make the trainer's validation mAPs `scores`, in order (a callable: i -> score), and
    keep the validation names' encodings each validation saw."""
    import spacy_biolink.training.dan as dan_training

    seen = []
    ranking_metrics = dan_training.ranking_metrics

    def scripted(queries, *args, **kwargs):
        seen.append(numpy.array(queries))
        score = scores(len(seen) - 1) if callable(scores) else scores[len(seen) - 1]
        return {**ranking_metrics(queries, *args, **kwargs), "mAP": score}

    monkeypatch.setattr(dan_training, "ranking_metrics", scripted)
    return seen


def train_with_validation(tmp_path, *, resume=False, **training):
    from spacy_biolink.training import train_from_config

    torch.set_num_threads(1)
    if not (tmp_path / "medic.txt").exists():
        (tmp_path / "medic.txt").write_text(TINY_MEDIC, encoding="utf8")
        tiny_vectors().to_disk(tmp_path / "vec")
    overrides = {**overfit_overrides(tmp_path), "training.validation_rounds": 1,
                 "training.batch_size": 2, "training.learning_rate": 0.05,
                 **{k if "." in k else f"training.{k}": v for k, v in training.items()}}
    meta = train_from_config(CONFIG, tmp_path / "out", overrides=overrides, resume=resume)
    records = [json.loads(line) for line in (tmp_path / "out" / "training.jsonl").open()]
    return meta, records


def kept_validation_encodings(tmp_path):
    from spacy_biolink.encoders.saved import load_encoder
    from spacy_biolink.evaluation.synonym_retrieval import VALIDATION, SynonymSplit

    model, _ = load_encoder(tmp_path / "out")
    split = SynonymSplit.from_disk(tmp_path / "out" / "split.json")
    return model.predict(split.texts_of(VALIDATION))


def test_train_cli_writes_split_and_stops_at_first_drop_keeping_the_epoch_before(
        tmp_path, monkeypatch):
    # eval_frequency 0 + patience 1: the paper's rule. A tie is no drop (epoch 3 is kept
    # over epoch 2); the drop at epoch 4 stops training.
    seen = scripted_validation(monkeypatch, [0.3, 0.5, 0.5, 0.45])
    meta, records = train_with_validation(tmp_path, eval_frequency=0, patience=1,
                                          max_epochs=10)
    steps_per_epoch = meta["steps_per_epoch"]
    assert meta["split"]["names"]["validation"] >= 1 and steps_per_epoch > 1
    assert [r["epoch"] for r in records] == [1, 2, 3, 4]
    assert [r["step"] for r in records] == [steps_per_epoch * e for e in (1, 2, 3, 4)]
    assert [r["validation_mAP"] for r in records] == [0.3, 0.5, 0.5, 0.45]
    assert records[-1]["stopped"] and "best" not in records[-1]
    assert meta["stopped_early"] and meta["epochs_trained"] == 4
    assert meta["best_epoch"] == 3 and meta["best_step"] == 3 * steps_per_epoch
    assert meta["validation_mAP"] == 0.5 and meta["validations"] == 4
    kept = kept_validation_encodings(tmp_path)
    numpy.testing.assert_allclose(kept, seen[2], atol=1e-6)
    assert not numpy.allclose(kept, seen[3], atol=1e-4)


def test_eval_frequency_validates_every_n_steps_within_epochs(tmp_path, monkeypatch):
    seen = scripted_validation(monkeypatch, lambda i: 0.1 + 0.01 * i)
    meta, records = train_with_validation(tmp_path, eval_frequency=3, patience=1, max_epochs=2)
    steps_per_epoch = meta["steps_per_epoch"]
    total = 2 * steps_per_epoch
    assert total % 3  # so that the last step is off the schedule
    # Every 3 steps across the epoch boundary, and once more after the last step.
    expected = list(range(3, total + 1, 3)) + [total]
    assert [r["step"] for r in records] == expected
    assert [r["epoch"] for r in records] == [
        s // steps_per_epoch if s % steps_per_epoch == 0 else round(s / steps_per_epoch, 4)
        for s in expected]
    assert any(r["epoch"] != int(r["epoch"]) for r in records)  # validations inside an epoch
    assert all({"loss", "loss_syn", "loss_proto", "validation_mAP"} <= set(r) for r in records)
    assert len(seen) == len(expected) == meta["validations"]
    assert not meta["stopped_early"] and meta["best_step"] == total
    assert meta["steps_trained"] == total and meta["epochs_trained"] == 2


def test_patience_counts_validations_without_improvement_and_keeps_the_best(tmp_path,
                                                                           monkeypatch):
    # patience 2: the dip at step 3 is survived; steps 5 and 6 are both below the best
    # (step 4, a tie with step 2, counts as the newer best), so training stops at step 6.
    scores = [0.2, 0.4, 0.3, 0.4, 0.35, 0.33]
    seen = scripted_validation(monkeypatch, scores)
    meta, records = train_with_validation(tmp_path, eval_frequency=1, patience=2,
                                          max_epochs=50)
    assert [r["step"] for r in records] == [1, 2, 3, 4, 5, 6]
    assert [r["validation_mAP"] for r in records] == scores
    assert [bool(r.get("best")) for r in records] == [True, True, False, True, False, False]
    assert records[-1]["stopped"] and meta["stopped_early"]
    assert meta["best_step"] == 4 and meta["validation_mAP"] == 0.4
    assert meta["steps_trained"] == 6
    kept = kept_validation_encodings(tmp_path)
    numpy.testing.assert_allclose(kept, seen[3], atol=1e-6)
    assert not numpy.allclose(kept, seen[5], atol=1e-4)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    assert (tmp_path / "out" / "training.png").read_bytes()[:4] == b"\x89PNG"


def test_resume_continues_steps_validations_and_best(tmp_path, monkeypatch):
    scripted_validation(monkeypatch, lambda i: 0.1 + 0.01 * i)
    first, _ = train_with_validation(tmp_path, eval_frequency=3, patience=5, max_epochs=2)
    meta, records = train_with_validation(tmp_path, eval_frequency=3, patience=5,
                                          max_epochs=3, resume=True)
    total = 3 * meta["steps_per_epoch"]
    steps = [r["step"] for r in records]
    assert steps == sorted(set(steps)) and steps[-1] == total
    assert meta["steps_trained"] == total and meta["best_step"] == total
    assert first["steps_trained"] == 2 * meta["steps_per_epoch"]


def test_validation_schedule_settings_and_their_defaults(tmp_path):
    from spacy import util

    from spacy_biolink.training.dan import DanTrainer

    paper = registry.resolve({"t": {"@misc": "spacy-biolink.DanTrainer.v1"}})["t"]
    assert (paper.eval_frequency, paper.patience) == (0, 1)
    shipped = registry.resolve({"t": util.load_config(CONFIG)["training"]})["t"]
    assert (shipped.eval_frequency, shipped.patience) == (EVAL_FREQUENCY, PATIENCE)
    assert paper.triplet_hinge == shipped.triplet_hinge == "batch"
    for bad in ({"eval_frequency": -1}, {"patience": 0}, {"triplet_hinge": "mean"}):
        with pytest.raises(BioLinkError, match="E644"):
            DanTrainer(**bad)({"paths": {}}, tmp_path)


def test_torch_threads_hold_while_training_and_are_restored(tmp_path, monkeypatch):
    """configs/dan.cfg trains on one torch thread (two waited on each other on a busy
    2-core machine, BENCHMARKS.md "CCA+DAN under load"); the trainer's default keeps
    torch's own; the caller's setting is back afterwards, even when training fails."""
    from spacy import util

    from spacy_biolink.training.dan import DanTrainer

    paper = registry.resolve({"t": {"@misc": "spacy-biolink.DanTrainer.v1"}})["t"]
    shipped = registry.resolve({"t": util.load_config(CONFIG)["training"]})["t"]
    assert (paper.torch_threads, shipped.torch_threads) == (0, 1)
    with pytest.raises(BioLinkError, match="E644"):
        DanTrainer(torch_threads=-1)({"paths": {}}, tmp_path)
    seen = []

    def fake_train(self, config, output_dir, *, resume):
        seen.append(torch.get_num_threads())
        if config.get("fail"):
            raise BioLinkError("E644 stand-in")
        return {}

    monkeypatch.setattr(DanTrainer, "_train", fake_train)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        shipped({}, tmp_path)
        paper({}, tmp_path)
        with pytest.raises(BioLinkError):
            shipped({"fail": True}, tmp_path)
        assert seen == [1, 2, 1]
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_resume_reads_a_checkpoint_written_before_the_validation_schedule():
    from spacy_biolink.training.dan import _Progress

    weights = {"hidden.weight": torch.zeros(2, 2)}
    # Stopped at the drop of epoch 2: the network holds epoch 1's weights.
    stopped = _Progress.from_checkpoint({"epoch": 2, "history": [0.4], "network": weights,
                                         "optimizer": {}, "stopped": True}, 10)
    assert (stopped.step, stopped.best_step, stopped.best_score) == (20, 10, 0.4)
    assert stopped.stopped and stopped.best_state is weights
    running = _Progress.from_checkpoint({"epoch": 3, "history": [0.3, 0.4, 0.5],
                                         "network": weights, "optimizer": {},
                                         "previous": weights}, 10)
    assert (running.step, running.best_step, running.best_score) == (30, 30, 0.5)
    assert not running.stopped and running.validations == 3


@pytest.mark.filterwarnings("ignore:.*W001")
def test_hybrid_is_saved_with_the_candidate_index_and_index_overrides_reach_it(tmp_path):
    """With [paths] dev the trainer saves OUTPUT/hybrid, searched by HybridIndex; an
    init-linker override can reach its nested blocks, or name another index, which then
    starts from its own defaults instead of the encoder's settings."""
    from spacy_biolink.encoders.saved import read_encoder_config
    from spacy_biolink.linker.pipeline import init_linker
    from spacy_biolink.training import train_from_config

    torch.set_num_threads(1)
    (tmp_path / "medic.txt").write_text(TINY_MEDIC, encoding="utf8")
    (tmp_path / "dev.txt").write_text(CORPUS, encoding="utf8")
    tiny_vectors().to_disk(tmp_path / "vec")
    meta = train_from_config(CONFIG, tmp_path / "out", overrides=overfit_overrides(
        tmp_path, **{"paths.dev": str(tmp_path / "dev.txt"), "training.max_epochs": 10}))
    assert meta["hybrid_sparse_weight"] in (0.5, 1.0, 2.0, 4.0)
    _, index_config, _ = read_encoder_config(tmp_path / "out" / "hybrid")
    assert index_config["@misc"] == "spacy-biolink.HybridIndex.v1"
    assert index_config["dense_width"] == DIM and index_config["dense"]["kind"] == "hnsw"

    def linked(overrides, name):
        nlp = init_linker(tmp_path / name, tmp_path / "medic.txt", encoder=tmp_path / "out" / "hybrid",
                          overrides=overrides)
        doc = nlp(doc_with_ents(nlp, "Patients with type 2 diabetes.", ["type 2 diabetes"]))
        return nlp.get_pipe("bio_linker").index, doc.ents[0]

    index, candidates = linked({}, "hybrid")
    assert type(index).__name__ == "HybridIndex" and index.dense.kind == "hnsw"
    assert candidates.kb_id_ == "D003924"
    index, _ = linked({"components.bio_linker.index.dense.kind": "flat"}, "flat")
    assert index.dense.kind == "flat" and index.candidates == index_config["candidates"]
    index, exact = linked({"components.bio_linker.index.@misc": "spacy-biolink.SparseIndex.v1"}, "exact")
    assert type(index).__name__ == "SparseIndex"
    # 64 candidates per part cover this dictionary: the same ranking as the exact search
    assert [c for c, _ in exact._.kb_ents] == [c for c, _ in candidates._.kb_ents]
    numpy.testing.assert_allclose([s for _, s in exact._.kb_ents],
                                  [s for _, s in candidates._.kb_ents], atol=1e-5)


def test_resume_continues_exactly(tmp_path):
    # Dropout draws from torch's generator: a resume that restarted it from the seed
    # would train epochs 3-4 on other masks than the uninterrupted run.
    for run in ("straight", "split"):
        (tmp_path / run).mkdir()
    settings = {"eval_frequency": 0, "patience": 10, "encoder.dropout": 0.5}
    straight, straight_records = train_with_validation(tmp_path / "straight", max_epochs=4,
                                                       **settings)
    train_with_validation(tmp_path / "split", max_epochs=2, **settings)
    resumed, resumed_records = train_with_validation(tmp_path / "split", max_epochs=4,
                                                     resume=True, **settings)
    assert resumed["steps_trained"] == straight["steps_trained"]
    assert [r["loss"] for r in resumed_records] == pytest.approx([r["loss"] for r in straight_records])
    assert ((tmp_path / "split" / "out" / "model").read_bytes()
            == (tmp_path / "straight" / "out" / "model").read_bytes())
