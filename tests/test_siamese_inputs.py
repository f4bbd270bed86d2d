"""Seed 004's input variants of the Siamese verifier (issue 23): subword input with token
vectors extracted from a transformer, the TF-IDF cosine feature, the eval-pairs baseline
row and the safe save/load round trip; on a tiny random BERT built here."""
import itertools
from pathlib import Path

import numpy
import pytest
import srsly
from typer.testing import CliRunner

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from spacy_biolink.errors import BioLinkError  # noqa: E402
from spacy_biolink.training.run import train_from_config  # noqa: E402
from spacy_biolink.linker.stages.verifier import CandidateVerifier  # noqa: E402

from .conftest import build_tiny_bert  # noqa: E402

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "siamese.cfg"
PREFIXES = ["hyper", "hypo"]
STEMS = ["calc", "kal", "natr", "glyc", "lip", "ur", "phosphat", "magnes"]
# These concepts' "-emic" adjective is in no name: "hypercalcemic" is a word neither the
# word vocabulary nor the training names hold, but its subwords are all known.
UNSEEN = {("hyper", "calc"), ("hypo", "natr")}
WORDS = {"condition", "state", "high", "low", "level", "blood"}


def morphology_dictionary() -> str:
    """16 concepts "hyper<stem>emia": named by the noun, the "-emic condition" adjective
    and a "high/low <stem> blood level" gloss, except UNSEEN, which lack the adjective."""
    lines = []
    for i, (prefix, stem) in enumerate(itertools.product(PREFIXES, STEMS)):
        level = "high" if prefix == "hyper" else "low"
        names = [f"{prefix}{stem}emia", f"{level} {stem} blood level"]
        if (prefix, stem) not in UNSEEN:
            names.append(f"{prefix}{stem}emic condition")
        lines.append(f"D{i:06d}||" + "|".join(names))
    return "\n".join(lines) + "\n"


def tokenizer_words():
    """WordPiece units that cut "hypercalcemia" into hyper ##calc ##emia (no whole word)."""
    units = set(PREFIXES) | set(STEMS) | WORDS
    units |= {f"##{s}" for s in STEMS} | {"##emia", "##emic"}
    return units


@pytest.fixture(autouse=True, scope="module")
def one_thread(torch_one_thread):
    yield


@pytest.fixture(scope="module")
def backbone(tmp_path_factory) -> Path:
    return build_tiny_bert(tmp_path_factory.mktemp("tiny_bert"), tokenizer_words())


@pytest.fixture(scope="module")
def dictionary_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("morphology") / "dictionary.txt"
    path.write_text(morphology_dictionary(), encoding="utf8")
    return path


def overrides(dictionary_path, backbone, **changes):
    """configs/siamese.cfg made small; every concept in train (dev/test: one each)."""
    base = {"paths.dictionary": str(dictionary_path), "paths.backbone": str(backbone),
            "encoder.lstm_hidden": 16, "encoder.dense_sizes": [16, 8],
            "training.max_epochs": 2, "training.batch_size": 16,
            "training.learning_rate": 0.01, "training.dev_fraction": 0.13,
            "training.test_fraction": 0.13, "training.patience": 1000}
    return {**base, **changes}


def train(tmp_path, name, dictionary_path, backbone, **changes):
    torch.manual_seed(0)
    output = tmp_path / name
    meta = train_from_config(CONFIG, output,
                             overrides=overrides(dictionary_path, backbone, **changes))
    return output, meta


@pytest.mark.parametrize("extraction,occurrence", [("last4", "avg"), ("last", "first"),
                                                   ("input", "avg"), ("none", "avg")])
def test_each_extraction_trains_through_the_config(tmp_path, dictionary_path, backbone,
                                                   extraction, occurrence):
    output, meta = train(tmp_path, extraction, dictionary_path, backbone,
                         **{"training.extraction": extraction,
                            "training.occurrence": occurrence})
    assert meta["architecture"] == "spacy-biolink.SiameseVerifier.v2"
    assert meta["inputs"] == "subwords"
    assert meta["embeddings"]["extraction"] == extraction
    assert meta["embeddings"]["backbone"] == str(backbone)
    verifier = CandidateVerifier.from_trained(output)
    probs = verifier.score_pairs([("hypercalcemia", "high calc blood level"),
                                  ("hypercalcemia", "low kal blood level")])
    assert probs.shape == (2,) and numpy.all((probs > 0) & (probs <= 1))
    if extraction != "none":
        # The table is the extracted one, not random rows: the tokenizer's "[PAD]" row
        # aside, the input layer's rows are the backbone's own word embeddings.
        from transformers import AutoModel

        from spacy_biolink.encoders.torch_wrapper import torch_module

        table = torch_module(verifier.model).embedding.weight.detach().numpy()
        reference = AutoModel.from_pretrained(str(backbone)).get_input_embeddings().weight
        same = numpy.isclose(table, reference.detach().numpy(), atol=1e-6).all(axis=1)
        assert same.all() if extraction == "input" else same.mean() < 0.1


def test_word_input_still_trains_through_the_v2_architecture(tmp_path, dictionary_path, backbone):
    output, meta = train(tmp_path, "words", dictionary_path, backbone,
                         **{"encoder.inputs": "words", "encoder.embed_dim": 8,
                            "training.extraction": "none"})
    assert meta["inputs"] == "words" and meta["embeddings"]["backbone"] is None
    with pytest.raises(BioLinkError, match="E664"):
        train(tmp_path, "words_bad", dictionary_path, backbone,
              **{"encoder.inputs": "words", "training.extraction": "last4",
                 "training.max_epochs": 0})
    with pytest.raises(BioLinkError, match="E663"):
        train(tmp_path, "bad_occurrence", dictionary_path, backbone,
              **{"training.occurrence": "median", "training.max_epochs": 0})


def test_occurrence_methods_pick_first_last_and_mean(backbone):
    from spacy_biolink.encoders.token_embeddings import extract_token_embeddings
    from spacy_biolink.encoders.transformer import backbone_tokenizer_json

    tokenizer_json = backbone_tokenizer_json(backbone)
    contexts = ["high calc blood level", "calc", "low calc"]
    tables = {o: extract_token_embeddings(backbone, tokenizer_json, contexts, layers="last",
                                          occurrence=o) for o in ("avg", "first", "last")}
    from tokenizers import Tokenizer

    calc = Tokenizer.from_str(tokenizer_json).token_to_id("calc")
    singles = [extract_token_embeddings(backbone, tokenizer_json, [c], layers="last",
                                        occurrence="first")[calc] for c in contexts]
    numpy.testing.assert_allclose(tables["first"][calc], singles[0], atol=1e-5)
    numpy.testing.assert_allclose(tables["last"][calc], singles[2], atol=1e-5)
    numpy.testing.assert_allclose(tables["avg"][calc], numpy.mean(singles, axis=0), atol=1e-5)


def test_subwords_match_an_unseen_inflection_better_than_words(tmp_path, dictionary_path,
                                                               backbone):
    """"hypercalcemic" is in no training name. Word input sees one unknown word, the same
    for every unseen adjective; subword input sees hyper ##calc ##emic, and ranks
    "hypercalcemia" first among the dictionary's nouns."""
    settings = {"training.max_epochs": 40, "encoder.lstm_hidden": 24}
    sub_dir, _ = train(tmp_path, "sub", dictionary_path, backbone,
                       **{**settings, "training.extraction": "input"})
    word_dir, _ = train(tmp_path, "word", dictionary_path, backbone,
                        **{**settings, "encoder.inputs": "words", "encoder.embed_dim": 16,
                           "training.extraction": "none"})
    nouns = [f"{p}{s}emia" for p, s in itertools.product(PREFIXES, STEMS)]
    queries = {"hypercalcemic": "hypercalcemia", "hyponatremic": "hyponatremia"}

    def rank_of_right(verifier_dir):
        verifier = CandidateVerifier.from_trained(verifier_dir)
        ranks = []
        for query, right in queries.items():
            probs = verifier.score_pairs([(query, n) for n in nouns])
            ranks.append(int((probs > probs[nouns.index(right)]).sum()))
        return ranks, verifier

    sub_ranks, _ = rank_of_right(sub_dir)
    word_ranks, word = rank_of_right(word_dir)
    # Word input cannot tell the two unseen adjectives apart at all.
    numpy.testing.assert_allclose(word.score_pairs([("hypercalcemic", n) for n in nouns]),
                                  word.score_pairs([("hyponatremic", n) for n in nouns]))
    assert sub_ranks == [0, 0], sub_ranks
    assert sum(sub_ranks) < sum(word_ranks)


def test_tfidf_feature_and_eval_pairs_baseline_row(tmp_path, dictionary_path, backbone):
    from spacy_biolink.cli import app
    from spacy_biolink.encoders.siamese import tfidf_cosines
    from spacy_biolink.encoders.torch_wrapper import torch_module

    output, meta = train(tmp_path, "tfidf", dictionary_path, backbone,
                         **{"encoder.tfidf_feature": True, "training.extraction": "input"})
    verifier = CandidateVerifier.from_trained(output)
    vectorizer = verifier.model.attrs["tfidf"]
    assert vectorizer.is_fitted
    pairs = [("hypercalcemia", "hypercalcemic condition"), ("hypercalcemia", "low ur blood level")]
    cosines = tfidf_cosines(vectorizer, pairs)
    assert cosines[0] > 0.3 and cosines[1] < 0.1
    # The cosine goes into the output unit: changing its weight changes p.
    net = torch_module(verifier.model)
    before = verifier.score_pairs(pairs)
    with torch.no_grad():
        net.mix[1] += 5.0
    after = verifier.score_pairs(pairs)
    assert after[0] > before[0] + 0.01
    assert abs(after[1] - before[1]) < abs(after[0] - before[0])

    metrics = tmp_path / "pairs.json"
    result = CliRunner().invoke(app, ["eval-pairs", str(output), "--dictionary",
                                      str(dictionary_path), "--output", str(metrics)])
    assert result.exit_code == 0, result.output
    assert "TF-IDF cosine" in result.output
    scores = srsly.read_json(metrics)
    baseline = scores["baselines"]["tfidf_cosine"]
    for split in ("dev", "test"):
        assert 0.0 <= baseline[split]["auc"] <= 1.0
        assert baseline[split]["at_dev"]["threshold"] == pytest.approx(baseline["threshold_dev"])
    assert scores["test"]["auc"] == pytest.approx(meta["test_auc"], abs=1e-6)


def test_saved_v2_verifier_loads_through_the_allowlist(tmp_path, dictionary_path, backbone):
    import spacy

    from spacy_biolink.io.safe_models import VERIFIER_ARCHITECTURES

    assert "spacy-biolink.SiameseVerifier.v2" in VERIFIER_ARCHITECTURES
    output, _ = train(tmp_path, "saved", dictionary_path, backbone,
                      **{"encoder.tfidf_feature": True, "training.extraction": "last4"})
    verifier = CandidateVerifier.from_trained(output, mode="next")
    pairs = [("hypercalcemic", "hypercalcemia"), ("hypercalcemic", "hypokalemia")]
    expected = verifier.score_pairs(pairs)
    loaded = CandidateVerifier.from_bytes(verifier.to_bytes())
    numpy.testing.assert_allclose(loaded.score_pairs(pairs), expected, rtol=1e-5)
    verifier.to_disk(tmp_path / "disk")
    numpy.testing.assert_allclose(CandidateVerifier.from_disk(tmp_path / "disk").score_pairs(pairs),
                                  expected, rtol=1e-5)
    # Inside a pipeline: spacy.load rebuilds it from the config, checked before reading.
    from tests.conftest import make_linker_nlp
    from spacy_biolink import load_dictionary

    nlp = make_linker_nlp(load_dictionary(dictionary_path))
    nlp.get_pipe("bio_linker").verifier = verifier
    nlp.to_disk(tmp_path / "pipe")
    reloaded = spacy.load(tmp_path / "pipe").get_pipe("bio_linker").verifier
    numpy.testing.assert_allclose(reloaded.score_pairs(pairs), expected, rtol=1e-5)
    # A config naming another architecture is refused before any byte is read.
    from spacy_biolink.io.safe_models import check_model_config

    with pytest.raises(BioLinkError, match="E120"):
        check_model_config({"@architectures": "spacy.HashEmbedCNN.v2"}, role="verifier")
