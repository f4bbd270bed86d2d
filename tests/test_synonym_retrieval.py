"""Synonym retrieval (split, metrics, baselines, CLI) and semantic relatedness."""
import json

import numpy
import pytest
from typer.testing import CliRunner

from spacy_biolink.cli import app
from spacy_biolink.errors import BioLinkError
from spacy_biolink.evaluation.relatedness import evaluate_relatedness, read_pairs
from spacy_biolink.evaluation.synonym_retrieval import (TEST, TRAIN, VALIDATION, ZERO_SHOT,
                                                        SynonymSplit, evaluate_synonym_retrieval,
                                                        make_split, ranking_metrics, sgw_encoder)
from spacy_biolink.kb.readers import load_dictionary
from spacy_biolink.encoders.wordvectors import WordVectors

# 8 concepts, 3-4 names each: enough for a split with zero-shot, test and validation names.
DICTIONARY = """\
D001||Alpha disease|alpha syndrome|alpha disorder|disease of alpha
D002||Beta disease|beta syndrome|beta disorder
D003||Gamma disease|gamma syndrome|gamma disorder|disease of gamma
D004||Delta disease|delta syndrome|delta disorder
D005||Epsilon disease|epsilon syndrome|epsilon disorder
D006||Zeta disease|zeta syndrome|zeta disorder|disease of zeta
D007||Eta disease|eta syndrome|eta disorder
D008||Theta disease|theta syndrome|theta disorder|shared name
D009||Iota disease|shared name
"""
GREEK = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota"]


@pytest.fixture
def dictionary(tmp_path):
    path = tmp_path / "dict.txt"
    path.write_text(DICTIONARY, encoding="utf8")
    return load_dictionary(path)


@pytest.fixture
def vectors_dir(tmp_path):
    """Each Greek letter its own direction; disease words near-identical: synonyms
    (same letter) are close under the mean word vector."""
    words = GREEK + ["disease", "syndrome", "disorder", "of", "shared", "name"]
    vectors = numpy.zeros((len(words), len(GREEK) + 1), numpy.float32)
    vectors[numpy.arange(len(GREEK)), numpy.arange(len(GREEK))] = 1.0
    vectors[len(GREEK):, -1] = 0.3
    WordVectors(words, vectors).to_disk(tmp_path / "vec")
    return tmp_path / "vec"


def test_ranking_metrics_by_hand():
    # Query 0 (concept A): candidates A1 .9, B .8, A2 .7 -> ranks 1, 3.
    # Query 1 (concept B): A1 .9, B .8 -> first correct at rank 2.
    queries = numpy.eye(2, dtype=numpy.float32)
    candidates = numpy.array([[0.9, 0.9], [0.8, 0.8], [0.7, 0.1]], numpy.float32)
    concepts = numpy.array([0, 1, 0])
    scores = ranking_metrics(queries, numpy.array([0, 1]), candidates, concepts)
    assert scores["mAP"] == pytest.approx(((1 + 2 / 3) / 2 + 1 / 2) / 2)
    assert scores["Acc"] == 0.5 and scores["MRR"] == pytest.approx(0.75)
    # A tie with an unrelated candidate counts against the query; the query itself
    # (candidate 0) is left out; a query with no other synonym is skipped.
    tied = numpy.array([[1.0], [1.0], [0.5]], numpy.float32)
    scores = ranking_metrics(tied, numpy.array([0, 1, 0]), tied, numpy.array([0, 1, 0]),
                             query_candidate=numpy.arange(3))
    assert scores["skipped"] == 1 and scores["queries"] == 2
    # Query 0: the unrelated 1.0 ranks above its synonym (.5); query 2 (.5) ties with
    # the unrelated candidate 1 (.5): rank 2 for both.
    assert scores["mAP"] == pytest.approx(0.5) and scores["Acc"] == 0.0


def test_split_is_a_function_of_the_seed_and_respects_the_protocol(dictionary, tmp_path):
    split = make_split(dictionary, seed=5, zero_shot_concepts=2)
    again = make_split(dictionary, seed=5, zero_shot_concepts=2)
    assert split.fingerprint == again.fingerprint
    assert any(make_split(dictionary, seed=s, zero_shot_concepts=2).fingerprint
               != split.fingerprint for s in range(6, 10))
    assert "shared name" not in split.texts  # two concepts: no single right answer
    assert split.stats["ambiguous_names_left_out"] == 1
    zero_shot = set(split.concepts[split.indices(ZERO_SHOT)].tolist())
    trained = set(split.concepts[split.indices(TRAIN)].tolist())
    assert len(zero_shot) == 2 and not zero_shot & trained
    for role in (TEST, VALIDATION):
        held = split.concepts[split.indices(role)]
        assert len(held) and set(held.tolist()) <= trained
    described = split.describe()
    assert described["names"]["zero_shot"] + described["names"]["train"] + \
        described["names"]["test"] + described["names"]["validation"] == len(split.texts)
    split.to_disk(tmp_path / "split.json")
    loaded = SynonymSplit.from_disk(tmp_path / "split.json")
    assert loaded.fingerprint == split.fingerprint and loaded.texts_of(TEST) == split.texts_of(TEST)
    with pytest.raises(BioLinkError, match="E628"):
        make_split(dictionary, zero_shot_concepts=100)
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(BioLinkError, match="E627"):
        SynonymSplit.from_disk(tmp_path / "bad.json")


def test_sgw_baselines_find_synonyms(dictionary, vectors_dir):
    split = make_split(dictionary, seed=1, zero_shot_concepts=2)
    vectors = WordVectors.from_disk(vectors_dir)
    for encode in (sgw_encoder(vectors), sgw_encoder(vectors, cca_split=split)):
        scores = evaluate_synonym_retrieval(encode, split,
                                            query_sets=("test", "zero_shot", "train"))
        assert scores["test"]["Acc"] == 1.0 and scores["zero_shot"]["Acc"] == 1.0
        # Training names whose concept kept no other training name have nothing to find.
        assert scores["train"]["queries"] + scores["train"]["skipped"] == len(split.indices(TRAIN))
        assert scores["train"]["skipped"] > 0


def test_eval_synonyms_cli_writes_metrics_and_split(dictionary, vectors_dir, tmp_path):
    dictionary_path = tmp_path / "dict.txt"
    result = CliRunner().invoke(app, [
        "eval-synonyms", "sgw", "--dictionary", str(dictionary_path), "--vectors",
        str(vectors_dir), "--output", str(tmp_path / "m.json"), "--seed", "4",
        "--zero-shot-concepts", "2", "--save-split", str(tmp_path / "split.json")])
    assert result.exit_code == 0, result.output
    metrics = json.loads((tmp_path / "m.json").read_text())
    assert metrics["split"]["seed"] == 4
    assert metrics["split"]["fingerprint"] == \
        SynonymSplit.from_disk(tmp_path / "split.json").fingerprint
    assert {"test", "zero_shot", "validation", "train"} <= set(metrics)
    # Measured: every one of the 7 test queries ranks its synonyms first.
    assert metrics["test"]["queries"] == 7
    assert metrics["test"]["mAP"] == pytest.approx(1.0, abs=0.005)
    bad = CliRunner().invoke(app, ["eval-synonyms", "nonsense", "--dictionary",
                                   str(dictionary_path), "--zero-shot-concepts", "2"])
    assert bad.exit_code == 1 and "E631" in bad.output


def test_eval_synonyms_with_the_sparse_tfidf_baseline(dictionary, tmp_path):
    """TF-IDF rows are a scipy sparse matrix, whose len() raises (found by issue 19's probe)."""
    result = CliRunner().invoke(app, [
        "eval-synonyms", "tfidf", "--dictionary", str(tmp_path / "dict.txt"), "--output",
        str(tmp_path / "m.json"), "--zero-shot-concepts", "2"])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "m.json").read_text())["test"]["queries"] > 0


UMNSRS = """\
"Mean","Stdev","Term1","Term2","CUI1","CUI2"
1500,10,"Alpha disease","alpha syndrome","C1","C2"
900,10,"Alpha disease","beta-disorder","C1","C3"
100,10,"Gamma disease","delta","C4","C5"
50,10,"Unknownium","alpha","C6","C1"
"""
MAYO = "alpha disease\talpha disorder\t9\nbeta\tgamma disease\t2\nbeta\tbeta syndrome\t7\n"


def test_relatedness_reads_both_formats_and_counts_uncovered_pairs(vectors_dir, tmp_path):
    (tmp_path / "UMNSRS_similarity.csv").write_text(UMNSRS)
    (tmp_path / "MayoSRS.txt").write_text(MAYO)
    assert read_pairs(tmp_path / "MayoSRS.txt")[1] == ("beta", "gamma disease", 2.0)
    assert read_pairs(tmp_path / "UMNSRS_similarity.csv")[0][:2] == ("Alpha disease",
                                                                       "alpha syndrome")
    vectors = WordVectors.from_disk(vectors_dir)
    scores = evaluate_relatedness(sgw_encoder(vectors), tmp_path,
                                  covered=lambda text: bool(vectors.ids(text)))
    umnsrs = scores["UMNSRS_similarity"]
    assert (umnsrs["pairs"], umnsrs["covered"], umnsrs["not_covered"]) == (4, 3, 1)
    assert umnsrs["spearman"] == pytest.approx(1.0)
    assert scores["MayoSRS"]["spearman"] == pytest.approx(1.0)
    result = CliRunner().invoke(app, ["eval-relatedness", "sgw", "--vectors", str(vectors_dir),
                                      "--data-dir", str(tmp_path), "--output",
                                      str(tmp_path / "r.json")])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "r.json").read_text())["MayoSRS"]["covered"] == 3
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "MayoSRS.txt").write_text("alpha\tbeta\t3\nalpha\tbeta\tnot-a-number\n")
    with pytest.raises(BioLinkError, match="E632"):
        evaluate_relatedness(sgw_encoder(vectors), tmp_path / "bad")
    with pytest.raises(BioLinkError, match="E633"):
        evaluate_relatedness(sgw_encoder(vectors), tmp_path / "vec")


def test_shared_relatedness_files_parse(shared_data):
    for name, n in (("UMNSRS_similarity.csv", 566), ("UMNSRS_relatedness.csv", 587),
                    ("MayoSRS.txt", 101)):
        assert len(read_pairs(shared_data / "semantic_relatedness" / name)) == n
