"""The large build's memory path (issue 35): from RELEASE_MEMORY_FROM names the encoded
rows are gathered into arrays grown in place (retriever.SparseRows) instead of stacked
batches, and the postings are dropped while the word step runs and transposed again from
the rows after it. Neither may change what is saved: a small build forced onto that path
must write the files, byte for byte, of the same build on the usual path."""
import filecmp
from pathlib import Path

import numpy
import pytest
import spacy
from scipy import sparse

from spacy_biolink.index import pruned
from spacy_biolink.kb.dictionary import Concept, ConceptDictionary
from spacy_biolink.linker import retriever
from spacy_biolink.linker.retriever import SparseRows

from .conftest import make_linker_nlp
from .test_pruned_index import WORDS

V6 = {"@misc": "spacy-biolink.AutoSparseIndex.v6", "min_names": 1, "rare_from": 0}


def random_rows(sizes, seed=0):
    return [sparse.random(int(n), 300, density=0.05, format="csr", dtype=numpy.float32,
                          random_state=seed + i) for i, n in enumerate(sizes)]


@pytest.mark.parametrize("sizes", [[5], [0, 3, 0], [40, 1, 0, 17, 200, 3, 90]])
def test_sparse_rows_are_the_stacked_batches(sizes):
    parts = random_rows(sizes)
    want = sparse.vstack(parts, format="csr")
    rows = SparseRows(sum(sizes))
    for part in parts:
        rows.append(part)
    got = rows.to_csr()
    assert got.shape == want.shape
    for key in ("data", "indices", "indptr"):
        assert getattr(got, key).dtype == getattr(want, key).dtype, key
        assert getattr(got, key).tobytes() == getattr(want, key).tobytes(), key


def test_sparse_rows_refuse_a_batch_unlike_the_first():
    rows = SparseRows(10)
    rows.append(random_rows([3])[0])
    with pytest.raises(ValueError, match="299 columns"):
        rows.append(sparse.csr_matrix((2, 299), dtype=numpy.float32))
    with pytest.raises(ValueError, match="float64"):
        rows.append(sparse.csr_matrix((2, 300), dtype=numpy.float64))


@pytest.fixture(scope="module")
def dictionary():
    rng = numpy.random.default_rng(5)
    letters = list("abcdefghijklmnopqrstuvwxyz")
    # A tail of rare words, as a real vocabulary has, beside the common ones.
    concepts = [Concept([f"D{i:05d}"], [
        " ".join(rng.choice(WORDS, size=rng.integers(1, 4)))
        + " " + "".join(rng.choice(letters, size=rng.integers(3, 9))) for _ in range(2)])
        for i in range(1500)]
    return ConceptDictionary.from_concepts(concepts)


def saved_index(dictionary, path: Path) -> Path:
    nlp = make_linker_nlp(dictionary, index=V6)
    index = nlp.get_pipe("bio_linker").index
    assert index.prunes and index.words is not None
    nlp.to_disk(path)
    return path / "bio_linker" / "index"


def test_the_large_build_path_saves_the_usual_bytes(dictionary, tmp_path, monkeypatch):
    want = saved_index(dictionary, tmp_path / "usual")
    transposed, appended = [], []
    encode, build, append = (retriever.Retriever.encode, pruned.SparseIndex.build,
                             SparseRows.append)
    monkeypatch.setattr(retriever, "SPARSE_ROWS_FROM", 0)
    monkeypatch.setattr(pruned, "RELEASE_MEMORY_FROM", 0)
    # Small batches, so that the rows are grown over many of them.
    monkeypatch.setattr(retriever.Retriever, "encode",
                        lambda self, texts, **kw: encode(self, texts, **dict(kw, batch_size=97)))
    monkeypatch.setattr(pruned.SparseIndex, "build",
                        lambda self, vectors: transposed.append(self.words) or build(self, vectors))
    monkeypatch.setattr(SparseRows, "append",
                        lambda self, part: appended.append(part.shape[0]) or append(self, part))
    got = saved_index(dictionary, tmp_path / "large")
    # The rows came in batches, and the postings were transposed again after the words.
    assert len(appended) == -(-dictionary.n_names // 97) > 20
    assert len(transposed) == 2 and transposed[0] is None and transposed[1] is not None
    names = sorted(p.name for p in want.iterdir())
    assert names == sorted(p.name for p in got.iterdir()) and "words_data.npy" in names
    _, mismatch, errors = filecmp.cmpfiles(want, got, names, shallow=False)
    assert mismatch == [] and errors == []


def test_unsorted_rows_keep_their_postings_through_the_word_step(monkeypatch):
    """Rows sorted into a copy are not the matrix the postings were transposed from:
    those postings stay, not transposed again."""
    from spacy_biolink.encoders.tfidf import CharNgramTfidf
    from spacy_biolink.index.registry import build_auto_sparse_index_v6 as auto_v6

    names = [f"{a} {b}" for a in WORDS for b in WORDS[:10]]
    vectorizer = CharNgramTfidf()
    vectorizer.fit(names)
    rows = sparse.csr_matrix(vectorizer.transform(names), dtype="f")
    shuffled = rows.copy()
    rng = numpy.random.default_rng(0)
    for i in range(shuffled.shape[0]):  # each row's entries out of order
        lo, hi = shuffled.indptr[i], shuffled.indptr[i + 1]
        order = lo + rng.permutation(hi - lo)
        shuffled.indices[lo:hi] = shuffled.indices[order]
        shuffled.data[lo:hi] = shuffled.data[order]
    shuffled.has_sorted_indices = False
    monkeypatch.setattr(pruned, "RELEASE_MEMORY_FROM", 0)
    for given, again in ((rows, True), (shuffled, False)):
        index = auto_v6(min_names=1, rare_from=0)
        index.build(given)
        postings = index.names_t
        assert index.add_words(iter(names), vectorizer)
        assert (index.names_t is not postings) == again
        numpy.testing.assert_array_equal(index.names_t.toarray(), rows.T.toarray())


def test_large_dictionaries_are_folded_and_encoded_from_a_packed_table(dictionary, tmp_path,
                                                                       monkeypatch):
    """From RELEASE_MEMORY_FROM names the folded names are packed a slice at a time and
    the encoder is fitted on, and encodes, that table: no list of every name is built, and
    every saved file (encoder, index, dictionary) is the usual path's, byte for byte."""
    from spacy_biolink.encoders import tfidf
    from spacy_biolink.kb.dictionary import StringTable
    from spacy_biolink.linker import policy

    want = saved_index(dictionary, tmp_path / "usual").parent.parent
    fitted_on, encoded = [], []
    fit, encode = tfidf.CharNgramTfidf.fit, retriever.Retriever.encode
    monkeypatch.setattr(policy, "RELEASE_MEMORY_FROM", 0)
    monkeypatch.setattr(tfidf.CharNgramTfidf, "fit",
                        lambda self, texts: fitted_on.append(texts) or fit(self, texts))
    monkeypatch.setattr(retriever.Retriever, "encode", lambda self, texts, **kw: (
        encoded.append(texts) or encode(self, texts, **dict(kw, batch_size=97))))
    got = saved_index(dictionary, tmp_path / "packed").parent.parent
    assert [type(t) for t in fitted_on] == [StringTable]
    assert type(encoded[0]) is StringTable and encoded[0] is fitted_on[0]
    assert len(encoded[0]) == dictionary.n_names
    files = sorted(str(p.relative_to(want)) for p in want.rglob("*") if p.is_file())
    assert files == sorted(str(p.relative_to(got)) for p in got.rglob("*") if p.is_file())
    assert "bio_linker/index/words_data.npy" in files and "bio_linker/encoder" in files
    _, mismatch, errors = filecmp.cmpfiles(want, got, files, shallow=False)
    assert mismatch == [] and errors == []


def test_initialize_warns_of_shared_names_without_listing_them_all(monkeypatch):
    """W001 names the count and the first shared name, from the names' positions: the list
    of every shared name with its ids (shared_names) would live through index_names."""
    concepts = [Concept(["D1"], ["heart attack", "mi"]), Concept(["D2"], ["mi", "mitral"]),
                Concept(["D3"], ["mitral", "valve"]), Concept(["D4"], ["solo"])]
    dictionary = ConceptDictionary.from_concepts(concepts)
    assert dictionary.shared_names() == [("mi", ["D1", "D2"]), ("mitral", ["D2", "D3"])]
    assert dictionary.shared_names_at(dictionary.shared_name_positions()[1:]) == [
        ("mitral", ["D2", "D3"])]

    def refuse(self):
        raise AssertionError("shared_names() listed every shared name")

    monkeypatch.setattr(ConceptDictionary, "shared_names", refuse)
    with pytest.warns(UserWarning, match=r"\[W001\] 2 dictionary name\(s\).*'mi': D1, D2"):
        nlp = spacy.blank("en")
        nlp.add_pipe("bio_linker").initialize(dictionary=dictionary)
