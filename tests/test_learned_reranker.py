"""The learned reranker (LightGBM lambdarank over candidate features): trained from its
config, added by init-linker as a stage, saved as text with the pipeline, set from the
config at load, and refusing anything but LightGBM's text format."""
import itertools

import numpy
import pytest
import spacy
import srsly

from spacy_biolink.errors import BioLinkError
from spacy_biolink.linker.pipeline import init_linker
from spacy_biolink.linker.stages.learned_reranker import FEATURES, LearnedReranker
from spacy_biolink.training import train_from_config
from spacy_biolink.training.learned_rerank import nil_threshold_for

from .conftest import doc_with_ents

ORGANS = ["liver", "kidney", "heart", "lung", "brain", "skin", "bone", "eye"]
LESIONS = ["cancer", "cyst", "failure", "inflammation", "injury"]
CONFIG = "configs/rank.cfg"


def dictionary_text() -> str:
    """40 concepts, names sharing every word with others: "liver cancer", "cancer of the
    liver", "LC3"."""
    lines = []
    for i, (organ, lesion) in enumerate(itertools.product(ORGANS, LESIONS)):
        names = [f"{organ} {lesion}", f"{lesion} of the {organ}",
                 f"{organ[0].upper()}{lesion[0].upper()}{i}"]
        lines.append(f"D{i:06d}||" + "|".join(names))
    return "\n".join(lines) + "\n"


def corpus_text(concepts) -> str:
    """One document per concept: its full name ("cancer of the liver"), which TF-IDF
    links right, then "liver disease", which every liver concept matches as well (the
    retriever's tie goes to the first): only the document tells which one it is."""
    lines = []
    pairs = list(itertools.product(ORGANS, LESIONS))
    for pmid, i in enumerate(concepts, start=1):
        organ, lesion = pairs[i]
        full, short = f"{lesion} of the {organ}", f"{organ} disease"
        title = f"Patients with {full}."
        abstract = f"The {short} was treated."
        start = len(title) + 1 + len("The ")
        lines += [f"{pmid}|t|{title}", f"{pmid}|a|{abstract}",
                  f"{pmid}\t14\t{14 + len(full)}\t{full}\tDisease\tD{i:06d}",
                  f"{pmid}\t{start}\t{start + len(short)}\t{short}\tDisease\tD{i:06d}", ""]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("rank")
    (root / "dict.txt").write_text(dictionary_text(), encoding="utf8")
    (root / "train.txt").write_text(corpus_text(range(0, 40)), encoding="utf8")
    (root / "dev.txt").write_text(corpus_text(range(0, 40, 2)), encoding="utf8")
    init_linker(root / "linker", root / "dict.txt")
    meta = train_from_config(CONFIG, root / "ranker", overrides={
        "paths.linker": str(root / "linker"), "paths.train": str(root / "train.txt"),
        "paths.dev": str(root / "dev.txt"), "training.k": 5, "training.min_data_in_leaf": 2,
        "training.max_rounds": 30, "training.early_stopping_rounds": 10,
        "training.threads": 1})
    return root, meta


def test_trains_from_its_config_into_text_files(trained):
    root, meta = trained
    out = root / "ranker"
    assert (out / "model.txt").read_text().startswith("tree")
    assert srsly.read_json(out / "learned_reranker.json")["features"] == list(FEATURES)
    assert meta["method"] == "learned_reranker" and meta["dev_mentions"] == 40
    assert set(meta["importance_gain"]) == set(FEATURES)
    # "liver disease" ties over the five liver concepts (the retriever is right for one in
    # five); the document's other mention tells the ranker which.
    assert meta["dev_acc@1_before"] == pytest.approx(0.6)
    assert meta["dev_acc@1"] == pytest.approx(1.0)
    assert max(meta["importance_gain"], key=meta["importance_gain"].get) == "doc_topk_votes"


def test_a_stage_of_the_pipeline_saved_and_set_from_the_config(trained, tmp_path):
    root, _ = trained
    nlp = init_linker(tmp_path / "linked", root / "dict.txt", reranker=root / "ranker")
    stage = nlp.config["components"]["bio_linker"]["stages"]["reranker"]
    assert stage["@misc"] == "spacy-biolink.LearnedReranker.v1" and stage["k"] == 5
    texts = ["cancers in the liver area", "cysts in the eye area", "failure of the heart"]

    def linked(pipeline):
        docs = [pipeline(doc_with_ents(pipeline, text, [text])) for text in texts]
        return [(d.ents[0].kb_id_, d.ents[0]._.kb_ents) for d in docs]

    expected = linked(nlp)
    # Scores are probabilities over the k candidates.
    assert all(abs(sum(s for _, s in ents) - 1.0) < 1e-3 for _, ents in expected)
    assert linked(spacy.load(tmp_path / "linked")) == expected
    one = spacy.load(tmp_path / "linked",
                     config={"components.bio_linker.stages.reranker.k": 1})
    assert [ents for _, ents in linked(one)] == [[(kb_id, 1.0)] for kb_id, _ in expected]
    strict = spacy.load(tmp_path / "linked",
                        config={"components.bio_linker.stages.reranker.nil_threshold": 1.0})
    assert [kb_id for kb_id, _ in linked(strict)] == ["NIL"] * len(texts)


def test_features_read_the_mention_the_names_and_the_document(trained):
    root, _ = trained
    nlp = init_linker(None, root / "dict.txt", reranker=root / "ranker")
    pipe = nlp.get_pipe("bio_linker")
    doc = doc_with_ents(nlp, "liver cancer and liver cancer again", [(0, 12), (17, 29)])
    from spacy_biolink.linker.policy import Mention

    mentions = [Mention.from_span(e) for e in doc.ents]
    links = pipe.link(mentions, 5, stop_before="reranker")
    rows = pipe.stages["reranker"].features(pipe.linker, mentions, links)
    column = {name: i for i, name in enumerate(FEATURES)}
    top = rows[0]
    assert top[column["exact_name"]] == 1.0 and top[column["rank"]] == 0
    assert top[column["gap_to_best"]] == 0.0 and top[column["trigram_jaccard"]] == 1.0
    # The other mention of the document has the same first concept.
    assert top[column["doc_top_votes"]] == 1.0
    assert rows.shape == (sum(len(c[:5]) for parts in links for _, c in parts), len(FEATURES))


def test_only_lightgbm_text_is_read(trained):
    root, _ = trained
    stage = LearnedReranker(k=5)
    stage.load_trained(root / "ranker")
    restored = LearnedReranker(k=5)
    restored.state_from_bytes(stage.state_to_bytes())
    rows = numpy.random.default_rng(0).random((7, len(FEATURES)))
    numpy.testing.assert_array_equal(restored.scores(rows), stage.scores(rows))
    import pickle

    forged = srsly.msgpack_dumps({"model": pickle.dumps(stage.booster).hex(), "label_types": {}})
    with pytest.raises(BioLinkError, match="E531"):
        restored.state_from_bytes(forged)
    with pytest.raises(BioLinkError, match="E531"):
        restored.state_from_bytes(b"\x00garbage")


def test_nil_threshold_reaches_the_precision_asked():
    top_prob = numpy.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4])
    top_right = numpy.array([True, True, True, False, True, False])
    assert nil_threshold_for(top_prob, top_right, 1.0) == 0.7
    assert nil_threshold_for(top_prob, top_right, 0.8) == 0.5
    assert nil_threshold_for(top_prob, numpy.zeros(6, bool), 0.5) is None


def test_cross_fitted_candidates_come_from_an_augmented_linker(trained):
    """cross_fit_folds: each fold of train documents is linked by the linker plus the
    other folds' mentions as names, dev by the linker plus every train mention, as
    init-linker --augment builds it: dev's full names are then found as exact names
    (exact_name 1 at the top), and no train mention is found as itself."""
    import spacy as spacy_module

    from spacy_biolink.training.learned_rerank import (LearnedRerankerTrainer, candidate_groups,
                                                       gold_mentions)

    root, _ = trained
    config = {"paths": {"linker": str(root / "linker")}}
    nlp = spacy_module.load(root / "linker")
    pipe = nlp.get_pipe("bio_linker")
    train_m, train_g = gold_mentions(nlp, pipe, root / "train.txt")
    dev_m, dev_g = gold_mentions(nlp, pipe, root / "dev.txt")
    stage = LearnedReranker(k=5)
    exact = FEATURES.index("exact_name")
    plain = candidate_groups(stage, pipe, dev_m, dev_g)
    trainer = LearnedRerankerTrainer(k=5, cross_fit_folds=2)
    train, dev = trainer._cross_fitted(stage, config, train_m, train_g, dev_m, dev_g)
    tops = [rows[0] for rows in dev.split(dev.features)]
    plain_tops = [rows[0] for rows in plain.split(plain.features)]
    # "liver disease" is no dictionary name; with every train mention added it is one.
    assert sum(row[exact] for row in plain_tops) == 20
    assert sum(row[exact] for row in tops) == 40
    # Every train mention is linked once, in its own document's fold.
    assert len(train.sizes) == len(train_m)
