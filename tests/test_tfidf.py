import numpy
import pytest
from thinc.api import Config

from spacy.util import registry

from spacy_biolink.encoders.tfidf import CharNgramTfidf

NAMES = ["Type 2 diabetes", "type 1 diabetes", "breast cancer", "Huntington disease", "HD"]


def build(**overrides):
    cfg = {"@architectures": "spacy-biolink.TfidfEncoder.v1", **overrides}
    return registry.resolve(Config({"model": cfg}))["model"]


@pytest.mark.parametrize("analyzer,ngram_range", [("char_wb", [3, 3]), ("char", [1, 2]),
                                                  ("word", [1, 2]), ("char_wb", [2, 4])])
def test_rows_are_unit_norm_and_exact_match_scores_one(analyzer, ngram_range):
    model = build(analyzer=analyzer, ngram_range=ngram_range)
    model.initialize(X=NAMES)
    vectors = model.predict(NAMES)
    assert vectors.shape[0] == len(NAMES)
    norms = numpy.sqrt(vectors.multiply(vectors).sum(axis=1)).A.ravel()
    assert numpy.allclose(norms, 1.0, atol=1e-5)
    sims = (vectors @ vectors.T).toarray()
    assert numpy.allclose(numpy.diag(sims), 1.0, atol=1e-5)
    assert sims[0, 1] > sims[0, 2]  # the diabetes names are closer to each other


def test_case_folding_and_unknown_text():
    model = build()
    model.initialize(X=NAMES)
    a, b, unknown, empty = model.predict(["BREAST CANCER", "breast cancer", "zzzqqq", ""])
    assert abs((a @ b.T).toarray()[0, 0] - 1.0) < 1e-5
    assert unknown.nnz == 0 and empty.nnz == 0


def test_matches_sklearn_tfidf():
    # scikit-learn comes with the `encoders` extra, not the core install.
    TfidfVectorizer = pytest.importorskip("sklearn.feature_extraction.text").TfidfVectorizer

    ours = CharNgramTfidf("char_wb", (2, 4)).fit(NAMES)
    theirs = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4)).fit(NAMES)
    queries = ["diabetes type 2", "Huntington's chorea", "HD"]
    ours_sims = (ours.transform(queries) @ ours.transform(NAMES).T).toarray()
    theirs_sims = (theirs.transform(queries) @ theirs.transform(NAMES).T).toarray()
    assert numpy.allclose(ours_sims, theirs_sims, atol=1e-5)


def test_bytes_round_trip_gives_identical_vectors():
    model = build(analyzer="char", ngram_range=[1, 2], sublinear_tf=True)
    model.initialize(X=NAMES)
    fresh = build(analyzer="char", ngram_range=[1, 2], sublinear_tf=True).from_bytes(model.to_bytes())
    a, b = model.predict(NAMES), fresh.predict(NAMES)
    assert (a != b).nnz == 0


def test_unfitted_and_invalid_settings():
    with pytest.raises(ValueError, match="E201"):
        build().predict(["x"])
    with pytest.raises(ValueError, match="E202"):
        build(analyzer="chars")
    with pytest.raises(ValueError, match="E203"):
        build(ngram_range=[3, 2])
