"""The learned reranker (LightGBM lambdarank over candidate features): trained from its
config, added by init-linker as a stage, saved as text with the pipeline, set from the
config at load, and refusing anything but LightGBM's text format."""
import itertools
import json
import subprocess
import sys

import numpy
import pytest
import spacy
import srsly

from spacy_biolink.errors import BioLinkError
from spacy_biolink.linker.pipeline import init_linker
from spacy_biolink.linker.stages.learned_reranker import FEATURES, LearnedReranker
from spacy_biolink.training import train_from_config
from spacy_biolink.linker.stages.learned_reranker import nil_threshold_for

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


def test_train_cli_says_it_saved_a_reranker(trained, tmp_path):
    root, _ = trained
    result = subprocess.run(
        [sys.executable, "-m", "spacy_biolink", "train", CONFIG, "--output", str(tmp_path / "r"),
         "--paths.linker", str(root / "linker"), "--paths.train", str(root / "train.txt"),
         "--paths.dev", str(root / "dev.txt"), "--training.k", "5",
         "--training.min_data_in_leaf", "2", "--training.max_rounds", "5",
         "--training.threads", "1"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert f"Saved the trained reranker to {tmp_path / 'r'}" in result.stdout


TEXTS = ["cancers in the liver area", "cysts in the eye area", "failure of the heart"]


def linked(pipeline):
    docs = [pipeline(doc_with_ents(pipeline, text, [text])) for text in TEXTS]
    return [(d.ents[0].kb_id_, d.ents[0]._.kb_ents) for d in docs]


def test_a_stage_of_the_pipeline_saved_and_set_from_the_config(trained, tmp_path):
    """init-linker adds a ranker trained by configs/rank.cfg as LearnedReranker.v3 over
    FEATURES (retriever_features false): the top
    candidate's score is the calibrated probability that it is right, the others keep
    their ratio to it, and nil_precision sets the NIL threshold from the dev curve."""
    from spacy_biolink.linker.stages.learned_reranker import platt

    root, _ = trained
    nlp = init_linker(tmp_path / "linked", root / "dict.txt", reranker=root / "ranker")
    stage = nlp.config["components"]["bio_linker"]["stages"]["reranker"]
    assert stage["@misc"] == "spacy-biolink.LearnedReranker.v3" and stage["k"] == 5
    assert stage["retriever_features"] is False
    expected = linked(nlp)
    assert linked(spacy.load(tmp_path / "linked")) == expected
    # v1 on the same model: softmax probabilities over the k candidates.
    v1 = LearnedReranker(k=5, temperature=stage["temperature"])
    v1.load_trained(root / "ranker")
    pipe = nlp.get_pipe("bio_linker")
    pipe.linker.stages["reranker"] = v1
    softmax = linked(nlp)
    assert all(abs(sum(s for _, s in ents) - 1.0) < 1e-3 for _, ents in softmax)
    # The standard parser, as the stage reads it (srsly's is one unit in the last place
    # off for some decimals).
    a, b = json.loads((root / "ranker" / "calibration.json").read_text())["platt"]
    for (kb_id, ents), (kb_id1, ents1) in zip(expected, softmax):
        assert kb_id == kb_id1 and [c for c, _ in ents] == [c for c, _ in ents1]
        assert ents[0][1] == pytest.approx(float(platt(numpy.array([ents1[0][1]]), a, b)[0]),
                                           abs=1e-5)
        assert ents[1][1] / ents[0][1] == pytest.approx(ents1[1][1] / ents1[0][1], rel=1e-3)
    one = spacy.load(tmp_path / "linked",
                     config={"components.bio_linker.stages.reranker.k": 1})
    assert [[c for c, _ in ents] for _, ents in linked(one)] == [[kb_id] for kb_id, _ in expected]
    strict = spacy.load(tmp_path / "linked",
                        config={"components.bio_linker.stages.reranker.nil_precision": 0.999})
    cutoff = strict.get_pipe("bio_linker").linker.stages["reranker"].nil_cutoff
    calibration = json.loads((root / "ranker" / "calibration.json").read_text())
    assert cutoff == nil_threshold_for(numpy.array(calibration["dev_confidence"]),
                                       numpy.array(calibration["dev_right"]), 0.999)
    assert [kb_id for kb_id, _ in linked(strict)] == [
        kb_id if ents[0][1] >= cutoff else "NIL" for kb_id, ents in expected]
    with pytest.raises(BioLinkError, match="E530"):
        LearnedReranker(nil_precision=0.9)  # v1 has no calibration to read it from


def test_init_linker_writes_nil_precision_as_trained(trained, tmp_path):
    """The config says the precision the ranker was trained with, digit for digit
    (srsly's JSON parser read 0.95 as 0.9500000000000001)."""
    import json
    import shutil

    root, _ = trained
    ranker = tmp_path / "ranker"
    shutil.copytree(root / "ranker", ranker)
    settings = json.loads((ranker / "learned_reranker.json").read_text())
    settings["nil_precision"] = 0.95
    (ranker / "learned_reranker.json").write_text(json.dumps(settings))
    nlp = init_linker(tmp_path / "linked", root / "dict.txt", reranker=ranker)
    assert nlp.config["components"]["bio_linker"]["stages"]["reranker"]["nil_precision"] == 0.95
    lines = (tmp_path / "linked" / "config.cfg").read_text().splitlines()
    assert "nil_precision = 0.95" in lines


def test_calibration_and_label_types_are_read_as_saved(trained, tmp_path):
    """The dev curve, the Platt weights and the label -> type rates come back digit for
    digit (srsly's JSON parser reads 0.7 as 0.7000000000000001); a corrupt file is
    E017 naming it, one of the wrong shape E018."""
    import shutil

    from spacy_biolink.linker.stages.learned_reranker import read_trained

    root, _ = trained
    ranker = tmp_path / "ranker"
    shutil.copytree(root / "ranker", ranker)
    calibration = {"platt": [0.7, 0.3], "dev_confidence": [0.7, 0.3, 0.9],
                   "dev_right": [True, False, True]}
    (ranker / "calibration.json").write_text(json.dumps(calibration))
    (ranker / "label_types.json").write_text(json.dumps({"Disease": {"C": 0.7}}))
    assert srsly.json_loads("0.7") != 0.7  # what the test guards against
    _, _, label_types, read = read_trained(ranker)
    assert read == calibration and label_types == {"Disease": {"C": 0.7}}
    stage = LearnedReranker(k=5, calibrated=True, nil_precision=0.9)
    stage.load_trained(ranker)
    assert stage.calibration == calibration and stage.label_types["Disease"]["C"] == 0.7
    assert stage.nil_cutoff == 0.7
    (ranker / "calibration.json").write_text('{"platt": [0.7,')
    with pytest.raises(BioLinkError, match="E017.*calibration.json"):
        read_trained(ranker)
    (ranker / "calibration.json").write_text(json.dumps(calibration))
    (ranker / "label_types.json").write_text("[]")
    with pytest.raises(BioLinkError, match="E018.*label_types.json"):
        read_trained(ranker)


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


def reference_features(stage, linker, mentions, links):
    """The features spelled out as set arithmetic, one candidate at a time (the stage's
    first implementation): the vectorized ones must equal these exactly."""
    import math
    from collections import Counter, defaultdict

    def grams(text):
        padded = f" {text} "
        return frozenset(padded[i:i + 3] for i in range(max(len(padded) - 2, 1)))

    def jaccard(a, b):
        return len(a & b) / (len(a | b) or 1)

    dictionary, k = linker.dictionary, stage.k
    counts = numpy.bincount(dictionary.name_concepts, weights=dictionary.name_concept_counts,
                            minlength=dictionary.n_concepts)
    log_names = numpy.log1p(numpy.bincount(dictionary.name_concepts,
                                           minlength=dictionary.n_concepts))
    top_of_doc, topk_of_doc = defaultdict(Counter), defaultdict(Counter)
    for mention, parts in zip(mentions, links):
        if mention.doc is None:
            continue
        for _, candidates in parts:
            if candidates:
                top_of_doc[id(mention.doc)][candidates[0][0]] += 1
            topk_of_doc[id(mention.doc)].update({c for c, _ in candidates[:k]})
    rows = []
    for mention, parts in zip(mentions, links):
        doc_key = id(mention.doc) if mention.doc is not None else None
        raw = " ".join(mention.text.split())
        for text, candidates in parts:
            candidates = candidates[:k]
            if not candidates:
                continue
            key = linker.query_key(text)
            key_tokens, key_grams = set(key.split()), grams(key)
            best = candidates[0][1]
            rates = stage.label_types.get(mention.label or "", {})
            for rank, (concept, score) in enumerate(candidates):
                names = [(f, grams(f)) for f in map(linker.normalizer.name,
                                                    dictionary.names_of(concept))]
                exact = float(any(f == key for f, _ in names))
                if names:
                    folded, name_grams = max(names, key=lambda n: jaccard(key_grams, n[1]))
                    tokens = set(folded.split())
                    lexical = [exact, len(key_tokens & tokens) / (len(key_tokens | tokens) or 1),
                               jaccard(key_grams, name_grams),
                               min(len(key), len(folded)) / (max(len(key), len(folded)) or 1)]
                else:
                    lexical = [exact, 0.0, 0.0, 0.0]
                types = dictionary.types_of(concept) if dictionary.types is not None else ()
                type_rate = (max((rates.get(t, 0.0) for t in types), default=math.nan)
                             if rates else math.nan)
                if doc_key is not None:
                    top = top_of_doc[doc_key][concept] - (concept == candidates[0][0])
                    topk = topk_of_doc[doc_key][concept] - 1
                else:
                    top = topk = 0
                rows.append([score, rank, best - score, score / best if best > 0 else 0.0,
                             *lexical, float(len(parts) == 1 and text != raw and len(raw) <= 10),
                             float(len(parts) > 1), math.log1p(counts[concept]),
                             float(log_names[concept]), type_rate, float(top), float(topk)])
    return numpy.asarray(rows, dtype=numpy.float64).reshape(-1, len(FEATURES))


def assert_same_features(stage, pipe, mentions, k):
    links = pipe.link(mentions, k, stop_before="reranker" if "reranker" in pipe.linker.stages
                      else None)
    got = stage.features(pipe.linker, mentions, links)
    numpy.testing.assert_array_equal(got, reference_features(stage, pipe.linker, mentions, links))
    # A second batch reads the name tables the first one filled.
    numpy.testing.assert_array_equal(stage.features(pipe.linker, mentions[::-1], links[::-1]),
                                     reference_features(stage, pipe.linker, mentions[::-1],
                                                        links[::-1]))
    return got


def test_vectorized_features_equal_the_set_arithmetic(trained):
    """Every feature of the batch computation equals the one-candidate-at-a-time
    definition, on the tiny corpus (documents, ties, a mention without document) and
    with a second batch on warm name tables."""
    from spacy_biolink.linker.policy import Mention
    from spacy_biolink.training.learned_rerank import gold_mentions

    root, _ = trained
    nlp = spacy.load(root / "linker")
    pipe = nlp.get_pipe("bio_linker")
    mentions, _ = gold_mentions(nlp, pipe, root / "dev.txt")
    mentions.append(Mention(None, 0, 12, "liver cancer", "Disease"))
    stage = LearnedReranker(k=5)
    rows = assert_same_features(stage, pipe, mentions, 5)
    assert rows[:, FEATURES.index("doc_topk_votes")].max() > 0


def test_vectorized_features_on_medic(shared_data):
    """The same on MEDIC and NCBI-disease dev (abbreviations, composites, long names)."""
    from spacy_biolink.training.learned_rerank import gold_mentions

    nlp = init_linker(None, shared_data / "medic" / "medic_06Jul2012.txt.gz")
    pipe = nlp.get_pipe("bio_linker")
    mentions, _ = gold_mentions(nlp, pipe, shared_data / "ncbi_disease" /
                                "NCBIdevelopset_corpus.txt", keep_nil=True)
    assert_same_features(LearnedReranker(k=10), pipe, mentions[:300], 10)


def test_compiled_trees_score_as_lightgbm(trained):
    root, _ = trained
    stage = LearnedReranker(k=5)
    stage.load_trained(root / "ranker")
    rows = numpy.random.default_rng(0).random((500, len(FEATURES)))
    rows[::7, 3] = numpy.nan
    rows[::5, 2] = 0.0
    numpy.testing.assert_array_equal(stage.scores(rows), stage.booster.predict(rows))


def test_name_tables_start_again_when_full(trained, monkeypatch):
    """Past MAX_TABLE_NAMES the tables are emptied and refilled with the batch's
    concepts; the features do not change."""
    from spacy_biolink.linker.stages import learned_reranker
    from spacy_biolink.training.learned_rerank import gold_mentions

    root, _ = trained
    nlp = spacy.load(root / "linker")
    pipe = nlp.get_pipe("bio_linker")
    mentions, _ = gold_mentions(nlp, pipe, root / "dev.txt")
    links = pipe.link(mentions, 5)
    stage = LearnedReranker(k=5)
    before = stage.features(pipe.linker, mentions, links)
    monkeypatch.setattr(learned_reranker, "MAX_TABLE_NAMES", 3)
    view = stage.view(pipe.linker)
    assert len(view.name_fold) > 3
    numpy.testing.assert_array_equal(stage.features(pipe.linker, mentions[:2], links[:2]),
                                     before[:10])
    assert len(view.name_fold) == view.concept_count[view.concept_start >= 0].sum()
    numpy.testing.assert_array_equal(stage.features(pipe.linker, mentions, links), before)
