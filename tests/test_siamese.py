"""The Siamese synonymy verifier: pair generation, training, CLI, threshold, linking stage."""
import itertools

import numpy
import pytest
import srsly
from typer.testing import CliRunner

from spacy_biolink import load_dictionary
from spacy_biolink.errors import BioLinkError
from spacy_biolink.evaluation.pair_scores import (best_f1_threshold, pair_scores, roc_auc)
from spacy_biolink.training.pairs import (NEGATIVE_KINDS, concept_names_by_split,
                                          dictionary_pairs, split_concepts)
from spacy_biolink.verify import CandidateVerifier, best_name_finder, verify_links

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
    from spacy_biolink.training.pairs import make_pairs

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
    """Runs once component.py has the `verifier` stage (BioLinker.verifier)."""
    import spacy
    from spacy.tokens import Span

    from tests.conftest import make_linker_nlp

    nlp = make_linker_nlp(tiny_dictionary)
    linker = nlp.get_pipe("bio_linker")
    if not hasattr(linker, "verifier"):
        pytest.skip("bio_linker has no verifier stage yet")
    doc = nlp.make_doc("Breast cancer and type 2 diabetes")
    doc.ents = [Span(doc, 0, 2, "Disease"), Span(doc, 3, 6, "Disease")]
    best_name_of = best_name_finder(tiny_dictionary, linker.normalizer.mention)
    t2 = tiny_dictionary.concept_index("D003924")
    table = {("type 2 diabetes", best_name_of(t2, "type 2 diabetes")): 0.9}
    linker.verifier = CandidateVerifier(_LookupModel(table), 0.5, "nil")
    doc = linker(doc)
    assert [e.kb_id_ for e in doc.ents] == ["NIL", "D003924"]

    output, _ = trained_verifier
    linker.verifier = CandidateVerifier.from_trained(output, mode="next")
    nlp.to_disk(tmp_path / "pipe")
    loaded = spacy.load(tmp_path / "pipe").get_pipe("bio_linker")
    assert loaded.verifier is not None and loaded.verifier.mode == "next"
