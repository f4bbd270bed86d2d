"""CCA+DAN encoder, its trainer, the distance-weighted sampler and the hybrid encoder."""
import json
from pathlib import Path

import numpy
import pytest
import spacy
from spacy.util import registry

from spacy_biolink.errors import BioLinkError
from spacy_biolink.wordvectors import WordVectors, tokenize

from .conftest import TINY_MEDIC, doc_with_ents

torch = pytest.importorskip("torch")

DIM = 16
CONFIG = Path(__file__).resolve().parents[1] / "configs" / "dan.cfg"
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
            "encoder.hidden_width": 64, "encoder.dropout": 0.0, **extra}


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
    from spacy_biolink.pipeline import init_linker

    work, _ = trained
    with pytest.warns(UserWarning, match="W001"):
        nlp = init_linker(tmp_path / "nlp", work / "medic.txt", encoder=work / "out")
    assert nlp.get_pipe("bio_linker").index.__class__.__name__ == "FaissIndex"
    doc = nlp(doc_with_ents(nlp, "Patients with type 2 diabetes.", ["type 2 diabetes"]))
    assert doc.ents[0].kb_id_ == "D003924"
    reloaded = spacy.load(tmp_path / "nlp")
    again = reloaded(doc_with_ents(reloaded, "Patients with type 2 diabetes.", ["type 2 diabetes"]))
    assert again.ents[0]._.kb_ents == doc.ents[0]._.kb_ents


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


def test_training_excludes_held_out_names_and_zero_shot_concepts(tmp_path):
    from spacy_biolink.evaluation.synonym_retrieval import TRAIN, ZERO_SHOT, make_split
    from spacy_biolink.readers import load_dictionary
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


def test_train_cli_writes_split_and_early_stops_on_validation(tmp_path):
    from spacy_biolink.training import train_from_config

    torch.set_num_threads(1)
    (tmp_path / "medic.txt").write_text(TINY_MEDIC, encoding="utf8")
    tiny_vectors().to_disk(tmp_path / "vec")
    meta = train_from_config(CONFIG, tmp_path / "out", overrides={
        **overfit_overrides(tmp_path), "training.validation_rounds": 1,
        "training.max_epochs": 6, "training.learning_rate": 0.05})
    records = [json.loads(line) for line in (tmp_path / "out" / "training.jsonl").open()]
    scores = [r["validation_mAP"] for r in records]
    assert meta["split"]["names"]["validation"] >= 1
    if meta["stopped_early"]:
        # Stopped at the first drop, keeping the epoch before it.
        assert scores[-1] < scores[-2] and records[-1]["kept_epoch"] == len(records) - 1
        assert all(b >= a for a, b in zip(scores[:-2], scores[1:-1]))
        assert meta["validation_mAP"] == scores[-2]
    else:
        assert all(b >= a for a, b in zip(scores, scores[1:])) and len(records) == 6
