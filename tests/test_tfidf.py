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


def _reference(vectorizer: CharNgramTfidf, fit_texts, texts):
    """fit and transform as they were before word-level vectorization: document
    frequencies from each text's n-gram set, each row from its n-gram list."""
    from collections import Counter

    from scipy import sparse

    doc_freq = Counter()
    for text in fit_texts:
        doc_freq.update(set(vectorizer.ngrams(text)))
    kept = sorted(g for g, df in doc_freq.items() if df >= vectorizer.min_df)
    vocab = {g: i for i, g in enumerate(kept)}
    df = numpy.array([doc_freq[g] for g in kept], dtype=numpy.float64)
    idf = (numpy.log((1.0 + len(fit_texts)) / (1.0 + df)) + 1.0).astype(numpy.float32)
    rows, cols, vals = [], [], []
    for r, text in enumerate(texts):
        counts = Counter(vocab[g] for g in vectorizer.ngrams(text) if g in vocab)
        for f in sorted(counts):
            rows.append(r)
            cols.append(f)
            tf = 1.0 + numpy.log(counts[f]) if vectorizer.sublinear_tf else counts[f]
            vals.append(numpy.float32(tf) * idf[f])
    m = sparse.csr_matrix((numpy.array(vals, numpy.float32), (rows, cols)),
                          shape=(len(texts), len(vocab)))
    norms = numpy.sqrt(numpy.asarray(m.multiply(m).sum(axis=1), dtype=numpy.float64)).ravel()
    norms[norms == 0] = 1
    return vocab, idf, sparse.diags(1 / norms) @ m


@pytest.mark.parametrize("settings", [dict(), dict(ngram_range=(2, 4), min_df=2),
                                      dict(lowercase=False, sublinear_tf=True)])
def test_word_level_char_wb_equals_per_text_reference(settings, monkeypatch):
    import random

    import spacy_biolink.encoders.tfidf as tfidf

    rnd = random.Random(0)
    words = ["Type", "diabetes", "ab", "a", "Cancer", "cancer", "breast", "ΣΟΦΙΑ", "x-ray", "ss"]
    texts = [" ".join(rnd.choice(words) for _ in range(rnd.randint(0, 6))) for _ in range(300)]
    texts += ["", "   ", "diabetes  diabetes\tdiabetes", "zzzz"]
    queries = texts[:50] + ["unknownword", "DIABETES type", ""]
    # Small chunks, so that fit and transform cross chunk edges.
    monkeypatch.setattr(tfidf, "TEXT_CHUNK", 7)
    ours = CharNgramTfidf("char_wb", **settings).fit(texts)
    vocab, idf, expected = _reference(ours, texts, queries)
    assert ours.vocab == vocab
    assert (ours.idf == idf).all()
    got = ours.transform(queries)
    assert got.shape == expected.shape
    assert numpy.allclose(got.toarray(), expected.toarray(), atol=1e-6)
    # Chunked or whole, one text or many: the same rows, bit for bit.
    monkeypatch.setattr(tfidf, "TEXT_CHUNK", 10_000)
    whole = ours.transform(queries)
    assert (whole != got).nnz == 0 and whole.has_canonical_format
    for i, query in enumerate(queries):
        assert (ours.transform([query]) != whole[i]).nnz == 0
