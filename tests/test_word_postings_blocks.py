"""The 10M build's memory (issue 35): WordPostings.from_names works over blocks of names
and words, the build hands freed heap back between steps, and the word postings read
the names as encoding folded them. None of it may change what is saved: the arrays must
be, byte for byte, those of the whole-matrix build it replaced (written out here as the
reference), whatever the block size."""
import sys

import numpy
import pytest
from scipy import sparse

from spacy_biolink.encoders.tfidf import CharNgramTfidf
from spacy_biolink.index.word_postings import MIN_SHARE, WordPostings, _keep_shares
from spacy_biolink.io.util import RELEASE_MEMORY_FROM, release_memory
from spacy_biolink.kb import dictionary as dictionary_module
from spacy_biolink.kb.dictionary import StringTable
from spacy_biolink.linker.retriever import Retriever
from spacy_biolink.text.normalize import MentionNormalizer



@pytest.fixture(scope="module")
def data():
    # A long tail of distinct words (as in a real vocabulary) and some repeated ones.
    rng = numpy.random.default_rng(3)
    letters = list("abcdefghijklmnopqrstuvwxyz0123456789-")
    tail = ["".join(rng.choice(letters, size=rng.integers(1, 14))) for _ in range(1200)]
    common = ["disease", "syndrome", "type", "2", "cancer", "of", "the", "acid"]
    names = [" ".join(rng.choice(common + tail[:200], size=rng.integers(1, 4)))
             + " " + tail[i % len(tail)] for i in range(1500)]
    names[:20] = [n + " " + n.split()[0] for n in names[:20]]  # a word twice in a name
    vectorizer = CharNgramTfidf()
    vectorizer.fit(names)
    return names, vectorizer, sparse.csr_matrix(vectorizer.transform(names), dtype="f")


def one_block_build(names, vectorizer, rows, min_share):
    """from_names as it was before blocks (session 17): whole matrices, one step each."""
    word_ids, ids, indptr = {}, [], [0]
    for text in names:
        for word in (text.lower() if vectorizer.lowercase else text).split():
            ids.append(word_ids.setdefault(word, len(word_ids)))
        indptr.append(len(ids))
    name_words = sparse.csr_matrix((numpy.ones(len(ids), dtype=numpy.float32),
                                    numpy.array(ids, dtype=numpy.int32),
                                    numpy.array(indptr, dtype=numpy.int64)),
                                   shape=(rows.shape[0], len(word_ids)))
    name_words.sum_duplicates()
    word_rows, features = [], []
    for word, word_id in word_ids.items():
        for gram in vectorizer._word_ngrams(word):
            feature = vectorizer.vocab.get(gram)
            if feature is not None:
                word_rows.append(word_id)
                features.append(feature)
    counts = sparse.csr_matrix((numpy.ones(len(word_rows)), (word_rows, features)),
                               shape=(len(word_ids), len(vectorizer.vocab)))
    counts.sum_duplicates()
    words = sparse.csr_matrix(counts @ sparse.diags(vectorizer.idf.astype(numpy.float64)))
    word_norms = numpy.sqrt(numpy.asarray(words.multiply(words).sum(axis=1)).ravel())
    summed = name_words @ words
    name_norms = numpy.sqrt(numpy.asarray(summed.multiply(summed).sum(axis=1)).ravel())
    unit_words = sparse.diags(1.0 / numpy.maximum(word_norms, 1e-30)) @ words
    coefficient = name_words.multiply(word_norms[None, :].astype(numpy.float32))
    coefficient = sparse.csr_matrix(
        sparse.diags((1.0 / numpy.maximum(name_norms, 1e-30)).astype(numpy.float32))
        @ coefficient, dtype=numpy.float32)
    coefficient = _keep_shares(coefficient, min_share)
    postings = coefficient.T.tocsr()
    postings.sort_indices()
    grams = sparse.csr_matrix(unit_words.T, dtype=numpy.float32)
    grams.sort_indices()
    return WordPostings(postings, grams)


def assert_same_bytes(got: WordPostings, want: WordPostings):
    got, want = got.to_arrays(), want.to_arrays()
    assert sorted(got) == sorted(want)
    for key in want:
        assert got[key].dtype == want[key].dtype, key
        assert got[key].shape == want[key].shape, key
        assert numpy.ascontiguousarray(got[key]).tobytes() == \
            numpy.ascontiguousarray(want[key]).tobytes(), key


@pytest.mark.parametrize("min_share", [0.0, MIN_SHARE])
@pytest.mark.parametrize("block", [1, 7, 640, 10 ** 9])
def test_blocked_build_saves_the_one_block_builds_bytes(data, block, min_share):
    names, vectorizer, rows = data
    want = one_block_build(names, vectorizer, rows, min_share)
    got = WordPostings.from_names(iter(names), vectorizer, rows, min_share=min_share,
                                  block=block)
    assert got.n_words == want.n_words > 1000
    # The rare-gram arrays are derived from the grams and saved with them.
    got.rare_gram_postings(4)
    want.rare_gram_postings(4)
    assert_same_bytes(got, want)


def test_word_texts_are_the_names_as_folded_for_encoding():
    normalizer = MentionNormalizer()
    names = ["Breast Cancer", "Type-2 Diabetes", "Cancers of the breast", "Ataxia"]
    folded = StringTable.from_strings([normalizer.name(n) for n in names])
    retriever = Retriever(None, None, normalizer)

    class Searched:  # what plan gives for index_sources selecting names 0, 2, 3
        pass

    searched = Searched()
    searched.names = [names[i] for i in (0, 2, 3)]
    expected = [normalizer.name(n) for n in searched.names]
    assert list(retriever._word_texts(searched, numpy.array([0, 2, 3]), folded)) == expected
    assert list(retriever._word_texts(searched, numpy.array([0, 2, 3]), None)) == expected
    searched.names = names
    assert list(retriever._word_texts(searched, numpy.arange(4), folded)) == \
        ["breast cancer", "type 2 diabetes", "cancers of the breast", "ataxia"]


def test_string_table_packs_a_chunk_at_a_time(monkeypatch):
    monkeypatch.setattr(dictionary_module, "ITER_CHUNK", 3)
    strings = ["", "é", "naïve cell", "", "x" * 40, "δ-opioid", "a", "b", "c", "d"]
    for n in range(len(strings) + 1):
        table = StringTable.from_strings(iter(strings[:n]))
        assert len(table) == n and list(table) == strings[:n]
        assert [table[i] for i in range(n)] == strings[:n]
        assert table.offsets.dtype == numpy.int64 and table.offsets[0] == 0
        assert table.blob.dtype == numpy.uint8


def _rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc_trim is glibc's")
def test_release_memory_hands_freed_heap_back():
    # 100 kB arrays come from the heap (under glibc's mmap threshold); the one kept last
    # stops the heap from shrinking by itself when the others are freed.
    held = [numpy.ones(100_000 // 8) for _ in range(3000)]
    last = numpy.ones(100_000 // 8)
    del held
    before = _rss_bytes()
    release_memory(RELEASE_MEMORY_FROM)
    assert before - _rss_bytes() > 150e6
    assert last.sum() == 100_000 // 8


def test_release_memory_is_skipped_for_small_builds(monkeypatch):
    # A full collection costs more than a small build (the property tests' index builds
    # ran 40x slower with it), so below RELEASE_MEMORY_FROM names nothing is collected.
    import gc

    collections = []
    monkeypatch.setattr(gc, "collect", lambda *args: collections.append(args) or 0)
    release_memory(RELEASE_MEMORY_FROM - 1)
    assert collections == []
    release_memory(RELEASE_MEMORY_FROM)
    assert collections == [()]
