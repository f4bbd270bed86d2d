"""AutoSparseIndex.v5: AutoSparseIndex.v4 whose approximate search rescores more
candidates as the dictionary grows (PrunedSparseIndex.candidates_for). At a size it
answers as v4 with that many candidates, bit for bit; under growth_from names it is v4.
Settings are checked, travel through the config and the saved meta."""
import numpy
import pytest
import spacy

from spacy_biolink.errors import BioLinkError
from spacy_biolink.evaluation.search_recall import tie_aware_recall
from spacy_biolink.index import SparseIndex
from spacy_biolink.legacy.index import build_auto_sparse_index_v4 as auto_v4
from spacy_biolink.legacy.index import build_auto_sparse_index_v5 as auto_v5

from .conftest import doc_with_ents, make_linker_nlp
from .test_word_index import names_and_queries


@pytest.fixture(scope="module")
def data():
    return names_and_queries()


def built(builder, data, **settings):
    names, vectorizer, rows, _ = data
    index = builder(min_names=1, n_threads=1, **settings)
    index.build(rows)
    assert index.add_words(iter(names), vectorizer)
    return index


def test_default_candidates_grow_fourfold_per_tenfold_names_from_1m_to_1024():
    approximate = auto_v5().approximate
    sizes = (783_967, 1_000_000, 2_793_068, 9_136_714, 10_000_000, 100_000_000)
    assert [approximate.candidates_for(n) for n in sizes] == [256, 256, 475, 970, 1024, 1024]
    # v4 keeps its 256 at every size.
    assert auto_v4().approximate.candidates_for(100_000_000) == 256


def test_v5_answers_as_v4_with_the_grown_number_of_candidates(data):
    *_, rows, queries = data
    # 3,000 names, growth from 300: one tenfold, 10 -> 40 candidates.
    v5 = built(auto_v5, data, candidates=10, growth_from=300, max_candidates=64)
    assert v5.approximate.candidates_for(v5.n_vectors) == 40
    grown = v5.search(queries, 10)
    for got, want in zip(grown, built(auto_v4, data, candidates=40).search(queries, 10)):
        numpy.testing.assert_array_equal(got, want)
    exact = SparseIndex()
    exact.build(rows)
    exact_scores, exact_ids = exact.search(queries, 10)
    few_scores, few_ids = built(auto_v4, data, candidates=10).search(queries, 10)
    # Measured on these names: 0.8625 with v4's 10 candidates, 0.9788 with v5's 40.
    assert tie_aware_recall(few_scores, exact_scores, exact_ids, 10) == \
        pytest.approx(0.8625, abs=0.005)
    assert tie_aware_recall(grown[0], exact_scores, exact_ids, 10) == \
        pytest.approx(0.9788, abs=0.005)


def test_v5_under_growth_from_is_v4(data):
    *_, queries = data
    v5 = built(auto_v5, data, candidates=8)  # 3,000 names: far under 1M
    for got, want in zip(v5.search(queries, 10),
                         built(auto_v4, data, candidates=8).search(queries, 10)):
        numpy.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("settings", [{"candidates_growth": 0.5},
                                      {"growth_from": 0},
                                      {"candidates": 256, "max_candidates": 128},
                                      {"candidates_growth": "4"}, {"growth_from": None},
                                      {"max_candidates": True}])
def test_bad_growth_settings_are_refused(settings):
    with pytest.raises(BioLinkError, match="E225"):
        auto_v5(**settings)


def test_v5_round_trips_through_config_and_disk(tiny_dictionary, tmp_path):
    nlp = make_linker_nlp(tiny_dictionary, index={
        "@misc": "spacy-biolink.AutoSparseIndex.v5", "min_names": 1, "candidates": 2,
        "growth_from": 2, "max_candidates": 8})
    index = nlp.get_pipe("bio_linker").index
    assert index.prunes and index.words is not None
    assert index.approximate.candidates_for(index.n_vectors) > 2
    meta, _ = index.to_state()
    assert (meta["candidates_growth"], meta["growth_from"], meta["max_candidates"]) == (4.0, 2, 8)
    text, ents = ("Patients with type 2 diabetes and breast cancer were enrolled.",
                  ["type 2 diabetes", "breast cancer"])
    got = [e.kb_id_ for e in nlp(doc_with_ents(nlp, text, ents)).ents]
    nlp.to_disk(tmp_path / "nlp")
    loaded = spacy.load(tmp_path / "nlp")
    loaded_index = loaded.get_pipe("bio_linker").index
    assert loaded.config["components"]["bio_linker"]["index"]["@misc"] == \
        "spacy-biolink.AutoSparseIndex.v5"
    assert loaded_index.approximate.max_candidates == 8
    assert [e.kb_id_ for e in loaded(doc_with_ents(loaded, text, ents)).ents] == got


def test_v4_saves_nothing_of_v5s_settings(data):
    meta, _ = built(auto_v4, data).to_state()
    assert "candidates_growth" not in meta and "max_candidates" not in meta
