"""WordSparseIndex.v1 / AutoSparseIndex.v3: candidates from word postings. The split of a
char_wb TF-IDF score over words is exact, the search finds the exact top 10, it saves and
memory-maps its word postings, it falls back on n-gram candidates where the rows are not
sums over words, and bio_linker uses it by default past min_names."""
import multiprocessing

import numpy
import pytest
import spacy
from scipy import sparse

from spacy_biolink.encoders.tfidf import CharNgramTfidf
from spacy_biolink.errors import BioLinkError
from spacy_biolink.evaluation.search_recall import tie_aware_recall
from spacy_biolink.index import AutoSparseIndex, SparseIndex, WordCandidates
from spacy_biolink.index.threads import usable_cores
from spacy_biolink.legacy.index import build_auto_sparse_index_v3 as auto_v3
from spacy_biolink.index.registry import build_pruned_sparse_index_v2 as pruned_v2
from spacy_biolink.legacy.index import build_word_sparse_index as word_v1
from spacy_biolink.index.word_postings import WordPostings

from .conftest import doc_with_ents, make_linker_nlp, record_kernel_threads
from .test_pruned_index import WORDS, _backed_by_memmap


def names_and_queries(n_names=3000, n_queries=80, seed=0, **tfidf):
    rng = numpy.random.default_rng(seed)
    names = [" ".join(rng.choice(WORDS, size=rng.integers(1, 6))) for _ in range(n_names)]
    # Some repeated words and misspellings, which a real dictionary has.
    names[:50] = [n + " " + n.split()[0] for n in names[:50]]
    queries = []
    for i in rng.choice(n_names, size=n_queries, replace=False):
        words = names[i].split()
        if rng.random() < 0.5:
            w = rng.integers(len(words))
            words[w] = words[w][:-1] + "x"
        queries.append(" ".join(words))
    vectorizer = CharNgramTfidf(**tfidf)
    vectorizer.fit(names)
    return (names, vectorizer, sparse.csr_matrix(vectorizer.transform(names), dtype="f"),
            sparse.csr_matrix(vectorizer.transform(queries), dtype="f"))


@pytest.fixture(scope="module")
def data():
    return names_and_queries()


def word_index(data, **settings):
    names, vectorizer, rows, _ = data
    index = word_v1(**settings)
    index.build(rows)
    assert index.add_words(iter(names), vectorizer)
    return index


def test_word_postings_split_every_score_exactly(data):
    names, vectorizer, rows, queries = data
    words = WordPostings.from_names(iter(names), vectorizer, rows, min_share=0)
    # sum over words u of cos(q, w_u) * c(u, n) for every word: the exact cosine q . n.
    cosines = queries @ words.grams
    split = (cosines @ words.postings).toarray()
    numpy.testing.assert_allclose(split, (queries @ rows.T).toarray(), atol=2e-6)


def test_word_candidates_find_the_exact_top_10_with_exact_scores(data):
    *_, rows, queries = data
    index = word_index(data, word_threshold=0.25, candidates=100)
    scores, ids = index.search(queries, 10)
    exact = SparseIndex()
    exact.build(rows)
    exact_scores, exact_ids = exact.search(queries, 10)
    # Measured: 1.0 (every exact top-10 name found).
    assert tie_aware_recall(scores, exact_scores, exact_ids, 10) == pytest.approx(1.0, abs=0.005)
    # Whatever is returned is scored as the exact search scores it.
    found = ids >= 0
    direct = numpy.asarray((queries @ rows.T).todense())
    numpy.testing.assert_allclose(scores[found], numpy.take_along_axis(direct, numpy.where(
        found, ids, 0), axis=1)[found], rtol=1e-5)


def test_a_high_threshold_reads_fewer_words_and_still_answers_every_query(data):
    *_, queries = data
    index = word_index(data, word_threshold=1.0, candidates=20)
    kept = index.words.word_queries(queries, 1.0)
    # None reaches cosine 1 with a misspelled query, yet each keeps its closest word.
    assert (numpy.diff(kept.indptr) >= 1).all()
    assert kept.nnz < index.words.word_queries(queries, 0.2).nnz
    scores, ids = index.search(queries, 5)
    assert (ids[:, 0] >= 0).all()


def test_rows_that_are_not_sums_over_words_fall_back_to_ngram_candidates(data):
    names, vectorizer, _, queries = data
    sublinear = CharNgramTfidf(sublinear_tf=True)
    sublinear.fit(names)
    # With 1 + log(tf) a repeated word no longer adds up: detected, not trusted.
    rows = sparse.csr_matrix(sublinear.transform(names), dtype="f")
    index = word_v1(candidates=100)
    index.build(rows)
    assert not index.add_words(iter(names), vectorizer)
    assert index.words is None
    v2 = pruned_v2(candidates=100)
    v2.build(rows)
    for a, b in zip(index.search(queries, 10), v2.search(queries, 10)):
        numpy.testing.assert_array_equal(a, b)


def test_word_postings_are_saved_and_memory_mapped(data, tmp_path):
    *_, queries = data
    index = word_index(data, candidates=100)
    expected = index.search(queries, 10)
    index.to_disk(tmp_path / "index")
    loaded = word_v1(candidates=100).from_disk(tmp_path / "index")
    assert _backed_by_memmap(loaded.words.postings.data)
    assert _backed_by_memmap(loaded.words.postings.indices)
    for a, b in zip(loaded.search(queries, 10), expected):
        numpy.testing.assert_array_equal(a, b)


def test_adding_names_drops_the_word_postings_until_rebuilt(data):
    *_, rows, queries = data
    index = word_index(data, candidates=100)
    index.add(rows[:10])
    assert index.words is None
    assert index.search(queries, 3)[1].shape == (queries.shape[0], 3)


def test_bad_word_threshold_is_refused():
    for value in (0, -0.1, 1.5, "0.3", True):
        with pytest.raises(BioLinkError, match="E222"):
            word_v1(word_threshold=value)


def test_bio_linker_defaults_to_auto_v3_and_links_as_exact_search(tiny_dictionary, tmp_path):
    nlp = spacy.blank("en")
    default = nlp.add_pipe("bio_linker").index
    assert type(default) is AutoSparseIndex
    assert isinstance(default.approximate.source, WordCandidates)
    auto = make_linker_nlp(tiny_dictionary, index={
        "@misc": "spacy-biolink.AutoSparseIndex.v3", "min_names": 1, "candidates": 8})
    index = auto.get_pipe("bio_linker").index
    assert index.prunes and index.words is not None
    exact_nlp = make_linker_nlp(tiny_dictionary, index={"@misc": "spacy-biolink.SparseIndex.v1"})
    text, ents = ("Patients with type 2 diabetes and breast cancer were enrolled.",
                  ["type 2 diabetes", "breast cancer"])
    got = [e.kb_id_ for e in auto(doc_with_ents(auto, text, ents)).ents]
    assert got == [e.kb_id_ for e in exact_nlp(doc_with_ents(exact_nlp, text, ents)).ents]
    auto.to_disk(tmp_path / "nlp")
    loaded = spacy.load(tmp_path / "nlp", config={
        "components": {"bio_linker": {"index": {"word_threshold": 0.5}}}})
    loaded_index = loaded.get_pipe("bio_linker").index
    assert loaded_index.words is not None and loaded_index.word_threshold == 0.5
    assert [e.kb_id_ for e in loaded(doc_with_ents(loaded, text, ents)).ents] == got


def test_below_min_names_the_default_searches_exactly(tiny_dictionary):
    nlp = make_linker_nlp(tiny_dictionary)
    index = nlp.get_pipe("bio_linker").index
    assert not index.prunes and index.words is None


def test_threads_give_the_same_results_and_bad_counts_are_refused(data, monkeypatch):
    from spacy_biolink.index import block_kernels

    *_, queries = data
    one = word_index(data, candidates=100, n_threads=1)
    two = word_index(data, candidates=100, n_threads=2)
    many = sparse.vstack([queries] * 2, format="csr")  # enough rows for two threads
    want = one.search(many, 10)
    threads = record_kernel_threads(monkeypatch, block_kernels, "_bucketed_candidates", 2)
    got = two.search(many, 10)
    monkeypatch.undo()
    assert len(threads) == 2
    for a, b in zip(got, want):
        numpy.testing.assert_array_equal(a, b)
    for value in (-1, 1.5, "2", True):
        with pytest.raises(BioLinkError, match="E223"):
            auto_v3(n_threads=value)
    # 0, the default, is one thread per core this process may use, and one in a child
    # process (nlp.pipe(n_process=N)), where the siblings already take the cores.
    assert auto_v3().n_threads == auto_v3(n_threads=0).n_threads == \
        usable_cores()
    assert auto_v3(n_threads=3).n_threads == 3
    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.apply(_threads_in_child, (auto_v3(),)) == 1
        assert pool.apply(_threads_in_child, (auto_v3(n_threads=2),)) == 2


def _threads_in_child(index) -> int:
    return index.n_threads


def test_small_shares_are_not_posted_but_every_name_keeps_one(data):
    names, vectorizer, rows, _ = data
    every = WordPostings.from_names(iter(names), vectorizer, rows, min_share=0).postings
    kept = WordPostings.from_names(iter(names), vectorizer, rows, min_share=0.45).postings
    assert 0 < kept.nnz < every.nnz
    assert (kept.data >= 0.45).sum() == (every.data >= 0.45).sum()
    # Each name is still reachable through its largest share.
    assert (numpy.diff(kept.T.tocsr().indptr) >= 1).all()
    numpy.testing.assert_array_equal(kept.T.tocsr().max(axis=1).toarray(),
                                     every.T.tocsr().max(axis=1).toarray())
