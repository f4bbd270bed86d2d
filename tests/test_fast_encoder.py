"""The fast name encoder (ResCNN over subword embeddings, issue 32) on a tiny random BERT's
tokenizer and embedding table built here: no MiniLM, no network."""
import json
from pathlib import Path

import numpy
import pytest
import spacy

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from spacy_biolink import load_dictionary  # noqa: E402
from spacy_biolink.encoders.saved import load_encoder  # noqa: E402
from spacy_biolink.errors import BioLinkError  # noqa: E402
from spacy_biolink.training import train_from_config  # noqa: E402
from spacy_biolink.encoders.fast import reduce_table  # noqa: E402
from spacy_biolink.training.fast import in_batch_marginal_nll  # noqa: E402
from spacy_biolink.training.samplers import concept_batches  # noqa: E402

from .conftest import build_tiny_bert  # noqa: E402
from .test_transformer_encoders import DICTIONARY, MENTIONS, backbone_words, pubtator  # noqa: E402

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
SMALL = {"encoder.embed_dim": 16, "encoder.hidden_width": 16, "encoder.width": 16,
         "training.concepts_per_batch": 6, "training.learning_rate": 0.01,
         "training.torch_threads": 1, "training.hybrid_sparse_weights": [0.5, 1.0]}


@pytest.fixture(scope="module")
def backbone(tmp_path_factory) -> Path:
    return build_tiny_bert(tmp_path_factory.mktemp("tiny_bert"), backbone_words())


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    path = tmp_path_factory.mktemp("data")
    (path / "dict.txt").write_text(DICTIONARY, encoding="utf8")
    (path / "train.txt").write_text(pubtator(MENTIONS), encoding="utf8")
    (path / "dev.txt").write_text(pubtator(MENTIONS), encoding="utf8")
    return path


def overrides(data, backbone, **extra):
    settings = {"paths.dictionary": str(data / "dict.txt"), "paths.backbone": str(backbone),
                **SMALL}
    settings.update(extra)
    return settings


def test_in_batch_marginal_nll_by_hand():
    embeddings = torch.nn.functional.normalize(torch.tensor(
        [[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]]), dim=-1)
    labels = torch.tensor([0, 0, 1])
    got = float(in_batch_marginal_nll(embeddings, labels, 1.0))
    # rows 0 and 1 have a positive (each other); row 2 has none and is left out
    cos = embeddings @ embeddings.T
    row0 = -(cos[0, 1] - torch.logsumexp(cos[0, [1, 2]], 0))
    row1 = -(cos[1, 0] - torch.logsumexp(cos[1, [0, 2]], 0))
    assert got == pytest.approx(float((row0 + row1) / 2), abs=1e-6)


def test_concept_batches_put_neighbours_beside_their_seed():
    rng = numpy.random.default_rng(0)
    batches = concept_batches(numpy.arange(6), {0: [5, 4], 1: [3]}, 3, 1, rng)
    assert {c for b in batches for c in b} == set(range(6))  # every seed trains
    for batch in batches:
        assert len(set(batch)) == len(batch) <= 3
        # 0 is nobody's neighbour, so it is there as a seed: its hardest neighbour follows
        if 0 in batch and batch.index(0) + 1 < len(batch):
            assert batch[batch.index(0) + 1] == 5


def test_vocabulary_recipe_trains_and_init_linker_links(backbone, data, tmp_path):
    from typer.testing import CliRunner

    from spacy_biolink.cli import app

    out = tmp_path / "fast"
    meta = train_from_config(CONFIGS / "fast_encoder.cfg", out, overrides=overrides(
        data, backbone, **{"training.align_epochs": 8}))
    assert meta["recipe"] == "vocabulary" and meta["hybrid_sparse_weight"] == 1.0
    records = [json.loads(line) for line in (out / "training.jsonl").read_text().splitlines()]
    assert len(records) == 8 and records[-1]["loss"] < records[0]["loss"]
    model, _ = load_encoder(out)
    assert model.attrs["output"] == "dense" and model.name == "fast_name_encoder"
    # The config trains FastNameEncoder.v2 (v1's weights, encoded by token count).
    assert '"spacy-biolink.FastNameEncoder.v2"' in (out / "encoder.cfg").read_text()
    vectors = model.predict(["kidney failure", "renal insufficiency"])
    assert vectors.shape == (2, 16)
    assert numpy.allclose(numpy.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)

    for encoder in (out, out / "hybrid"):
        pipeline = tmp_path / f"pipeline_{encoder.name}"
        result = CliRunner().invoke(app, ["init-linker", str(pipeline), "--dictionary",
                                          str(data / "dict.txt"), "--encoder", str(encoder)])
        assert result.exit_code == 0, result.output
        assert str(backbone) not in (pipeline / "config.cfg").read_text()
        nlp = spacy.load(pipeline)
        linker = nlp.get_pipe("bio_linker")
        if encoder.name == "hybrid":
            # The fast hybrid's index: each part's 32 best names, HNSW ef_search 32, and
            # the TF-IDF linker's default sparse index (exact at this size).
            assert (linker.index.candidates, linker.index.dense.ef_search) == (32, 32)
            assert type(linker.index.sparse).__name__ == "AutoSparseIndex"
            assert not linker.index.sparse.pruning
        # a dictionary name finds its own concept
        found = linker.linker.link_texts(["renal insufficiency"], 1)["renal insufficiency"]
        assert found[0][0] == linker.dictionary.concept_index("D000003")
        # the same vectors come out of the pipeline as out of the saved encoder
        if encoder == out:
            assert numpy.allclose(linker.model.predict(["kidney failure"]),
                                  model.predict(["kidney failure"]), atol=1e-6)


def test_hybrid_over_word_candidates_links_as_the_exact_one(backbone, data, tmp_path):
    """A trained hybrid's TF-IDF half past its min_names takes word candidates (what a
    hybrid over MeSH or UMLS does): forced here with min_names 0, it links the
    dictionary's names and the mentions to the same top concepts as the exact build."""
    from typer.testing import CliRunner

    from spacy_biolink.cli import app

    out = tmp_path / "fast"
    train_from_config(CONFIGS / "fast_encoder.cfg", out, overrides=overrides(
        data, backbone, **{"training.align_epochs": 2}))
    built = {}
    for label, extra in (("exact", []),
                         ("words", ["--components.bio_linker.index.sparse.min_names", "0"])):
        pipeline = tmp_path / label
        result = CliRunner().invoke(app, ["init-linker", str(pipeline), "--dictionary",
                                          str(data / "dict.txt"), "--encoder",
                                          str(out / "hybrid")] + extra)
        assert result.exit_code == 0, result.output
        built[label] = spacy.load(pipeline).get_pipe("bio_linker")
    assert not built["exact"].index.sparse.pruning and built["words"].index.sparse.pruning
    dictionary = load_dictionary(data / "dict.txt")
    texts = list(dict.fromkeys(list(dictionary.names) + [m for m, _ in MENTIONS]))
    tops = {label: [found[0][0] if found else None for found in
                    linker.linker.link_texts(texts, 1).values()]
            for label, linker in built.items()}
    assert tops["words"] == tops["exact"]


def test_corpus_recipe_marginal_runs_and_keeps_best_dev_epoch(backbone, data, tmp_path):
    out = tmp_path / "corpus"
    meta = train_from_config(CONFIGS / "fast_encoder.cfg", out, overrides=overrides(
        data, backbone, **{"paths.train": str(data / "train.txt"),
                           "paths.dev": str(data / "dev.txt"), "training.align_epochs": 2,
                           "training.corpus_epochs": 2, "training.topk": 4,
                           "training.mention_batch_size": 3,
                           "training.corpus_objective": "marginal"}))
    records = [json.loads(line) for line in (out / "training.jsonl").read_text().splitlines()]
    assert [r["phase"] for r in records] == ["align", "align", "corpus", "corpus"]
    assert not any("sparse_weight" in r for r in records)
    assert meta["recipe"] == "corpus"
    assert meta["dev_acc@1"] == max(r["dev_acc@1"] for r in records)
    assert meta["hybrid_sparse_weight"] in (0.5, 1.0)
    assert (out / "hybrid" / "encoder.cfg").is_file()


def test_hybrid_objective_learns_the_sparse_weight_and_offers_it_on_dev(backbone, data,
                                                                      tmp_path):
    """FastEncoderTrainer.v3's "hybrid" objective, configs/fast_encoder.cfg's: the TF-IDF
    cosine is in the loss (its weight gets a gradient and moves from the start value), the
    corpus epochs are scored as the hybrid at the current weight, and OUTPUT/hybrid's
    weight is chosen on dev among the grid and the kept epoch's learned weight."""
    out = tmp_path / "hybrid_objective"
    meta = train_from_config(CONFIGS / "fast_encoder.cfg", out, overrides=overrides(
        data, backbone, **{"paths.train": str(data / "train.txt"),
                           "paths.dev": str(data / "dev.txt"), "training.align_epochs": 0,
                           "training.corpus_epochs": 2, "training.topk": 4,
                           "training.mention_batch_size": 3,
                           "training.hybrid_weight_learning_rate": 0.05}))
    records = [json.loads(line) for line in (out / "training.jsonl").read_text().splitlines()]
    assert [r["phase"] for r in records] == ["corpus", "corpus"]
    learned = [r["sparse_weight"] for r in records]
    assert learned[0] != 1.0 and learned[0] != learned[1]
    assert all(w >= 0.0 for w in learned)
    saved = json.loads((out / "hybrid" / "meta.json").read_text())
    kept = next(r for r in records if r["dev_acc@1"] == meta["dev_acc@1"])
    tried = set(saved["dev_acc@1_by_weight"])
    assert tried == {"0.5", "1.0", str(round(kept["sparse_weight"], 4))}
    assert str(meta["hybrid_sparse_weight"]) in tried


def test_hybrid_objective_is_v3s():
    from spacy.util import registry

    with pytest.raises(BioLinkError, match="E654"):
        registry.resolve({"t": {"@misc": "spacy-biolink.FastEncoderTrainer.v2",
                                "corpus_objective": "hybrid"}})
    trainer = registry.resolve({"t": {"@misc": "spacy-biolink.FastEncoderTrainer.v3"}})["t"]
    assert trainer.corpus_objective == "hybrid" and trainer.recipe == "auto"


def test_corpus_recipe_without_train_is_refused(backbone, data, tmp_path):
    with pytest.raises(BioLinkError, match="E694"):
        train_from_config(CONFIGS / "fast_encoder.cfg", tmp_path / "x", overrides=overrides(
            data, backbone, **{"training.recipe": "corpus"}))


def test_untrained_architecture_says_what_to_do():
    from spacy.util import registry

    with pytest.raises(BioLinkError, match="E690"):
        registry.resolve({"m": {"@architectures": "spacy-biolink.FastNameEncoder.v1"}})


def test_reduce_table_keeps_the_principal_directions():
    rng = numpy.random.default_rng(0)
    # rows in a 2-d plane of a 5-d space: 2 principal directions keep their geometry
    table = (rng.normal(size=(50, 2)) @ rng.normal(size=(2, 5)) + 3.0).astype(numpy.float32)
    reduced = reduce_table(table, 2)
    assert reduced.shape == (50, 2)
    before = numpy.linalg.norm(table[:, None] - table[None], axis=-1)
    after = numpy.linalg.norm(reduced[:, None] - reduced[None], axis=-1)
    ratio = after[before > 0] / before[before > 0]
    assert numpy.allclose(ratio, ratio[0], rtol=1e-3)
    assert reduce_table(table, 8) is not None and reduce_table(table, 8).shape == (50, 5)


def test_similarity_kl_by_hand():
    from spacy_biolink.training.distil import similarity_kl

    student = torch.nn.functional.normalize(torch.tensor([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]]),
                                            dim=-1)
    teacher = torch.nn.functional.normalize(torch.tensor([[1.0, 0.2], [1.0, 0.0], [0.0, 1.0]]),
                                            dim=-1)
    got = float(similarity_kl(student, teacher, 0.5))
    total = 0.0
    for i in range(3):
        others = [j for j in range(3) if j != i]
        p = torch.softmax(teacher[i] @ teacher[others].T / 0.5, 0)
        q = torch.softmax(student[i] @ student[others].T / 0.5, 0)
        total += float((p * (p.log() - q.log())).sum())
    assert got == pytest.approx(total / 3, abs=1e-6)
    # a student with the teacher's geometry has nothing left to learn
    assert float(similarity_kl(teacher, teacher, 0.5)) == pytest.approx(0.0, abs=1e-6)


def test_nearest_names_leaves_a_name_out_of_its_own_list():
    from spacy_biolink.training.distil import interleave, nearest_names

    names = numpy.eye(4, dtype=numpy.float32) + 0.1 * numpy.arange(4, dtype=numpy.float32)
    queries = numpy.concatenate([names, names[2:3]])
    got = nearest_names(queries, names, 2, exclude_self=numpy.array([1, 1, 1, 1, 0], bool))
    assert got.shape == (5, 2)
    assert all(i not in got[i] for i in range(4)) and got[4, 0] == 2  # a mention keeps it
    assert interleave(numpy.array([[1, 2, 3]]), numpy.array([[2, 5, 6]])).tolist() == [[1, 2, 5]]


def test_distil_recipe_caches_the_teacher_and_trains(backbone, data, tmp_path, caplog):
    from spacy_biolink.training import distil

    cache = tmp_path / "cache"
    settings = {"training.recipe": "distil", "paths.teacher": str(backbone),
                "paths.teacher_cache": str(cache), "training.distil_epochs": 3,
                "training.distil_batch_size": 8, "training.align_epochs": 0}
    meta = train_from_config(CONFIGS / "fast_encoder.cfg", tmp_path / "a",
                             overrides=overrides(data, backbone, **settings))
    assert meta["recipe"] == "distil" and meta["teacher"] == str(backbone)
    records = [json.loads(line) for line in
               (tmp_path / "a" / "training.jsonl").read_text().splitlines()]
    assert [r["phase"] for r in records] == ["distil"] * 3
    assert records[-1]["loss"] < records[0]["loss"]
    keys = list(cache.glob("teacher_*.json"))
    assert len(keys) == 1 and len(list(cache.glob("teacher_*.npy"))) == 2
    vectors = numpy.load(str(keys[0]).replace(".json", ".vectors.npy"), allow_pickle=False)
    assert vectors.shape == (meta["distil_texts"], 32)  # the tiny BERT's width

    # The same teacher and texts again: the cache answers, the teacher is never loaded.
    def no_teacher(*args, **kwargs):
        raise AssertionError("the teacher ran although its vectors were cached")

    original = distil.load_teacher
    distil.load_teacher = no_teacher
    try:
        train_from_config(CONFIGS / "fast_encoder.cfg", tmp_path / "b",
                          overrides=overrides(data, backbone, **settings))
        # With the training mentions the texts differ: a new key, so the teacher must run.
        with pytest.raises(AssertionError, match="teacher ran"):
            train_from_config(CONFIGS / "fast_encoder.cfg", tmp_path / "c", overrides=overrides(
                data, backbone, **settings, **{"paths.train": str(data / "train.txt")}))
    finally:
        distil.load_teacher = original
    # Then the corpus epochs follow the teacher's.
    meta = train_from_config(CONFIGS / "fast_encoder.cfg", tmp_path / "d", overrides=overrides(
        data, backbone, **{**settings, "training.distil_epochs": 1, "training.corpus_epochs": 1,
                           "training.topk": 4, "training.mention_batch_size": 3,
                           "paths.train": str(data / "train.txt")}))
    records = [json.loads(line) for line in
               (tmp_path / "d" / "training.jsonl").read_text().splitlines()]
    assert [r["phase"] for r in records] == ["distil", "corpus"]
    assert len(list(cache.glob("teacher_*.json"))) == 2


def test_max_minutes_leaves_the_teachers_pass_out(backbone, data, tmp_path, monkeypatch):
    """A teacher pass longer than the whole budget (no cache yet, a loaded box) still
    leaves the budget's time for training: the distil epoch runs."""
    import time

    from spacy_biolink.training import distil

    original = distil.teacher_targets

    def slow_teacher(*args, **kwargs):
        time.sleep(4.0)
        return original(*args, **kwargs)

    monkeypatch.setattr(distil, "teacher_targets", slow_teacher)
    settings = {"training.recipe": "distil", "paths.teacher": str(backbone),
                "training.distil_epochs": 1, "training.distil_batch_size": 8,
                "training.align_epochs": 0, "training.max_minutes": 0.05}
    started = time.perf_counter()
    meta = train_from_config(CONFIGS / "fast_encoder.cfg", tmp_path / "a",
                             overrides=overrides(data, backbone, **settings))
    elapsed = time.perf_counter() - started
    records = [json.loads(line) for line in
               (tmp_path / "a" / "training.jsonl").read_text().splitlines()]
    assert [r["phase"] for r in records] == ["distil"]
    # The meta reports the pass apart from the training that max_minutes bounds.
    assert meta["setup_minutes"] * 60 >= 4.0
    assert (meta["train_minutes"] + meta["setup_minutes"]) * 60 <= elapsed
    assert meta["train_minutes"] * 60 <= elapsed - 4.0


def test_teacher_that_is_not_an_encoder_is_refused(backbone, data, tmp_path):
    with pytest.raises(BioLinkError, match="E695"):
        train_from_config(CONFIGS / "fast_encoder.cfg", tmp_path / "x", overrides=overrides(
            data, backbone, **{"training.recipe": "distil", "paths.teacher": str(tmp_path)}))


def test_v1_trainer_keeps_its_two_recipes():
    from spacy.util import registry

    with pytest.raises(BioLinkError, match="E654"):
        registry.resolve({"t": {"@misc": "spacy-biolink.FastEncoderTrainer.v1",
                                "recipe": "distil"}})
    trainer = registry.resolve({"t": {"@misc": "spacy-biolink.FastEncoderTrainer.v2",
                                      "recipe": "distil"}})["t"]
    assert trainer.recipe == "distil" and trainer.distil_epochs == 2


def test_v2_encodes_by_token_count_with_v1s_weights_and_vectors(backbone):
    """FastNameEncoder.v2 reads a v1 encoder's bytes and gives its vectors (up to float
    rounding) with no padded position in any forward pass."""
    from spacy.util import registry

    from spacy_biolink.encoders.fast import init_from_backbone
    from spacy_biolink.encoders.torch_wrapper import torch_module

    sizes = {"vocab_size": 0, "embed_dim": 16, "hidden_width": 16, "width": 16}
    models = {}
    for version in ("v1", "v2"):
        from spacy_biolink.encoders.fast import backbone_vocab_size

        sizes["vocab_size"] = backbone_vocab_size(backbone)
        models[version] = registry.resolve({"m": {
            "@architectures": f"spacy-biolink.FastNameEncoder.{version}", **sizes}})["m"]
    init_from_backbone(models["v1"], backbone)
    models["v2"].from_bytes(models["v1"].to_bytes())
    masks = []
    module = torch_module(models["v2"])
    hook = module.register_forward_pre_hook(lambda _, inputs: masks.append(inputs[1].numpy()))
    texts = ["kidney failure", "renal insufficiency of the kidney", "", "failure",
             "kidney", "renal failure", "insufficiency"] * 3
    try:
        v1, v2 = models["v1"].predict(texts), models["v2"].predict(texts)
    finally:
        hook.remove()
    assert numpy.allclose(v1, v2, atol=1e-6) and not numpy.array_equal(v1, numpy.zeros_like(v1))
    # one pass per token count; only the empty text's row is masked
    lengths = sorted(int(m.shape[1]) for m in masks)
    assert len(set(lengths)) == len(lengths) and len(masks) >= 3
    assert all(m.all() or not m.any() for m in masks)


@pytest.fixture(scope="module")
def triplet_teacher(backbone, data, tmp_path_factory) -> Path:
    """A triplet network trained here (`train configs/triplet.cfg`), as the teacher."""
    out = tmp_path_factory.mktemp("triplet") / "triplet"
    train_from_config(CONFIGS / "triplet.cfg", out, overrides={
        "paths.dictionary": str(data / "dict.txt"), "paths.train": str(data / "train.txt"),
        "paths.dev": str(data / "dev.txt"), "paths.backbone": str(backbone),
        "training.max_epochs": 2, "training.learning_rate": 0.003,
        "training.concepts_per_batch": 3, "training.search": "O"})
    return out


def test_saved_triplet_encoder_is_a_teacher(backbone, data, triplet_teacher, tmp_path):
    """The trained triplet directory teaches with its own (trained) weights: the cached
    vectors are that encoder's, not its backbone's, and the distil recipe trains from it."""
    from spacy_biolink.encoders.transformer import embed
    from spacy_biolink.training.distil import load_teacher, resolve_teacher, teacher_targets

    assert resolve_teacher(str(triplet_teacher)) == triplet_teacher
    texts = ["kidney failure", "renal failure", "heart attack", "patient with no abstract"]
    vectors, nearest = teacher_targets(triplet_teacher, texts, 3, 2, tmp_path / "cache")
    trained, _ = load_encoder(triplet_teacher)
    expected = embed(trained, texts, normalize=True)
    assert numpy.allclose(vectors, expected, atol=1e-5)
    untrained = embed(load_teacher(backbone), texts, normalize=True)
    assert not numpy.allclose(vectors, untrained, atol=1e-3)
    assert nearest.shape == (4, 2) and all(i not in nearest[i] for i in range(3))

    meta = train_from_config(CONFIGS / "fast_encoder.cfg", tmp_path / "student", overrides=overrides(
        data, backbone, **{"training.recipe": "distil", "paths.teacher": str(triplet_teacher),
                           "training.distil_epochs": 1, "training.distil_batch_size": 8,
                           "training.align_epochs": 0}))
    assert meta["teacher"] == str(triplet_teacher) and meta["phase"] == "distil"
    assert load_encoder(tmp_path / "student")[0].attrs["output"] == "dense"


def test_teacher_weights_file_names_its_directory(backbone, data, triplet_teacher, tmp_path):
    """--paths.teacher DIR/model (the saved encoder's weights file) says to pass DIR."""
    with pytest.raises(BioLinkError, match="E697") as err:
        train_from_config(CONFIGS / "fast_encoder.cfg", tmp_path / "x", overrides=overrides(
            data, backbone, **{"training.recipe": "distil",
                               "paths.teacher": str(triplet_teacher / "model")}))
    assert str(triplet_teacher) in str(err.value)


def test_load_time_settings_are_used_or_refused_by_what_they_change(backbone, data, tmp_path):
    """batch_size only says how many names are encoded at once: spacy.load's value is the
    one used (the saved one was, silently). max_length changes the vectors: with an index
    built, E126; in encoder.cfg before init-linker, it is the one the index is built with."""
    from thinc.api import Config

    from spacy_biolink.linker.pipeline import init_linker

    out = tmp_path / "fast"
    train_from_config(CONFIGS / "fast_encoder.cfg", out, overrides=overrides(
        data, backbone, **{"training.align_epochs": 1}))
    init_linker(tmp_path / "nlp", data / "dict.txt", encoder=out)
    saved = spacy.load(tmp_path / "nlp")
    assert saved.get_pipe("bio_linker").model.attrs["batch_size"] == 1024
    nlp = spacy.load(tmp_path / "nlp",
                     config={"components": {"bio_linker": {"encoder": {"batch_size": 3}}}})
    linker = nlp.get_pipe("bio_linker")
    assert linker.model.attrs["batch_size"] == 3
    names = ["kidney failure", "renal insufficiency", "acute kidney injury", "anemia"]
    assert numpy.allclose(linker.model.predict(names),
                          saved.get_pipe("bio_linker").model.predict(names), atol=1e-6)
    with pytest.raises(BioLinkError, match=r"E126.*max_length = 25 .*fast_name_encoder.*"
                                           r"config says 2"):
        spacy.load(tmp_path / "nlp",
                   config={"components": {"bio_linker": {"encoder": {"max_length": 2}}}})

    config = Config().from_disk(out / "encoder.cfg", interpolate=False)
    config["model"]["max_length"] = 2
    config.to_disk(out / "encoder.cfg")
    model, _ = load_encoder(out)
    assert model.attrs["tokenizer"].max_length == 2
    short = init_linker(None, data / "dict.txt", encoder=out).get_pipe("bio_linker").model
    # Cut at 2 tokens ([CLS] and one word piece), two names that differ after their first
    # word piece get the same vector.
    assert short.attrs["tokenizer"].max_length == 2
    first, second = short.predict(["kidney failure", "kidney injury"])
    assert numpy.allclose(first, second, atol=1e-6)
    first, second = saved.get_pipe("bio_linker").model.predict(["kidney failure", "kidney injury"])
    assert not numpy.allclose(first, second, atol=1e-3)
