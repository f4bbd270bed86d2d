"""WordSparseIndex.v2 / AutoSparseIndex.v4: the query's words from its rarest n-grams only
(word_kernels.word_cosines_pruned). With coverage 1 it is v1's word search bit for bit;
below, its word cosines are lower bounds of v1's, and the names it finds are scored
exactly. Settings are checked, travel through the config and the saved meta."""
import numpy
import pytest
import spacy
from scipy import sparse

from spacy_biolink.errors import BioLinkError
from spacy_biolink.evaluation.search_recall import tie_aware_recall
from spacy_biolink.index import SparseIndex, WordCandidates
from spacy_biolink.index.word_kernels import word_cosines, word_cosines_pruned
from spacy_biolink.legacy.index import build_auto_sparse_index_v4 as auto_v4
from spacy_biolink.legacy.index import build_word_sparse_index as word_v1
from spacy_biolink.legacy.index import build_word_sparse_index_v2 as word_v2

from .conftest import doc_with_ents, make_linker_nlp
from .test_word_index import names_and_queries


@pytest.fixture(scope="module")
def data():
    return names_and_queries()


def built(builder, data, **settings):
    names, vectorizer, rows, _ = data
    index = builder(**settings)
    index.build(rows)
    assert index.add_words(iter(names), vectorizer)
    return index


def kernel_args(words, queries):
    g = words.grams
    return (queries.indptr.astype(numpy.int64), queries.indices.astype(numpy.int32),
            queries.data.astype(numpy.float32), g.indptr.astype(numpy.int64), g.indices,
            g.data, words.n_words)


@pytest.mark.parametrize("n_threads", [1, 2])
def test_full_coverage_is_the_full_word_search_bit_for_bit(data, n_threads):
    *_, queries = data
    words = built(word_v1, data, n_threads=1).words
    args = kernel_args(words, queries)
    for threshold in (0.2, 0.3, 0.9):
        full = word_cosines(*args, numpy.float32(threshold))
        pruned = word_cosines_pruned(*args, numpy.float32(threshold), 1.0,
                                     n_threads=n_threads)
        for got, want in zip(pruned, full):
            numpy.testing.assert_array_equal(got, want)


def test_partial_cosines_are_lower_bounds_read_from_fewer_postings(data):
    *_, queries = data
    words = built(word_v1, data, n_threads=1).words
    args = kernel_args(words, queries)
    full = (queries @ words.grams).toarray()
    indptr, indices, values = word_cosines_pruned(*args, numpy.float32(0.2), 0.6)
    pruned = sparse.csr_matrix((values, indices, indptr), shape=full.shape)
    rows = numpy.repeat(numpy.arange(full.shape[0]), numpy.diff(indptr))
    assert (values <= full[rows, indices] + 1e-6).all()
    # Every query keeps at least its closest word; fewer words are read than in full.
    assert (numpy.diff(indptr) >= 1).all()
    assert pruned.nnz < (full >= 0.2).sum()


def test_v2_finds_the_exact_top_10_with_exact_scores(data):
    *_, rows, queries = data
    index = built(word_v2, data, n_threads=1)
    assert index.source.word_coverage == 0.8 and index.word_threshold == 0.2
    scores, ids = index.search(queries, 10)
    exact = SparseIndex()
    exact.build(rows)
    exact_scores, exact_ids = exact.search(queries, 10)
    # Measured: 1.0 on these names.
    assert tie_aware_recall(scores, exact_scores, exact_ids, 10) == pytest.approx(1.0, abs=0.005)
    found = ids >= 0
    direct = numpy.asarray((queries @ rows.T).todense())
    numpy.testing.assert_allclose(scores[found], numpy.take_along_axis(direct, numpy.where(
        found, ids, 0), axis=1)[found], rtol=1e-5)


def test_v2_at_full_coverage_and_v1_threshold_answers_as_v1(data):
    *_, queries = data
    v1 = built(word_v1, data, n_threads=1)
    v2 = built(word_v2, data, word_coverage=1.0, word_threshold=0.3, n_threads=2)
    for got, want in zip(v2.search(queries, 10), v1.search(queries, 10)):
        numpy.testing.assert_array_equal(got, want)


def test_bad_word_coverage_is_refused():
    for value in (0, -0.1, 1.5, "0.8", True):
        with pytest.raises(BioLinkError, match="E224"):
            word_v2(word_coverage=value)
        with pytest.raises(BioLinkError, match="E224"):
            auto_v4(word_coverage=value)


def test_v4_round_trips_through_config_and_disk(tiny_dictionary, tmp_path):
    nlp = make_linker_nlp(tiny_dictionary, index={
        "@misc": "spacy-biolink.AutoSparseIndex.v4", "min_names": 1, "candidates": 8,
        "word_coverage": 0.6})
    index = nlp.get_pipe("bio_linker").index
    assert isinstance(index.approximate.source, WordCandidates)
    assert index.prunes and index.words is not None
    assert index.approximate.source.word_coverage == 0.6
    assert nlp.config["components"]["bio_linker"]["index"]["word_coverage"] == 0.6
    text, ents = ("Patients with type 2 diabetes and breast cancer were enrolled.",
                  ["type 2 diabetes", "breast cancer"])
    got = [e.kb_id_ for e in nlp(doc_with_ents(nlp, text, ents)).ents]
    exact_nlp = make_linker_nlp(tiny_dictionary, index={"@misc": "spacy-biolink.SparseIndex.v1"})
    assert got == [e.kb_id_ for e in exact_nlp(doc_with_ents(exact_nlp, text, ents)).ents]
    meta, _ = index.to_state()
    assert meta["word_coverage"] == 0.6 and meta["pruning"] is True
    nlp.to_disk(tmp_path / "nlp")
    loaded = spacy.load(tmp_path / "nlp")
    loaded_index = loaded.get_pipe("bio_linker").index
    assert loaded.config["components"]["bio_linker"]["index"]["@misc"] == \
        "spacy-biolink.AutoSparseIndex.v4"
    assert loaded_index.words is not None and loaded_index.approximate.source.word_coverage == 0.6
    assert [e.kb_id_ for e in loaded(doc_with_ents(loaded, text, ents)).ents] == got


def test_v3_saves_nothing_of_v2s_settings(data):
    meta, _ = built(word_v1, data, n_threads=1).to_state()
    assert "word_coverage" not in meta
