"""The Siamese synonymy verifier: pair generation, training, CLI, threshold, linking stage."""
import itertools

import numpy
import pytest
import srsly
from typer.testing import CliRunner

from spacy_biolink import load_dictionary
from spacy_biolink.errors import BioLinkError
from spacy_biolink.evaluation.pair_scores import (auc_by_negative_kind, best_f1_threshold,
                                                  pair_scores, roc_auc)
from spacy_biolink.evaluation.name_pairs import (NEGATIVE_KINDS, concept_names_by_split,
                                                 dictionary_pairs, split_concepts)
from spacy_biolink.linker.stages.verifier import CandidateVerifier, best_name_finder, verify_links

torch = pytest.importorskip("torch")

ORGANS = ["liver", "kidney", "heart", "lung", "brain", "skin"]
LESIONS = ["cancer", "cyst", "failure", "inflammation"]
GREEK = {"liver": "hepatic", "kidney": "renal", "heart": "cardiac", "lung": "pulmonary",
         "brain": "cerebral", "skin": "cutaneous"}
LATIN = {"cancer": "neoplasm", "cyst": "cystic lesion", "failure": "insufficiency",
         "inflammation": "itis disorder"}


def synthetic_medic() -> str:
    """24 concepts with four names each: "liver cancer", "cancer of the liver",
    "hepatic neoplasm", "LC3"; every word is shared with other concepts, so only the
    pairing of words tells concepts apart."""
    lines = []
    for i, (organ, lesion) in enumerate(itertools.product(ORGANS, LESIONS)):
        names = [f"{organ} {lesion}", f"{lesion} of the {organ}", f"{GREEK[organ]} {LATIN[lesion]}",
                 f"{organ[0].upper()}{lesion[0].upper()}{i}"]
        lines.append(f"D{i:06d}||" + "|".join(names))
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def synthetic_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("siamese") / "synthetic_medic.txt"
    path.write_text(synthetic_medic(), encoding="utf8")
    return path


@pytest.fixture(scope="module")
def trained_verifier(synthetic_path, tmp_path_factory):
    """A verifier overfitted on every concept of the synthetic dictionary (dev and test
    are small held-out splits; the test only checks it learned its training pairs)."""
    from thinc.api import Config

    from spacy_biolink.training.siamese import SiameseTrainer

    torch.set_num_threads(1)
    torch.manual_seed(0)
    output = tmp_path_factory.mktemp("verifier")
    config = Config({
        "paths": {"dictionary": str(synthetic_path), "vectors": None},
        "system": {"seed": 0},
        "encoder": {"@architectures": "spacy-biolink.SiameseVerifier.v1", "embed_dim": 16,
                    "lstm_hidden": 32, "dense_sizes": [32, 16], "attention": True,
                    "dropout": 0.0, "batch_size": 64},
    })
    trainer = SiameseTrainer(max_epochs=25, batch_size=16, learning_rate=0.01,
                             dev_fraction=0.17, test_fraction=0.17,
                             max_positives_per_concept=6, patience=1000)
    meta = trainer(config, output)
    return output, meta


def test_pairs_split_by_concept_with_three_negative_kinds(synthetic_path):
    dictionary = load_dictionary(synthetic_path)
    pairs = dictionary_pairs(dictionary, fractions=(0.2, 0.2), seed=3)
    split = split_concepts(dictionary.n_concepts, (0.2, 0.2), seed=3)
    held_out_names = {n for c in range(dictionary.n_concepts) if split[c] > 0
                      for n in dictionary.names_of(c)}
    assert held_out_names
    assert not pairs["train"].names() & held_out_names
    assert not pairs["train"].names() & pairs["test"].names()
    assert not pairs["dev"].names() & pairs["test"].names()
    for name in ("train", "dev", "test"):
        kinds = pairs[name].counts()
        assert kinds["positive"] > 0 and all(kinds.get(k, 0) > 0 for k in NEGATIVE_KINDS), (name, kinds)
    concept_of = {n: c for c in range(dictionary.n_concepts) for n in dictionary.names_of(c)}
    train = pairs["train"]
    for left, right, label in zip(train.left, train.right, train.labels):
        assert (concept_of[left] == concept_of[right]) == bool(label)


def test_shared_name_goes_to_the_latest_split(tiny_dictionary):
    # "HD" names Huntington (D006816) and Hirschsprung (D006527).
    split = numpy.zeros(tiny_dictionary.n_concepts, dtype=numpy.int8)
    huntington = tiny_dictionary.concept_index("D006816")
    split[huntington] = 2
    by_split = concept_names_by_split(tiny_dictionary, split)
    assert "HD" in by_split[2][huntington]
    hirschsprung = tiny_dictionary.concept_index("D006527")
    assert "HD" not in by_split[0][hirschsprung]


def test_jaccard_negative_is_the_most_similar_other_name(synthetic_path):
    from spacy_biolink.evaluation.name_pairs import make_pairs

    names = {0: ["liver cancer", "hepatic neoplasm"], 1: ["liver cancers x", "zzz"],
             2: ["qqq ppp", "rrr sss"]}
    pairs = make_pairs(names, seed=0)
    jaccard = [(l, r) for l, r, k in zip(pairs.left, pairs.right, pairs.kinds) if k == "jaccard"]
    assert ("liver cancer", "liver cancers x") in jaccard


def test_overfits_tiny_dictionary(trained_verifier, synthetic_path):
    output, meta = trained_verifier
    verifier = CandidateVerifier.from_trained(output)
    assert verifier.threshold == pytest.approx(meta["threshold"])
    dictionary = load_dictionary(synthetic_path)
    pairs = dictionary_pairs(dictionary, seed=0, **meta["pair_settings"])["train"]
    probs = verifier.score_pairs(pairs.pairs)
    labels = pairs.label_array()
    assert roc_auc(labels, probs) > 0.97
    assert probs[labels == 1].mean() > probs[labels == 0].mean() + 0.4
    for key in ("test_auc", "test_f1", "test_precision", "test_recall", "test_f1_at_0.5"):
        assert 0.0 <= meta[key] <= 1.0
    assert (output / "training.jsonl").is_file()


def test_saved_verifier_rebuilds_from_its_config(trained_verifier, tmp_path):
    output, _ = trained_verifier
    verifier = CandidateVerifier.from_trained(output, mode="next", max_tries=2)
    pairs = [("liver cancer", "hepatic neoplasm"), ("liver cancer", "skin cyst")]
    verifier.to_disk(tmp_path / "verifier")
    loaded = CandidateVerifier.from_disk(tmp_path / "verifier")
    assert (loaded.mode, loaded.max_tries, loaded.threshold) == ("next", 2, verifier.threshold)
    numpy.testing.assert_allclose(loaded.score_pairs(pairs), verifier.score_pairs(pairs), rtol=1e-5)


def test_saved_verifier_keeps_the_threshold_given(trained_verifier, tmp_path):
    # 0.7 is one of the decimals srsly's JSON parser reads as 0.7000000000000001.
    output, _ = trained_verifier
    CandidateVerifier.from_trained(output, threshold=0.7).to_disk(tmp_path / "verifier")
    assert CandidateVerifier.from_disk(tmp_path / "verifier").threshold == 0.7
    # A threshold chosen on a curve has all its digits; srsly's writer kept ten.
    chosen = 0.6180339887498949
    CandidateVerifier.from_trained(output, threshold=chosen).to_disk(tmp_path / "chosen")
    assert CandidateVerifier.from_disk(tmp_path / "chosen").threshold == chosen


def test_score_pairs_cli(trained_verifier, tmp_path):
    from spacy_biolink.cli import app

    output, _ = trained_verifier
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("liver cancer\thepatic neoplasm\n\nliver cancer\tskin cyst\n", encoding="utf8")
    scored = tmp_path / "scored.tsv"
    result = CliRunner().invoke(app, ["score-pairs", str(output), str(pairs), "--output", str(scored)])
    assert result.exit_code == 0, result.output
    rows = [line.split("\t") for line in scored.read_text(encoding="utf8").splitlines()]
    assert [r[:2] for r in rows] == [["liver cancer", "hepatic neoplasm"],
                                     ["liver cancer", "skin cyst"]]
    assert all(0.0 < float(r[2]) <= 1.0 for r in rows)
    assert float(rows[0][2]) > float(rows[1][2])

    pairs.write_text("a\tb\n\nonly one field\n", encoding="utf8")
    result = CliRunner().invoke(app, ["score-pairs", str(output), str(pairs), "--output", str(scored)])
    assert result.exit_code == 1
    assert f"{pairs}:3" in result.output and "E706" in result.output


def test_eval_pairs_cli(trained_verifier, synthetic_path, tmp_path):
    from spacy_biolink.cli import app

    output, meta = trained_verifier
    metrics = tmp_path / "m.json"
    result = CliRunner().invoke(app, ["eval-pairs", str(output), "--dictionary",
                                      str(synthetic_path), "--output", str(metrics)])
    assert result.exit_code == 0, result.output
    scores = srsly.read_json(metrics)
    assert scores["test"]["auc"] == pytest.approx(meta["test_auc"], abs=1e-6)
    assert scores["threshold_dev"] == pytest.approx(meta["threshold"], abs=1e-6)


def test_threshold_is_dev_max_f1():
    labels = [1, 1, 1, 0, 0, 0, 0]
    probs = [0.9, 0.8, 0.3, 0.35, 0.2, 0.1, 0.05]
    threshold, f1 = best_f1_threshold(labels, probs)
    # Cutting below 0.3 catches every positive at the cost of one negative: F1 = 6/7,
    # better than 0.8 (F1 0.8) or 0.5.
    assert 0.2 < threshold < 0.3
    assert f1 == pytest.approx(6 / 7)
    assert pair_scores(labels, probs, threshold)["f1"] == pytest.approx(f1)
    assert pair_scores(labels, probs, 0.5)["f1"] == pytest.approx(0.8)
    assert roc_auc([1, 0], [0.9, 0.1]) == 1.0 and roc_auc([1, 0], [0.1, 0.9]) == 0.0


def test_auc_by_negative_kind_scores_each_kind_against_the_positives():
    # The "jaccard" negative outscores one positive, the random ones score below both.
    labels = [1, 1, 0, 0, 0]
    kinds = ["positive", "positive", "jaccard", "random", "random"]
    scores = [0.9, 0.5, 0.6, 0.1, 0.2]
    found = auc_by_negative_kind(labels, kinds, scores)
    assert found == {"auc": pytest.approx(5 / 6), "auc_jaccard": pytest.approx(0.5),
                     "auc_random": 1.0}


class _LookupModel:
    """Stands in for the network: a fixed probability per (mention, name) pair."""

    def __init__(self, table):
        self.table = table
        self.calls = 0

    def predict(self, pairs):
        self.calls += 1
        return numpy.asarray([self.table.get(p, 0.0) for p in pairs], dtype=numpy.float32)


def test_verify_links_nil_and_next(tiny_dictionary):
    t2 = tiny_dictionary.concept_index("D003924")
    t1 = tiny_dictionary.concept_index("D003922")
    breast = tiny_dictionary.concept_index("D001943")
    table = {("type 2 diabetes", "Type 2 diabetes"): 0.9,
             ("type one diabetes", "Type 2 diabetes"): 0.1,
             ("type one diabetes", "Type 1 diabetes"): 0.8}
    model = _LookupModel(table)
    best_name_of = best_name_finder(tiny_dictionary)
    assert best_name_of(t2, "type 2 diabetes") == "Type 2 diabetes"
    mentions = ["type 2 diabetes", "type one diabetes", "breast lump"]
    candidates = [[(t2, 0.9), (t1, 0.5)], [(t2, 0.7), (t1, 0.6), (breast, 0.1)], [(breast, 0.4)]]

    nil = verify_links(CandidateVerifier(model, 0.5, "nil"), mentions, candidates, best_name_of)
    assert nil == [candidates[0], [], []]
    assert model.calls == 1  # one batched model call

    nxt = verify_links(CandidateVerifier(model, 0.5, "next", max_tries=2), mentions, candidates,
                       best_name_of)
    assert nxt[0] == [(t2, 0.9)]  # t1's best name for "type 2 diabetes" fails
    assert nxt[1] == [(t1, 0.6), (breast, 0.1)]  # beyond max_tries: kept, unverified
    assert nxt[2] == []


def test_verifier_settings_are_checked():
    with pytest.raises(BioLinkError, match="E704"):
        CandidateVerifier(_LookupModel({}), 0.5, "skip")
    with pytest.raises(BioLinkError, match="E705"):
        CandidateVerifier(_LookupModel({}), 1.5)


def test_verifier_bytes_round_trip(trained_verifier):
    output, _ = trained_verifier
    verifier = CandidateVerifier.from_trained(output, threshold=0.3, mode="next")
    loaded = CandidateVerifier.from_bytes(verifier.to_bytes())
    pairs = [("kidney failure", "renal insufficiency"), ("kidney failure", "lung cyst")]
    assert (loaded.threshold, loaded.mode) == (0.3, "next")
    numpy.testing.assert_allclose(loaded.score_pairs(pairs), verifier.score_pairs(pairs), rtol=1e-5)


def test_bio_linker_verifier_stage(tiny_dictionary, trained_verifier, tmp_path):
    import spacy
    from spacy.tokens import Span

    from tests.conftest import make_linker_nlp

    nlp = make_linker_nlp(tiny_dictionary)
    linker = nlp.get_pipe("bio_linker")
    doc = nlp.make_doc("Breast cancer and type 2 diabetes")
    doc.ents = [Span(doc, 0, 2, "Disease"), Span(doc, 3, 6, "Disease")]
    best_name_of = best_name_finder(tiny_dictionary, linker.normalizer.mention)
    t2 = tiny_dictionary.concept_index("D003924")
    query = linker.linker.query_key("type 2 diabetes")  # "type 2 diabete": plurals are stripped
    table = {(query, best_name_of(t2, query)): 0.9}
    linker.verifier = CandidateVerifier(_LookupModel(table), 0.5, "nil")
    doc = linker(doc)
    assert [e.kb_id_ for e in doc.ents] == ["NIL", "D003924"]

    output, _ = trained_verifier
    linker.verifier = CandidateVerifier.from_trained(output, mode="next")
    nlp.to_disk(tmp_path / "pipe")
    loaded = spacy.load(tmp_path / "pipe").get_pipe("bio_linker")
    assert loaded.verifier is not None and loaded.verifier.mode == "next"


def test_verifier_is_a_config_stage_of_init_linker(synthetic_path, trained_verifier, tmp_path):
    """init-linker --verifier writes [components.bio_linker.stages.verifier]; its weights
    travel with the pipeline, a value given at spacy.load is the value used, and it links
    as the same verifier set from Python (the path saved pipelines of 0.1 took)."""
    import spacy

    from spacy_biolink.errors import BioLinkError
    from spacy_biolink.linker.pipeline import init_linker
    from tests.conftest import doc_with_ents

    output, _ = trained_verifier
    nlp = init_linker(tmp_path / "linker", synthetic_path, verifier=output, verifier_mode="next")
    stage = nlp.config["components"]["bio_linker"]["stages"]["verifier"]
    assert stage["@misc"] == "spacy-biolink.SiameseVerifierStage.v1"
    assert stage["mode"] == "next" and stage["model"]["@architectures"].startswith(
        "spacy-biolink.SiameseVerifier")
    texts = ["cancers of liver", "cyst of the kidney", "fever", "lung tumour"]

    def linked(pipeline):
        docs = [pipeline(doc_with_ents(pipeline, text, [text])) for text in texts]
        return [(d.ents[0].kb_id_, d.ents[0]._.kb_ents) for d in docs]

    expected = linked(nlp)
    attached = init_linker(None, synthetic_path)
    attached.get_pipe("bio_linker").verifier = CandidateVerifier.from_trained(output, mode="next")
    assert linked(attached) == expected
    loaded = spacy.load(tmp_path / "linker")
    assert (tmp_path / "linker" / "bio_linker" / "stages" / "verifier").is_file()
    assert linked(loaded) == expected
    strict = spacy.load(tmp_path / "linker", config={"components.bio_linker.stages.verifier.threshold": 1.0})
    assert strict.get_pipe("bio_linker").verifier.threshold == 1.0
    # p = exp(-L1) reaches 1.0 only for a name the verifier sees as itself: more NILs.
    nils = [kb_id for kb_id, _ in linked(strict)].count("NIL")
    assert nils > [kb_id for kb_id, _ in expected].count("NIL")
    # Without its weights a configured stage refuses to link rather than use random ones.
    linker = nlp.get_pipe("bio_linker")
    settings = {key: value for key, value in nlp.config["components"]["bio_linker"].items()
                if key != "factory"}
    blank = spacy.blank("en")
    blank.add_pipe("bio_linker", config=settings)
    blank.get_pipe("bio_linker").from_bytes(linker.to_bytes(), exclude=["stages"])
    with pytest.raises(BioLinkError, match="E168"):
        linked(blank)
    blank.get_pipe("bio_linker").from_bytes(linker.to_bytes())
    assert linked(blank) == expected
    fresh = spacy.blank("en")
    fresh.add_pipe("bio_linker", config=settings)
    with pytest.raises(BioLinkError, match="E168"):
        fresh.get_pipe("bio_linker").initialize(dictionary=load_dictionary(synthetic_path))
    with pytest.raises(BioLinkError, match="E166"):
        fresh.get_pipe("bio_linker").initialize(dictionary=load_dictionary(synthetic_path),
                                               stages={"reranker": output})


def test_evaluate_counts_what_the_verifier_rejects_as_linking_does(tiny_dictionary, tmp_path):
    from spacy_biolink.evaluation import evaluate_gold_mentions
    from tests.conftest import doc_with_ents, make_linker_nlp

    corpus = tmp_path / "test.txt"
    corpus.write_text(
        "7|t|Breast cancer and type 2 diabetes.\n"
        "7\t0\t13\tBreast cancer\tDisease\tD001943\n"
        "7\t18\t33\ttype 2 diabetes\tDisease\tD003924\n"
        "\n", encoding="utf8")
    nlp = make_linker_nlp(tiny_dictionary)
    linker = nlp.get_pipe("bio_linker")
    assert evaluate_gold_mentions(nlp, corpus)["acc@1"] == 1.0
    best_name_of = best_name_finder(tiny_dictionary, linker.normalizer.mention)
    query = linker.linker.query_key("type 2 diabetes")
    t2 = tiny_dictionary.concept_index("D003924")
    # Only type 2 diabetes passes: breast cancer's right answer is rejected, in either mode.
    table = {(query, best_name_of(t2, query)): 0.9}
    for mode in ("nil", "next"):
        linker.verifier = CandidateVerifier(_LookupModel(table), 0.5, mode)
        result = evaluate_gold_mentions(nlp, corpus)
        assert result["acc@1"] == result["acc@5"] == 0.5
        doc = nlp(doc_with_ents(nlp, "Breast cancer and type 2 diabetes.",
                                ["Breast cancer", "type 2 diabetes"]))
        assert [e.kb_id_ for e in doc.ents] == ["NIL", "D003924"]


# Corpus pairs and NIL rules (issue 6) ------------------------------------


def synthetic_pubtator(concepts=range(24), nil_mentions=("fever",)) -> str:
    """One document per concept: its mention written "cancers of liver" (plural, no
    article: no dictionary name), then each of `nil_mentions` with id -1."""
    lines = []
    pairs = list(itertools.product(ORGANS, LESIONS))
    for pmid, i in enumerate(concepts, start=1):
        organ, lesion = pairs[i]
        text = f"{lesion}s of {organ}"
        title = f"Patient with {text}."
        abstract = "Also " + " and ".join(nil_mentions) + "."
        lines += [f"{pmid}|t|{title}", f"{pmid}|a|{abstract}",
                  f"{pmid}\t13\t{13 + len(text)}\t{text}\tDisease\tD{i:06d}"]
        start = len(title) + 1 + len("Also ")
        for nil in nil_mentions:
            lines.append(f"{pmid}\t{start}\t{start + len(nil)}\t{nil}\tDisease\t-1")
            start += len(nil) + len(" and ")
        lines.append("")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def synthetic_corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "corpus.PubTator.txt"
    path.write_text(synthetic_pubtator(), encoding="utf8")
    return path


def test_corpus_pairs_are_mentions_against_retrieved_names(synthetic_path, synthetic_corpus):
    from spacy_biolink.training.pairs import corpus_training_pairs, sub_dictionary, tfidf_linker

    dictionary = load_dictionary(synthetic_path)
    split = split_concepts(dictionary.n_concepts, (0.17, 0.17), seed=0)
    pairs, stats = corpus_training_pairs(dictionary, synthetic_corpus, split, negatives=2, k=10)
    concept_of = {n: c for c in range(dictionary.n_concepts) for n in dictionary.names_of(c)}
    by_kind = {kind: [(l, r) for l, r, k in zip(pairs.left, pairs.right, pairs.kinds) if k == kind]
               for kind in ("corpus_positive", "corpus_wrong", "corpus_nil")}
    # The mention as the linker queries it (plural stripped, folded), against the gold
    # concept's closest name.
    liver_cancer = dictionary.concept_index("D000000")
    assert split[liver_cancer] == 0
    assert ("cancer of liver", "cancer of the liver") in by_kind["corpus_positive"]
    # Hard negatives: the closest names of wrong concepts the TF-IDF linker ranks first.
    train = sub_dictionary(dictionary, concept_names_by_split(dictionary, split)[0], "train")
    linker = tfidf_linker(train, split_composites=False).get_pipe("bio_linker")
    ranked = linker.linker.link_texts(["cancer of liver"], 10)["cancer of liver"]
    best_name_of = best_name_finder(train, linker.normalizer.mention)
    expected = [best_name_of(c, "cancer of liver") for c, _ in ranked
                if train.primary_id(c) != "D000000"][:2]
    wrong = [r for l, r in by_kind["corpus_wrong"] if l == "cancer of liver"]
    assert wrong == expected and all(concept_of[r] != liver_cancer for r in wrong)
    # The -1 mention against the top candidate, once.
    assert len(by_kind["corpus_nil"]) == 1 and by_kind["corpus_nil"][0][0] == "fever"
    for left, right, label in zip(pairs.left, pairs.right, pairs.labels):
        assert split[concept_of[right]] == 0, right  # only train names
    # Dev and test concepts' mentions are left out.
    held_out = [c for c in range(dictionary.n_concepts) if split[c] > 0]
    assert stats["held_out_concept"] == len(held_out) > 0
    held_out_keys = {f"{LESIONS[c % 4]} of {ORGANS[c // 4]}" for c in held_out}
    assert not held_out_keys & set(pairs.left)
    assert stats["corpus_positive"] == dictionary.n_concepts - len(held_out)


def test_held_out_mentions_categories(synthetic_path, synthetic_corpus):
    from spacy_biolink.training.pairs import held_out_mentions

    dictionary = load_dictionary(synthetic_path)
    split = split_concepts(dictionary.n_concepts, (0.17, 0.17), seed=0)
    links = held_out_mentions(dictionary, synthetic_corpus, split, 1)
    n_dev, n_test = int((split == 1).sum()), int((split == 2).sum())
    assert links.counts() == {"linkable": 24 - n_dev - n_test, "removed": n_dev,
                              "nil_gold": 24, "absent": 0}
    assert links.skipped["dropped"] == n_test  # test concepts are not looked at on dev
    assert links.dictionary.n_concepts == 24 - n_dev
    linkable = links.category_mask("linkable")
    assert links.top_correct()[linkable].all()
    assert not links.top_correct()[~linkable].any()


def test_nil_curve_and_operating_point():
    from spacy_biolink.training.nil_rule import best_point, nil_curve

    confidence = [0.9, 0.8, 0.1, 0.2, 0.5]
    correct = [True, True, False, False, True]
    linkable = [True, True, True, False, True]
    is_nil = [False, False, False, True, False]
    curve = nil_curve(confidence, correct, linkable, is_nil)
    # Reject 0, 1 (0.1), 2 (+0.2: the NIL one), 3 (+0.5: a right one), ...
    assert curve["nil_recall"].tolist() == [0, 0, 1, 1, 1, 1]
    assert curve["accuracy_lost"].tolist() == pytest.approx([0, 0, 0, 0.25, 0.5, 0.75])
    i = best_point(curve, 0.0)
    assert curve["nil_recall"][i] == 1 and 0.2 < curve["threshold"][i] < 0.5


def _two_kinds_of_nil(n=200, seed=0):
    """Linkable mentions have a high p and a high score; half the NIL ones a low p only,
    half a low score only: only a rule using both finds all of them."""
    rng = numpy.random.RandomState(seed)
    p = numpy.r_[rng.uniform(0.6, 1.0, n), rng.uniform(0.0, 0.3, n), rng.uniform(0.6, 1.0, n)]
    s = numpy.r_[rng.uniform(0.7, 1.0, n), rng.uniform(0.7, 1.0, n), rng.uniform(0.2, 0.5, n)]
    linkable = numpy.r_[numpy.ones(n, bool), numpy.zeros(2 * n, bool)]
    return p, s, linkable.copy(), linkable, ~linkable


def test_fit_nil_rules_combined_rules_use_both_signals():
    from spacy_biolink.linker.stages.verifier import nil_rule_rejects
    from spacy_biolink.training.nil_rule import fit_nil_rules

    p, s, correct, linkable, is_nil = _two_kinds_of_nil()
    fitted = fit_nil_rules(p, s, correct, linkable, is_nil, max_accuracy_loss=0.0)
    assert fitted["verifier"]["nil_recall"] == pytest.approx(0.5, abs=0.02)
    assert fitted["score"]["nil_recall"] == pytest.approx(0.5, abs=0.02)
    assert fitted["either"]["nil_recall"] == 1.0 and fitted["either"]["accuracy_lost"] == 0.0
    assert fitted["combined"]["nil_recall"] > fitted["verifier"]["nil_recall"] + 0.2
    # Applying the fitted settings gives what was measured while fitting.
    for rule in ("verifier", "either", "combined"):
        rejected = nil_rule_rejects({"rule": rule, **fitted[rule]}, p, s)
        assert rejected[is_nil].mean() == pytest.approx(fitted[rule]["nil_recall"])
        assert (rejected & correct)[linkable].mean() == pytest.approx(fitted[rule]["accuracy_lost"])


def test_verify_links_either_and_combined_rules(tiny_dictionary):
    t2 = tiny_dictionary.concept_index("D003924")
    best_name_of = best_name_finder(tiny_dictionary)
    table = {("type 2 diabetes", "Type 2 diabetes"): 0.9, ("diabetes", "Type 2 diabetes"): 0.9}
    mentions = ["type 2 diabetes", "diabetes"]
    candidates = [[(t2, 0.95)], [(t2, 0.3)]]  # same p, very different retrieval scores
    verifier = CandidateVerifier(_LookupModel(table), 0.5, "nil")
    assert verify_links(verifier, mentions, candidates, best_name_of) == candidates
    either = CandidateVerifier(_LookupModel(table), 0.5, "nil", rule="either", score_threshold=0.5)
    assert verify_links(either, mentions, candidates, best_name_of) == [candidates[0], []]
    # logit(0.9) = 2.197: 1 * 2.197 + 10 * score - 7 >= 0 only for the higher score.
    combined = CandidateVerifier(_LookupModel(table), 0.5, "nil", rule="combined",
                                 weights=[1.0, 10.0, -7.0])
    assert verify_links(combined, mentions, candidates, best_name_of) == [candidates[0], []]


def test_nil_rule_settings_are_checked():
    model = _LookupModel({})
    with pytest.raises(BioLinkError, match="E708"):
        CandidateVerifier(model, 0.5, rule="both")
    with pytest.raises(BioLinkError, match="E709.*score_threshold"):
        CandidateVerifier(model, 0.5, rule="either")
    with pytest.raises(BioLinkError, match="E709.*weights"):
        CandidateVerifier(model, 0.5, rule="combined", weights=[1.0, 2.0])


def test_nil_rule_round_trips(trained_verifier, tmp_path):
    output, _ = trained_verifier
    with pytest.raises(BioLinkError, match="E710"):
        CandidateVerifier.from_trained(output, rule="combined")  # no dev-fitted weights
    verifier = CandidateVerifier.from_trained(output, rule="combined", weights=[1.0, 2.0, -3.0])
    either = CandidateVerifier.from_trained(output, rule="either", score_threshold=0.4)
    for original in (verifier, either):
        loaded = CandidateVerifier.from_bytes(original.to_bytes())
        assert loaded.nil_settings() == original.nil_settings()
        original.to_disk(tmp_path / original.rule)
        loaded = CandidateVerifier.from_disk(tmp_path / original.rule)
        assert loaded.nil_settings() == original.nil_settings()


@pytest.fixture(scope="module")
def corpus_trained_verifier(synthetic_path, synthetic_corpus, tmp_path_factory):
    """configs/siamese.cfg with corpus pairs from, and NIL rules fitted on, the synthetic
    corpus (dev is the same corpus: its dev-split concepts are what is removed)."""
    from pathlib import Path

    from spacy_biolink.training.run import train_from_config

    torch.set_num_threads(1)
    torch.manual_seed(0)
    output = tmp_path_factory.mktemp("corpus_verifier")
    config = Path(__file__).resolve().parents[1] / "configs" / "siamese.cfg"
    # Word input: subword input and its extraction are tested in test_siamese_inputs.py.
    overrides = {"paths.dictionary": str(synthetic_path), "paths.train": str(synthetic_corpus),
                 "paths.dev": str(synthetic_corpus), "encoder.inputs": "words",
                 "training.extraction": "none", "encoder.embed_dim": 16,
                 "encoder.lstm_hidden": 16, "encoder.dense_sizes": [16, 8],
                 "training.max_epochs": 3, "training.batch_size": 32,
                 "training.learning_rate": 0.01, "training.dev_fraction": 0.17,
                 "training.test_fraction": 0.17, "training.corpus_pairs": True,
                 "training.corpus_repeat": 2, "training.nil_max_accuracy_loss": 0.1}
    return output, train_from_config(config, output, overrides=overrides), overrides, config


def test_trainer_adds_corpus_pairs_and_fits_nil_rules(corpus_trained_verifier):
    output, meta, _, _ = corpus_trained_verifier
    counts = meta["pairs"]["train"]
    assert counts["corpus_positive"] == 2 * meta["corpus_pairs"]["corpus_positive"] > 0
    assert counts["corpus_wrong"] > 0 and counts["corpus_nil"] == 2
    assert meta["corpus_pairs"]["held_out_concept"] > 0
    assert set(meta["nil_rules"]) == {"verifier", "either", "combined"}
    assert meta["nil_rule"] in meta["nil_rules"]
    assert meta["nil_dev"]["mentions"]["removed"] > 0
    assert "dev_link_auc" in (output / "training.jsonl").read_text(encoding="utf8")
    verifier = CandidateVerifier.from_trained(output)
    assert verifier.rule == meta["nil_rule"]
    combined = CandidateVerifier.from_trained(output, rule="combined")
    assert combined.weights == pytest.approx(meta["nil_rules"]["combined"]["weights"])
    either = CandidateVerifier.from_trained(output, rule="either")
    assert (either.threshold, either.score_threshold) == pytest.approx(
        (meta["nil_rules"]["either"]["threshold"], meta["nil_rules"]["either"]["score_threshold"]))


def test_trainer_settings_are_checked(corpus_trained_verifier, tmp_path):
    from spacy_biolink.training.run import train_from_config

    _, _, overrides, config = corpus_trained_verifier
    for change, code in (({"paths.train": None}, "E711.*paths. train"),
                         ({"training.corpus_pairs": False, "paths.dev": None,
                           "training.nil_rule": "combined"}, "E711.*paths. dev"),
                         ({"training.nil_rule": "best"}, "E712")):
        with pytest.raises(BioLinkError, match=code):
            train_from_config(config, tmp_path / "out", overrides={**overrides, **change,
                                                                   "training.max_epochs": 0})


def test_trainer_v1_is_v2_with_v1s_nil_rule():
    from spacy.util import registry

    v1 = registry.resolve({"t": {"@misc": "spacy-biolink.SiameseTrainer.v1", "max_epochs": 3,
                                 "freeze_embeddings": True}})["t"]
    v2 = registry.resolve({"t": {"@misc": "spacy-biolink.SiameseTrainer.v2"}})["t"]
    assert (v1.settings["max_epochs"], v1.settings["freeze_embeddings"]) == (3, True)
    assert v1.nil_settings["nil_rule"] == "verifier" and v2.nil_settings["nil_rule"] == "auto"
    assert v1.corpus_settings == v2.corpus_settings and not v1.corpus_settings["corpus_pairs"]
