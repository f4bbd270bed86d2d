"""Threads while linking (index/threads.py): a batch's query texts are encoded with BLAS
on one thread in the main thread, restored after, and left alone in other threads; a
hybrid search's faiss part gets the cores its sparse thread leaves, in its own thread
only."""
import threading

import faiss
import pytest
import spacy
from threadpoolctl import ThreadpoolController

from spacy_biolink.index import threads
from spacy_biolink.index.threads import openmp_threads, single_threaded_blas

from .conftest import doc_with_ents
from .test_hybrid_index import hybrid_index, hybrid_rows


def blas_threads():
    """The thread count of each BLAS library here that keeps its own threads (numpy's).
    An OpenMP build (faiss's OpenBLAS) answers with the calling thread's OpenMP setting."""
    pools = ThreadpoolController().select(user_api="blas").lib_controllers
    return [pool.num_threads for pool in pools if pool.threading_layer != "openmp"]


@pytest.fixture
def two_blas_threads(monkeypatch):
    """BLAS on two threads for the test, so that one thread is a change (CI may start
    with one), and back as it was after."""
    with ThreadpoolController().limit(limits=2, user_api="blas"):
        monkeypatch.setattr(threads, "_controller", None)  # a fresh view for the test
        assert blas_threads() and set(blas_threads()) == {2}
        yield


def test_a_batch_is_encoded_with_blas_on_one_thread(linker_nlp, two_blas_threads):
    linker = linker_nlp.get_pipe("bio_linker").linker
    seen = []
    encode = linker.encode

    def recording(texts, **kwargs):
        seen.append(set(blas_threads()))
        return encode(texts, **kwargs)

    linker.encode = recording
    doc = doc_with_ents(linker_nlp, "Patients with breast cancer.", ["breast cancer"])
    doc = linker_nlp(doc)
    assert doc.ents[0].kb_id_ and seen == [{1}]
    assert set(blas_threads()) == {2}


def test_other_threads_leave_blas_as_it_is(linker_nlp, two_blas_threads):
    # OpenBLAS ignores a thread count set from another thread: a limit taken there could
    # not be lifted. There the block changes nothing, and linking still links.
    seen, docs = [], []

    def worker():
        with single_threaded_blas():
            seen.append(set(blas_threads()))
        doc = doc_with_ents(linker_nlp, "Patients with breast cancer.", ["breast cancer"])
        docs.append(linker_nlp(doc))

    other = threading.Thread(target=worker)
    other.start()
    other.join(10)
    assert seen == [{2}] and docs and docs[0].ents[0].kb_id_
    assert set(blas_threads()) == {2}
    with single_threaded_blas():
        with single_threaded_blas():
            assert set(blas_threads()) == {1}
        assert set(blas_threads()) == {1}
    assert set(blas_threads()) == {2}


def threads_in_another_thread() -> int:
    """faiss's OpenMP thread count as a new thread sees it."""
    seen = []
    worker = threading.Thread(target=lambda: seen.append(faiss.omp_get_max_threads()))
    worker.start()
    worker.join(10)
    return seen[0]


def test_a_hybrid_search_gives_faiss_the_cores_the_sparse_thread_leaves(monkeypatch):
    names = hybrid_rows(300, seed=8)
    queries = hybrid_rows(40, seed=9)  # >= MIN_QUERIES_FOR_THREADS: the threaded path
    index = hybrid_index(candidates=10, kind="hnsw")
    index.build(names)
    seen = []
    search = type(index.dense).search

    def recording(self, *args):
        seen.append(faiss.omp_get_max_threads())
        return search(self, *args)

    monkeypatch.setattr(type(index.dense), "search", recording)
    with openmp_threads(4):
        index.n_threads = 3
        index.search(queries, 6)
        index.n_threads = 1
        index.search(queries, 6)
        assert seen == [2, 4] and faiss.omp_get_max_threads() == 4
        # OpenMP's setting is the calling thread's: another thread keeps its own.
        default = threads_in_another_thread()
        with openmp_threads(default + 1):
            assert faiss.omp_get_max_threads() == default + 1
            assert threads_in_another_thread() == default
        assert faiss.omp_get_max_threads() == 4


def test_the_thread_pools_are_looked_up_with_the_pipeline(linker_nlp, tmp_path, monkeypatch):
    # Looking them up costs milliseconds a fresh process would otherwise pay in its
    # first batch (issue 58's first pass).
    linker_nlp.to_disk(tmp_path / "nlp")
    monkeypatch.setattr(threads, "_controller", None)
    spacy.load(tmp_path / "nlp")
    assert threads._controller is not None


def test_query_vectors_inside_a_batch_encode_with_blas_on_one_thread(linker_nlp, two_blas_threads):
    # A reranker stage reads the batch's query vectors; the keys the query cache answered
    # are encoded there, under the same limit as the batch's search.
    linker = linker_nlp.get_pipe("bio_linker").linker
    kept = linker.encode(["breast cancer"])
    seen = []
    encode = linker.encode

    def recording(texts, **kwargs):
        seen.append((list(texts), set(blas_threads())))
        return encode(texts, **kwargs)

    linker.encode = recording
    linker._kept_queries = [(["breast cancer"], kept)]
    try:
        vectors = linker.query_vectors(["colon cancer", "breast cancer"])
    finally:
        linker._kept_queries = None
    assert seen == [(["colon cancer"], {1})] and vectors.shape[0] == 2
    assert set(blas_threads()) == {2}
