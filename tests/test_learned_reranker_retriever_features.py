"""LearnedReranker.v3: v2's features plus each retriever's own score, rank and gap (dense
and TF-IDF apart over a hybrid first stage) and the query key's corpus annotations;
trained by LearnedRerankerTrainer.v2, saved and loaded as v3, v2 left as it was."""
import math

import numpy
import pytest
import spacy
import srsly
from thinc.api import Model

from spacy_biolink.errors import BioLinkError
from spacy_biolink.kb.dictionary import Concept, ConceptDictionary
from spacy_biolink.linker.pipeline import init_linker
from spacy_biolink.linker.policy import Mention
from spacy_biolink.linker.stages.learned_reranker import (FEATURES, FEATURES_V3,
                                                          LearnedReranker)
from spacy_biolink.training import train_from_config
from spacy_biolink.training.dev import build_linker

from .test_learned_reranker import corpus_text, dictionary_text

CONFIG_V3 = "configs/rank_v3.cfg"

LETTERS = "abcdefghijklmnopqrstuvwxyz"
DENSE_WEIGHT, SPARSE_WEIGHT = 1.0, 0.5


def letters(text: str) -> numpy.ndarray:
    """A text's unit bag-of-letters vector: a dense encoder whose scores are easy to
    compute by hand."""
    row = numpy.array([text.count(ch) for ch in LETTERS], numpy.float32)
    return row / max(float(numpy.linalg.norm(row)), 1e-9)


def letters_encoder() -> Model:
    def forward(model, texts, is_train):
        return numpy.stack([letters(t) for t in texts]) if texts else \
            numpy.zeros((0, len(LETTERS)), numpy.float32), lambda d: d

    return Model("letters", forward)


def hybrid_linker(pairs=()):
    """A hybrid (letters + character TF-IDF, HybridIndex) linker over three concepts,
    with `pairs` (name, id) added as corpus annotations."""
    from spacy.util import registry

    from spacy_biolink.encoders.hybrid import hybrid_encoder

    dictionary = ConceptDictionary.from_concepts([
        Concept(["D1"], ["liver cancer", "hepatic tumour"]),
        Concept(["D2"], ["liver cyst", "cyst of liver"]),
        Concept(["D3"], ["kidney cancer"])])
    tfidf = registry.resolve({"m": {"@architectures": "spacy-biolink.TfidfEncoder.v1"}})["m"]
    encoder = hybrid_encoder(letters_encoder(), tfidf, DENSE_WEIGHT, SPARSE_WEIGHT)
    index = {"@misc": "spacy-biolink.HybridIndex.v1", "dense_width": len(LETTERS),
             "candidates": 10, "dense": {"@misc": "spacy-biolink.FaissIndex.v1", "kind": "flat"},
             "sparse": {"@misc": "spacy-biolink.SparseIndex.v1"}}
    nlp = build_linker(encoder, dictionary, index_config=index)
    pipe = nlp.get_pipe("bio_linker")
    if pairs:
        pipe.add_names(list(pairs))
    return nlp, pipe


def test_each_retrievers_score_rank_and_the_keys_annotations_by_hand():
    nlp, pipe = hybrid_linker([("liver tumour", "D1"), ("liver tumour", "D1"),
                               ("liver tumour", "D2")])
    linker = pipe.linker
    text = "liver tumour"
    mentions = [Mention.of_text(text)]
    links = pipe.link(mentions, 3)
    candidates = links[0][0][1]
    assert len(candidates) == 3
    stage = LearnedReranker(k=3, retriever_features=True)
    rows = stage.features(linker, mentions, links)
    assert rows.shape == (3, len(FEATURES_V3))
    column = {name: i for i, name in enumerate(FEATURES_V3)}
    key = linker.query_key(text)
    tfidf_model = linker.model.layers[1]
    query_tfidf = tfidf_model.predict([key]).toarray()[0]
    dictionary = pipe.dictionary
    dense, tfidf = [], []
    for concept, _ in candidates:
        names = [linker.normalizer.name(n) for n in dictionary.names_of(concept)]
        dense.append(DENSE_WEIGHT * max(float(letters(key) @ letters(n)) for n in names))
        tfidf.append(SPARSE_WEIGHT * max(float(query_tfidf @ tfidf_model.predict([n]).toarray()[0])
                                         for n in names))
    numpy.testing.assert_allclose(rows[:, column["dense_score"]], dense, atol=1e-5)
    numpy.testing.assert_allclose(rows[:, column["tfidf_score"]], tfidf, atol=1e-5)
    for name, values in (("dense", dense), ("tfidf", tfidf)):
        order = sorted(range(3), key=lambda i: (-round(values[i], 5), i))
        assert rows[:, column[f"{name}_rank"]].tolist() == [order.index(i) for i in range(3)]
        numpy.testing.assert_allclose(rows[:, column[f"{name}_gap"]],
                                      [max(values) - v for v in values], atol=1e-5)
    # The hybrid's score is the sum at one name: at most the sum of each part's best.
    assert (rows[:, column["score"]] <= rows[:, column["dense_score"]]
            + rows[:, column["tfidf_score"]] + 1e-5).all()
    # "liver tumour" was annotated D1 twice and D2 once, D3 never.
    ids = [dictionary.primary_id(c) for c, _ in candidates]
    expected = {"D1": (math.log1p(2), 2 / 3), "D2": (math.log1p(1), 1 / 3), "D3": (0.0, 0.0)}
    for row, concept_id in zip(rows, ids):
        assert row[column["key_annotations"]] == pytest.approx(expected[concept_id][0])
        assert row[column["key_annotation_share"]] == pytest.approx(expected[concept_id][1])
    # v3's first columns are v2's features of the same candidates.
    numpy.testing.assert_array_equal(rows[:, :len(FEATURES)],
                                     LearnedReranker(k=3).features(linker, mentions, links))
    # A text never annotated has no share.
    other = [Mention.of_text("kidney cancer")]
    other_rows = stage.features(linker, other, pipe.link(other, 3))
    assert numpy.isnan(other_rows[:, column["key_annotation_share"]]).all()
    assert (other_rows[:, column["key_annotations"]] == 0).all()


def test_over_one_retriever_its_part_is_the_score(tmp_path):
    (tmp_path / "dict.txt").write_text(dictionary_text(), encoding="utf8")
    pipe = init_linker(None, tmp_path / "dict.txt").get_pipe("bio_linker")
    mentions = [Mention.of_text("cancers of the liver")]
    links = pipe.link(mentions, 5)
    rows = LearnedReranker(k=5, retriever_features=True).features(pipe.linker, mentions, links)
    column = {name: i for i, name in enumerate(FEATURES_V3)}
    numpy.testing.assert_array_equal(rows[:, column["tfidf_score"]], rows[:, column["score"]])
    numpy.testing.assert_array_equal(rows[:, column["tfidf_rank"]], rows[:, column["rank"]])
    numpy.testing.assert_array_equal(rows[:, column["tfidf_gap"]],
                                     rows[:, column["gap_to_best"]])
    for name in ("dense_score", "dense_rank", "dense_gap"):
        assert numpy.isnan(rows[:, column[name]]).all()


@pytest.fixture(scope="module")
def trained_v3(tmp_path_factory):
    root = tmp_path_factory.mktemp("rank_v3")
    (root / "dict.txt").write_text(dictionary_text(), encoding="utf8")
    (root / "train.txt").write_text(corpus_text(range(0, 40)), encoding="utf8")
    (root / "dev.txt").write_text(corpus_text(range(0, 40, 2)), encoding="utf8")
    init_linker(root / "linker", root / "dict.txt")
    meta = train_from_config(CONFIG_V3, root / "ranker", overrides={
        "paths.linker": str(root / "linker"), "paths.train": str(root / "train.txt"),
        "paths.dev": str(root / "dev.txt"), "training.k": 5, "training.min_data_in_leaf": 2,
        "training.max_rounds": 30, "training.early_stopping_rounds": 10,
        "training.threads": 1, "training.nil_precision": 0.95})
    return root, meta


def test_v3_trains_saves_and_loads(trained_v3, tmp_path):
    root, meta = trained_v3
    assert srsly.read_json(root / "ranker" / "learned_reranker.json")["features"] == \
        list(FEATURES_V3)
    assert set(meta["importance_gain"]) == set(FEATURES_V3)
    assert meta["dev_acc@1_before"] == pytest.approx(0.6)
    assert meta["dev_acc@1"] == pytest.approx(1.0)
    nlp = init_linker(tmp_path / "linked", root / "dict.txt", reranker=root / "ranker")
    block = nlp.config["components"]["bio_linker"]["stages"]["reranker"]
    assert block["@misc"] == "spacy-biolink.LearnedReranker.v3"
    assert block["nil_precision"] == 0.95 and "nil_threshold" not in block
    from .test_learned_reranker import linked

    expected = linked(nlp)
    loaded = spacy.load(tmp_path / "linked")
    stage = loaded.get_pipe("bio_linker").linker.stages["reranker"]
    assert stage.retriever_features and stage.calibrated
    assert linked(loaded) == expected
    restored = LearnedReranker(k=5, retriever_features=True, calibrated=True)
    restored.state_from_bytes(stage.state_to_bytes())
    rows = numpy.random.default_rng(0).random((9, len(FEATURES_V3)))
    numpy.testing.assert_array_equal(restored.scores(rows), stage.scores(rows))
    # A v3 model does not load into a v2 stage, nor a v2 model into v3: their widths differ.
    with pytest.raises(BioLinkError, match="E531"):
        LearnedReranker(k=5, calibrated=True).state_from_bytes(stage.state_to_bytes())


def test_v2_is_unchanged():
    """v2's feature list and trainer are what they were: saved models keep their stage."""
    assert FEATURES == ("score", "rank", "gap_to_best", "score_ratio", "exact_name",
                        "token_jaccard", "trigram_jaccard", "length_ratio", "short_form",
                        "composite_part", "log_annotations", "log_names", "label_type_rate",
                        "doc_top_votes", "doc_topk_votes")
    from spacy.util import registry

    trainer = registry.misc.get("spacy-biolink.LearnedRerankerTrainer.v1")()
    assert not trainer.retriever_features and trainer.learning_rate == 0.05
    stage = registry.misc.get("spacy-biolink.LearnedReranker.v2")()
    assert stage.feature_names == FEATURES and stage.calibrated


def test_cross_fit_encodes_each_name_once():
    """The cross-fit's cache encodes only names it has not seen and gives each name
    the row the encoder gives it."""
    from scipy import sparse

    from spacy_biolink.training.learned_rerank import NameVectorCache

    calls = []

    def encode(names):
        calls.append(list(names))
        return sparse.csr_matrix(numpy.array([[len(n), n.count("a")] for n in names], "f"))

    cache = NameVectorCache(encode)
    first = cache(["abc", "aa", "abc"])
    second = cache(["aa", "b", "abc", "b"])
    assert calls == [["abc", "aa"], ["b"]]
    assert first.toarray().tolist() == [[3, 1], [2, 2], [3, 1]]
    assert second.toarray().tolist() == [[2, 2], [1, 0], [3, 1], [1, 0]]


def test_over_a_hybrid_the_queries_are_encoded_once():
    """v3 over a hybrid reads each retriever's part with the query rows the batch's
    search encoded: each query key is encoded once per batch (the keys the query cache
    answered, once by the stage), and the links are those of encoding them again."""
    import lightgbm

    nlp, pipe = hybrid_linker([("liver tumour", "D1"), ("liver tumour", "D2")])
    linker = pipe.linker
    rng = numpy.random.default_rng(0)
    rows = rng.random((300, len(FEATURES_V3)))
    # Ranks follow the dense and TF-IDF parts, so the kept rows decide the order.
    column = {name: i for i, name in enumerate(FEATURES_V3)}
    relevance = (rows[:, column["dense_score"]] > 0.5).astype(int) \
        + (rows[:, column["tfidf_score"]] > 0.6).astype(int)
    booster = lightgbm.train({"objective": "lambdarank", "verbose": -1, "min_data_in_leaf": 5,
                              "num_threads": 1, "seed": 0},
                             lightgbm.Dataset(rows, relevance, group=[3] * 100),
                             num_boost_round=20)
    stage = LearnedReranker(k=3, retriever_features=True)
    stage.set_model(booster.model_to_string(), {})
    assert stage.uses_query_vectors and not LearnedReranker(k=3).uses_query_vectors
    linker.reranker = stage
    encoded = []
    encode = linker.retriever.encode

    def counted(texts, **kwargs):
        encoded.extend(texts)
        return encode(texts, **kwargs)

    linker.retriever.encode = counted
    first = [Mention.of_text(t) for t in ("liver tumour", "cyst of the liver", "Liver tumour",
                                         "kidney cancers", "hepatic cancer")]
    second = [Mention.of_text(t) for t in ("kidney cancers", "liver cysts", "hepatic cancer",
                                          "tumour of liver")]
    keys = lambda batch: {linker.query_key(m.text) for m in batch}  # noqa: E731
    kept = [linker.link(first, 3)]
    assert sorted(encoded) == sorted(keys(first))
    encoded.clear()
    # Two keys the query cache answers, two new: the stage encodes only the cached two.
    kept.append(linker.link(second, 3))
    assert sorted(encoded) == sorted(keys(second))
    assert len(keys(first) & keys(second)) == 2 and len(keys(first)) == 4
    # Encoding again (as before the rows were kept) gives the same links, bit for bit.
    linker.clear_cache()
    linker.query_vectors = linker.encode
    encoded.clear()
    again = [linker.link(first, 3), linker.link(second, 3)]
    assert len(encoded) == 2 * len(keys(first)) + len(keys(second)) + len(keys(second)
                                                                           - keys(first))
    assert again == kept
    assert any(len({c for c, _ in parts[0][1]}) == 3 for batch in kept for parts in batch)
    assert linker._kept_queries is None
