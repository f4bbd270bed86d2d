import numpy
import pytest
from thinc.api import Model

from spacy_biolink.errors import BioLinkError
from spacy_biolink.encoders.wordvectors import WordVectors, tokenize
from spacy_biolink.training.wordvectors import corpus_sentences, train_word_vectors

SENTENCES = [["breast", "cancer", "is", "a", "tumor"], ["ovarian", "cancer", "is", "a", "tumor"],
             ["huntington", "disease", "is", "a", "chorea"]] * 20


def test_tokenize_folds_case_and_punctuation():
    assert tokenize("X-linked Alport's syndrome (XL)") == ["x", "linked", "alport", "s", "syndrome", "xl"]


def test_fasttext_gives_dictionary_words_a_vector_and_is_seeded():
    a = train_word_vectors(SENTENCES, dim=16, epochs=2, seed=3, extra_words={"cancers", "choreic"})
    b = train_word_vectors(SENTENCES, dim=16, epochs=2, seed=3, extra_words={"cancers", "choreic"})
    assert "cancers" in a and "choreic" in a  # from character n-grams, never seen
    assert a.words == b.words and numpy.array_equal(a.vectors, b.vectors)
    assert a.coverage(["breast cancers", "unknownword"]) == pytest.approx(2 / 3)


def test_word2vec_has_no_vectors_for_unseen_words():
    vectors = train_word_vectors(SENTENCES, algorithm="word2vec", dim=8, epochs=1,
                                 extra_words={"cancers"})
    assert "cancers" not in vectors and "cancer" in vectors


def test_mean_skips_unknown_words_and_is_zero_for_none():
    vectors = WordVectors(["a", "b"], numpy.array([[1, 0], [0, 2]], dtype="f"))
    assert vectors.mean("a B zzz").tolist() == [0.5, 1.0]
    assert vectors.mean("zzz").tolist() == [0.0, 0.0]
    assert vectors.mean_many(["a", "b"]).shape == (2, 2)


def test_round_trips_on_disk_and_as_a_thinc_attr(tmp_path):
    vectors = train_word_vectors(SENTENCES, dim=8, epochs=1)
    vectors.to_disk(tmp_path / "wv", {"dim": 8})
    loaded = WordVectors.from_disk(tmp_path / "wv")
    assert loaded.words == vectors.words and numpy.array_equal(loaded.vectors, vectors.vectors)
    model = Model("holder", lambda m, X, is_train: (X, lambda d: d), attrs={"vectors": vectors})
    copy = Model("holder", lambda m, X, is_train: (X, lambda d: d), attrs={"vectors": WordVectors()})
    copy.from_bytes(model.to_bytes())
    assert numpy.array_equal(copy.attrs["vectors"].vectors, vectors.vectors)


def test_bad_inputs_are_named(tmp_path):
    with pytest.raises(BioLinkError, match="E601"):
        WordVectors.from_disk(tmp_path)
    with pytest.raises(BioLinkError, match="E603"):
        train_word_vectors(SENTENCES, algorithm="glove")
    with pytest.raises(BioLinkError, match="E604"):
        train_word_vectors([])


def test_corpus_sentences_reads_pubtator_and_names(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("1|t|Wilson disease.\n1|a|It is rare. Copper builds up.\n\n", encoding="utf8")
    sentences = list(corpus_sentences([corpus], ["Menkes Disease"]))
    assert sentences == [["wilson", "disease"], ["it", "is", "rare"], ["copper", "builds", "up"],
                         ["menkes", "disease"]]
