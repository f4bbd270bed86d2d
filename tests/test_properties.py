"""Property tests (hypothesis) on generated inputs: each approximate index against the exact
search, the normalizer's idempotence, composite splitting, and save/load round trips of the
indexes and the ConceptDictionary.

What "the same result" means is stated per index: the sparse indexes rescore their
candidates exactly, so whatever they return is scored as the exact search scores it and
their i-th best can only fall short of the exact i-th best; with settings that read
everything (or with room for every candidate they read) they return the exact search's
answer bit for bit; the word index has no such setting, so its recall guarantee is checked
instead. IVF-SQ8 stores 8-bit codes,
so its scores are exact within the quantization step. HNSW has no setting that guarantees
an exhaustive search, so only what it returns is checked.
"""
import re

import numpy
import pytest
import spacy
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from scipy import sparse

from spacy_biolink.encoders.tfidf import CharNgramTfidf
from spacy_biolink.kb.dictionary import Concept, ConceptDictionary, StringTable
from spacy_biolink.text.composites import split_composite
from spacy_biolink.text.normalize import MentionNormalizer

# Deadlines off: the first example of a run may compile or load numba kernels.
FAST = settings(max_examples=25, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Words that share character 3-grams with each other, so names compete for a query.
WORDS = ["cancer", "cancers", "carcinoma", "breast", "ovarian", "renal", "retinal",
         "failure", "heart", "hearing", "loss", "diabetes", "type", "insipidus", "anemia",
         "sickle", "cell", "kidney", "polycystic", "dystrophy", "muscular"]

names_strategy = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join),
                          min_size=2, max_size=60)
queries_strategy = st.lists(st.lists(st.sampled_from(WORDS + ["cancr", "hart", "renall"]),
                                     min_size=1, max_size=4).map(" ".join),
                            min_size=1, max_size=8)


def build(name: str, **settings_):
    """An index made by its registered builder, as a config names it."""
    return spacy.util.registry.misc.get(name)(**settings_)


def tfidf(names, queries):
    """The char_wb TF-IDF vectorizer fitted on `names`, and the names' and queries' rows."""
    vectorizer = CharNgramTfidf()
    vectorizer.fit(names)
    as_rows = lambda texts: sparse.csr_matrix(vectorizer.transform(texts), dtype=numpy.float32)
    return vectorizer, as_rows(names), as_rows(queries)


def exact_search(rows, queries, k):
    """SparseIndex.v1's (scores, ids) for the queries: the reference."""
    index = build("spacy-biolink.SparseIndex.v1")
    index.build(rows)
    return index.search(queries, k)


def assert_scored_exactly(rows, queries, result):
    """Each returned id carries its exact inner product with the query, best first (ties
    to the lower id), and padding is (0, -1) after the last name found."""
    scores, ids = result
    dense = (queries @ rows.T).toarray()
    found = ids >= 0
    numpy.testing.assert_allclose(scores[found], dense[numpy.nonzero(found)[0], ids[found]],
                                  rtol=1e-5, atol=1e-7)
    assert (scores[~found] == 0).all()
    for row_scores, row_ids, row_found in zip(scores, ids, found):
        n = int(row_found.sum())
        assert row_found[:n].all()  # padding only at the end
        assert len(set(row_ids[:n].tolist())) == n
        order = sorted(range(n), key=lambda j: (-row_scores[j], row_ids[j]))
        assert order == list(range(n))


def assert_never_better_than_exact(result, exact):
    """The i-th best returned score is at most the exact search's i-th best: what is
    returned is a subset of the names, each scored exactly."""
    assert (result[0] <= exact[0] + 1e-6).all()


# name, settings that prune (candidates may miss), settings that read everything
SPARSE_INDEXES = [
    ("spacy-biolink.PrunedSparseIndex.v1", {"coverage": 0.5, "candidates": 3},
     {"coverage": 1.0, "candidates": 1000}),
    ("spacy-biolink.AutoSparseIndex.v1", {"min_names": 1, "coverage": 0.5, "candidates": 3},
     {"min_names": 10 ** 6, "coverage": 0.5, "candidates": 3}),
    ("spacy-biolink.PrunedSparseIndex.v2", {"coverage": 0.5, "candidates": 3},
     {"coverage": 1.0, "candidates": 1000}),
    ("spacy-biolink.AutoSparseIndex.v2", {"min_names": 1, "coverage": 0.5, "candidates": 3},
     {"min_names": 10 ** 6, "coverage": 0.5, "candidates": 3}),
    # No setting makes the word candidates exhaustive (see the test after this one).
    ("spacy-biolink.WordSparseIndex.v1", {"word_threshold": 0.6, "candidates": 3, "n_threads": 1},
     None),
    ("spacy-biolink.AutoSparseIndex.v3",
     {"min_names": 1, "word_threshold": 0.6, "candidates": 3, "n_threads": 1},
     {"min_names": 10 ** 6, "word_threshold": 0.6, "candidates": 3, "n_threads": 1}),
    ("spacy-biolink.WordSparseIndex.v2",
     {"word_threshold": 0.4, "word_coverage": 0.5, "candidates": 3, "n_threads": 1}, None),
    ("spacy-biolink.AutoSparseIndex.v4",
     {"min_names": 1, "word_threshold": 0.4, "word_coverage": 0.5, "candidates": 3,
      "n_threads": 2},
     {"min_names": 10 ** 6, "word_threshold": 0.4, "candidates": 3, "n_threads": 1}),
    # growth_from 1: the candidates grow with these few names as they do past 1M by default.
    ("spacy-biolink.AutoSparseIndex.v5",
     {"min_names": 1, "word_threshold": 0.4, "word_coverage": 0.5, "candidates": 2,
      "candidates_growth": 2.0, "growth_from": 1, "max_candidates": 10 ** 4, "n_threads": 2},
     {"min_names": 10 ** 6, "word_threshold": 0.4, "candidates": 3, "n_threads": 1}),
    ("spacy-biolink.WordSparseIndex.v3",
     {"word_threshold": 0.4, "rare_grams": 2, "rare_hits": 1, "candidates": 3,
      "n_threads": 1}, None),
    ("spacy-biolink.AutoSparseIndex.v6",
     {"min_names": 1, "word_threshold": 0.4, "rare_grams": 3, "rare_hits": 2, "rare_from": 0,
      "candidates": 2,
      "candidates_growth": 2.0, "growth_from": 1, "max_candidates": 10 ** 4, "n_threads": 2},
     {"min_names": 10 ** 6, "word_threshold": 0.4, "candidates": 3, "n_threads": 1}),
]


def built_sparse(name, settings_, names, rows, vectorizer):
    """A sparse index from its builder over `rows`, with word postings where it has them."""
    index = build(name, **settings_)
    index.build(rows)
    if hasattr(index, "add_words"):
        # Word candidates only exist once the names' texts are given (as bio_linker does).
        index.add_words(iter(names), vectorizer)
    return index


@pytest.mark.parametrize("name,pruning,exhaustive", SPARSE_INDEXES,
                         ids=[entry[0].split(".", 1)[1] for entry in SPARSE_INDEXES])
@FAST
@given(names=names_strategy, queries=queries_strategy, k=st.integers(1, 8))
def test_sparse_index_against_the_exact_search(name, pruning, exhaustive, names, queries, k):
    vectorizer, rows, query_rows = tfidf(names, queries)
    exact = exact_search(rows, query_rows, k)

    index = built_sparse(name, pruning, names, rows, vectorizer)
    if name.startswith("spacy-biolink.Word") or name.endswith(("AutoSparseIndex.v3",
                                                               "AutoSparseIndex.v4",
                                                               "AutoSparseIndex.v5",
                                                               "AutoSparseIndex.v6")):
        assert index.words is not None  # the word candidates, not the n-gram fallback
    result = index.search(query_rows, k)
    assert_scored_exactly(rows, query_rows, result)
    assert_never_better_than_exact(result, exact)

    if exhaustive is None:
        return
    complete = built_sparse(name, exhaustive, names, rows, vectorizer).search(query_rows, k)
    numpy.testing.assert_array_equal(complete[1], exact[1])
    numpy.testing.assert_array_equal(complete[0], exact[0])


def touched_names(index, queries, rows):
    """Per query, the names the index reads candidates from: those sharing a kept n-gram
    with the pruned query (coverage), or holding a posted word within word_threshold."""
    from spacy_biolink.index.pruned import prune_queries

    if getattr(index, "words", None) is not None:
        # WordSparseIndex.v2 reads each query's rarest n-grams only (word_coverage).
        source = getattr(index, "approximate", index).source
        words = index.words.word_queries(queries, index.word_threshold,
                                         coverage=getattr(source, "word_coverage", None),
                                         rare_grams=getattr(source, "rare_grams", None),
                                         rare_hits=getattr(source, "rare_hits", 1))
        partial = words @ index.words.postings
    else:
        partial = prune_queries(queries, index.coverage) @ rows.T
    return [set(numpy.flatnonzero(row).tolist()) for row in partial.toarray() > 0]


@pytest.mark.parametrize("name,pruning", [(n, p) for n, p, _ in SPARSE_INDEXES],
                         ids=[entry[0].split(".", 1)[1] for entry in SPARSE_INDEXES])
@FAST
@given(names=names_strategy, queries=queries_strategy, k=st.integers(1, 8))
def test_with_room_for_every_candidate_the_pruned_search_is_exact_over_what_it_reads(
        name, pruning, names, queries, k):
    """With `candidates` above the names' count, the pruned path (n-gram or word
    candidates) returns exactly the exact search's ranking restricted to the names it
    reads: every candidate kernel must hand over all of them."""
    vectorizer, rows, query_rows = tfidf(names, queries)
    index = built_sparse(name, dict(pruning, candidates=1000), names, rows, vectorizer)
    assert index.prunes
    scores, ids = index.search(query_rows, k)
    full_scores, full_ids = exact_search(rows, query_rows, len(names))
    for i, touched in enumerate(touched_names(index, query_rows, rows)):
        keep = [j for j, name_id in enumerate(full_ids[i]) if name_id in touched][:k]
        n = len(keep)
        assert ids[i, :n].tolist() == full_ids[i, keep].tolist()
        numpy.testing.assert_array_equal(scores[i, :n], full_scores[i, keep])
        assert (ids[i, n:] == -1).all()


@FAST
@given(names=names_strategy, queries=queries_strategy, threshold=st.floats(0.05, 1.0))
def test_word_candidates_hold_every_one_word_name_near_the_query(names, queries, threshold):
    """What the word index guarantees: a name posts its largest word share (for a one-word
    name, its only word, at share 1), and a query reads every word within word_threshold
    cosine of it; so with room for every candidate each one-word name that close to the
    query is returned. (Longer names may be found through another word only: the index
    drops word shares below MIN_SHARE, so no setting makes it exhaustive.)"""
    vectorizer, rows, query_rows = tfidf(names, queries)
    index = built_sparse("spacy-biolink.WordSparseIndex.v1",
                         {"word_threshold": threshold, "candidates": len(names),
                          "n_threads": 1}, names, rows, vectorizer)
    assert index.words is not None
    _, ids = index.search(query_rows, len(names))
    one_word = [i for i, text in enumerate(names) if len(set(text.split())) == 1]
    # The cosine of a query with a one-word name is its cosine with that word; a margin
    # keeps float rounding at the threshold out of the check.
    cosines = (query_rows @ rows[one_word].T).toarray()
    for row, row_ids in zip(cosines, ids):
        near = {one_word[j] for j in numpy.flatnonzero(row >= threshold + 1e-4)}
        assert near <= set(row_ids.tolist())


# Small integer coordinates: inner products are exact in float32, so ties are real ties.
dense_strategy = st.integers(8, 80).flatmap(lambda n: st.tuples(
    st.lists(st.lists(st.integers(-3, 3), min_size=8, max_size=8), min_size=n, max_size=n),
    st.lists(st.lists(st.integers(-3, 3), min_size=8, max_size=8), min_size=1, max_size=6)))


def dense_rows(data):
    """dense_strategy's lists as float32 (vectors, queries)."""
    vectors, queries = (numpy.array(x, dtype=numpy.float32) for x in data)
    return vectors, queries


@settings(FAST, max_examples=15)
@given(data=dense_strategy, k=st.integers(1, 10))
def test_faiss_exact_and_exhaustive_ivf_give_the_exact_scores(data, k):
    pytest.importorskip("faiss")
    vectors, queries = dense_rows(data)
    dense = queries @ vectors.T
    want = -numpy.sort(-dense, axis=1)[:, :min(k, len(vectors))]
    for name, settings_ in [
            ("spacy-biolink.FaissIndex.v1", {"kind": "flat"}),
            ("spacy-biolink.FaissIndex.v1", {"kind": "ivf", "nlist": 4, "nprobe": 4}),
            ("spacy-biolink.AutoFaissIndex.v1", {"min_names": 10 ** 6})]:
        index = build(name, **settings_)
        index.build(vectors)
        scores, ids = index.search(queries, k)
        numpy.testing.assert_array_equal(scores[:, :want.shape[1]], want)
        numpy.testing.assert_array_equal(
            numpy.take_along_axis(dense, ids[:, :want.shape[1]], axis=1), want)
        assert (ids[:, want.shape[1]:] == -1).all()


@settings(FAST, max_examples=15)
@given(data=dense_strategy, k=st.integers(1, 10), nprobe=st.integers(1, 4))
def test_auto_faiss_ivf_sq8_scores_within_its_quantization_step(data, k, nprobe):
    pytest.importorskip("faiss")
    vectors, queries = dense_rows(data)
    dense = queries @ vectors.T
    index = build("spacy-biolink.AutoFaissIndex.v1", min_names=1, nlist=4, nprobe=nprobe)
    index.build(vectors)
    assert index.kind == "ivfsq"
    scores, ids = index.search(queries, k)
    # Residuals to a centroid span at most twice the data's range per dimension, coded in
    # 255 steps: an error of half a step each; allowed here a whole step.
    span = 2 * (vectors.max(axis=0) - vectors.min(axis=0))
    tolerance = numpy.abs(queries) @ span / 255 + 1e-4
    found = ids >= 0
    true_scores = numpy.take_along_axis(dense, numpy.where(found, ids, 0), axis=1)
    assert (numpy.abs(scores - true_scores)[found] <=
            numpy.repeat(tolerance[:, None], ids.shape[1], axis=1)[found]).all()
    best = dense.max(axis=1)
    assert (true_scores[:, 0] <= best).all()
    if nprobe == 4:  # every list scanned: the best name is missed only within the error
        assert (true_scores[:, 0] >= best - 2 * tolerance).all()
        assert found[:, :min(k, len(vectors))].all()


@FAST
@given(data=dense_strategy, k=st.integers(1, 10))
def test_faiss_hnsw_returns_exact_scores_never_above_the_exact_search(data, k):
    pytest.importorskip("faiss")
    vectors, queries = dense_rows(data)
    dense = queries @ vectors.T
    index = build("spacy-biolink.FaissIndex.v1", kind="hnsw", hnsw_m=4, ef_search=4)
    index.build(vectors)
    scores, ids = index.search(queries, k)
    found = ids >= 0
    true_scores = numpy.take_along_axis(dense, numpy.where(found, ids, 0), axis=1)
    numpy.testing.assert_array_equal(scores[found], true_scores[found])
    want = -numpy.sort(-dense, axis=1)[:, :k]
    assert (scores[:, :want.shape[1]][found[:, :want.shape[1]]] <=
            want[found[:, :want.shape[1]]]).all()
    for row_ids, row_found in zip(ids, found):
        assert len(set(row_ids[row_found].tolist())) == int(row_found.sum())


# Normalizer -----------------------------------------------------------------------------

# Letters the folding rules act on (ae, oe, our, leuc, sulph, final s), ASCII punctuation,
# case, whitespace the tokenizer splits on, and non-ASCII letters that lowercase oddly.
fold_text = st.text(alphabet=st.sampled_from(list("aeoulcsphrtix AEOSİΣßé-'/,.()\t\x1c1")),
                    max_size=40) | st.text(max_size=20)
normalizer_settings = st.fixed_dictionaries({
    "lowercase": st.booleans(), "remove_punctuation": st.booleans(),
    "spelling_variants": st.booleans(), "strip_plurals": st.booleans()})


@settings(max_examples=400, deadline=None)
@given(text=fold_text, options=normalizer_settings)
def test_normalizing_twice_is_normalizing_once(text, options):
    # v1's spelling rule folds "aoe" to "ae", then "e" (pinned below; v1 is frozen).
    assume(not (options["spelling_variants"] and re.search(r"[ao]{2,}e", text.lower())))
    normalizer = MentionNormalizer(**options)
    name = normalizer.name(text)
    assert normalizer.name(name) == name
    mention = normalizer.mention(text)
    assert normalizer.mention(mention) == mention


def test_v1_folds_a_vowel_run_one_step_per_call():
    """MentionNormalizer.v1 is released and frozen: "aoe" folds to "ae", not at once to
    "e". Nothing in the package folds folded text, so this only matters to callers who
    do; a .v2 would fold the run at once."""
    normalizer = MentionNormalizer(spelling_variants=True)
    assert normalizer.name("hooe") == "hoe" and normalizer.name("hoe") == "he"


@settings(max_examples=200, deadline=None)
@given(text=fold_text, options=normalizer_settings,
       spelling=st.dictionaries(st.sampled_from(["tumor", "hemmorhage", "leucemia", "x"]),
                                st.sampled_from(["tumour", "haemorrhage", "leukemia", "a b"])))
def test_a_spelling_map_applies_once(text, options, spelling):
    """With a spelling map whose corrections are not themselves corrected (BioSyn's is
    such a map), mention() is idempotent too; a chain a -> b -> c is applied one step per
    call, by design."""
    # v1's spelling rule folds "aoe" to "ae", then "e" (pinned above; v1 is frozen).
    assume(not (options["spelling_variants"] and re.search(r"[ao]{2,}e", text.lower())))
    normalizer = MentionNormalizer(spelling=spelling, **options)
    assume(not any(token in normalizer.spelling
                   for right in normalizer.spelling.values() for token in right.split()))
    mention = normalizer.mention(text)
    assert normalizer.mention(mention) == mention


# Composite splitting --------------------------------------------------------------------

# No fixed phrase ("head and neck"), brackets, slashes or hyphens: every split then comes
# from one conjunction between plain words and commas.
PLAIN_WORDS = ["breast", "ovarian", "cancer", "renal", "hepatic", "failure", "acute",
               "hereditary", "Duchenne", "Becker", "muscular", "dystrophy", "type", "I", "II",
               "C6", "deficiency", "of", "the", "in", "both", "some", "cardiac", "dilation"]
phrase = st.lists(st.sampled_from(PLAIN_WORDS), min_size=0, max_size=3)


@st.composite
def coordinations(draw):
    """PREFIX CONJUNCT (, CONJUNCT)* and|or CONJUNCT SUFFIX, from the plain words, or
    now and then a text with no conjunction or two of them."""
    left = [draw(st.lists(st.sampled_from(PLAIN_WORDS), min_size=1, max_size=3))
            for _ in range(draw(st.integers(1, 3)))]
    right = draw(st.lists(st.sampled_from(PLAIN_WORDS), min_size=1, max_size=3))
    conjunctions = draw(st.lists(st.sampled_from(["and", "or", "and/or"]), min_size=0,
                                 max_size=2))
    text = " ".join(draw(phrase) + [", ".join(" ".join(c) for c in left)])
    for conjunction in conjunctions:
        text += f" {conjunction} " + " ".join(right)
    return text + "".join(" " + w for w in draw(phrase))


@settings(max_examples=300, deadline=None)
@given(text=coordinations())
def test_composite_parts_are_plain_words_of_the_text(text):
    parts = split_composite(text)
    assert parts
    if parts == [text]:
        return
    assert len(parts) >= 2
    words = {w.rstrip(",") for w in text.split()}
    for part in parts:
        assert part and part == part.strip() and "  " not in part
        tokens = part.split()
        # No conjunction survives a split, and nothing is made up.
        assert not {"and", "or", "and/or", ","} & set(tokens)
        assert set(tokens) <= words - {"and", "or", "and/or"}
        # A part holds no coordination, so splitting it again gives it back.
        assert split_composite(part) == [part]


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=60))
def test_any_text_splits_into_non_empty_stripped_parts_or_comes_back_whole(text):
    parts = split_composite(text)
    assert parts == [text] or (len(parts) >= 2 and all(p and p == p.strip() for p in parts))


@settings(max_examples=200, deadline=None)
@given(words=st.lists(st.sampled_from(PLAIN_WORDS + ["syndrome,", "disease"]), max_size=8))
def test_a_text_without_a_coordination_comes_back_whole(words):
    text = " ".join(words)
    assert split_composite(text) == [text]


@FAST
@given(names=names_strategy, queries=queries_strategy,
       threshold=st.sampled_from([0.1, 0.3, 0.6, 1.0]),
       coverage=st.sampled_from([0.3, 0.6, 0.9, 1.0]), n_threads=st.sampled_from([1, 2]))
def test_pruned_word_search_against_the_full_one(names, queries, threshold, coverage,
                                                 n_threads):
    """WordSparseIndex.v2's word step: at coverage 1 the full kernel's arrays bit for bit;
    below, cosines no higher than the full ones, at least one word per query with n-grams
    in the vocabulary, and no more words above the threshold than the full search finds."""
    from spacy_biolink.index.word_kernels import word_cosines, word_cosines_pruned
    from spacy_biolink.index.word_postings import WordPostings

    vectorizer, rows, query_rows = tfidf(names, queries)
    words = WordPostings.from_names(iter(names), vectorizer, rows)
    assume(words is not None)
    query_rows = sparse.csr_matrix(query_rows, dtype=numpy.float32)
    query_rows.sort_indices()
    g = words.grams
    args = (query_rows.indptr.astype(numpy.int64), query_rows.indices.astype(numpy.int32),
            query_rows.data, g.indptr.astype(numpy.int64), g.indices, g.data, words.n_words,
            numpy.float32(threshold))
    full = word_cosines(*args)
    pruned = word_cosines_pruned(*args, coverage, n_threads=n_threads)
    if coverage == 1.0:
        for got, want in zip(pruned, full):
            numpy.testing.assert_array_equal(got, want)
        return
    exact = (query_rows @ g).toarray()
    indptr, indices, values = pruned
    row_of = numpy.repeat(numpy.arange(len(indptr) - 1), numpy.diff(indptr))
    assert (values <= exact[row_of, indices] + 1e-6).all()
    has_words = numpy.diff((query_rows @ g).indptr) > 0
    assert (numpy.diff(indptr)[has_words] >= 1).all()
    above = values >= numpy.float32(threshold)
    assert above.sum() <= (full[2] >= numpy.float32(threshold)).sum()


# Save / load round trips ----------------------------------------------------------------

ROUND_TRIP_INDEXES = [
    ("spacy-biolink.SparseIndex.v1", {}),
    ("spacy-biolink.PrunedSparseIndex.v1", {"coverage": 0.6, "candidates": 4}),
    ("spacy-biolink.AutoSparseIndex.v1", {"min_names": 1, "coverage": 0.6, "candidates": 4}),
    ("spacy-biolink.PrunedSparseIndex.v2", {"coverage": 0.6, "candidates": 4}),
    ("spacy-biolink.AutoSparseIndex.v2", {"min_names": 1, "coverage": 0.6, "candidates": 4}),
    ("spacy-biolink.WordSparseIndex.v1", {"word_threshold": 0.5, "candidates": 4,
                                          "n_threads": 1}),
    ("spacy-biolink.AutoSparseIndex.v3", {"min_names": 1, "word_threshold": 0.5,
                                          "candidates": 4, "n_threads": 1}),
    ("spacy-biolink.WordSparseIndex.v2", {"word_threshold": 0.3, "word_coverage": 0.6,
                                          "candidates": 4, "n_threads": 1}),
    ("spacy-biolink.AutoSparseIndex.v4", {"min_names": 1, "word_coverage": 0.6,
                                          "candidates": 4, "n_threads": 1}),
    ("spacy-biolink.AutoSparseIndex.v5", {"min_names": 1, "word_coverage": 0.6,
                                          "candidates": 2, "candidates_growth": 2.0,
                                          "growth_from": 1, "max_candidates": 6,
                                          "n_threads": 1}),
    ("spacy-biolink.WordSparseIndex.v3", {"word_threshold": 0.3, "rare_grams": 2,
                                          "rare_hits": 1, "candidates": 4, "n_threads": 1}),
    ("spacy-biolink.AutoSparseIndex.v6", {"min_names": 1, "rare_grams": 4, "rare_hits": 2,
                                          "rare_from": 0,
                                          "candidates": 2, "candidates_growth": 2.0,
                                          "growth_from": 1, "max_candidates": 6,
                                          "n_threads": 1}),
]


@pytest.mark.parametrize("name,settings_", ROUND_TRIP_INDEXES,
                         ids=[entry[0].split(".", 1)[1] for entry in ROUND_TRIP_INDEXES])
@FAST
@given(names=names_strategy, queries=queries_strategy)
def test_sparse_index_round_trips(name, settings_, names, queries, tmp_path_factory):
    vectorizer, rows, query_rows = tfidf(names, queries)
    index = built_sparse(name, settings_, names, rows, vectorizer)
    want = index.search(query_rows, 5)
    path = tmp_path_factory.mktemp("index") / "index"
    index.to_disk(path)
    loaded = [build(name, **settings_).from_bytes(index.to_bytes()),
              build(name, **settings_).from_disk(path)]
    for other in loaded:
        assert other.n_vectors == index.n_vectors
        assert getattr(other, "words", None) is not None or getattr(index, "words", None) is None
        for got, expected in zip(other.search(query_rows, 5), want):
            numpy.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("name,settings_", [
    ("spacy-biolink.FaissIndex.v1", {"kind": "flat"}),
    ("spacy-biolink.FaissIndex.v1", {"kind": "hnsw", "hnsw_m": 4}),
    ("spacy-biolink.FaissIndex.v1", {"kind": "ivf", "nlist": 4, "nprobe": 2}),
    ("spacy-biolink.AutoFaissIndex.v1", {"min_names": 1, "nlist": 4, "nprobe": 2}),
], ids=["flat", "hnsw", "ivf", "auto-ivfsq"])
@settings(FAST, max_examples=10)
@given(data=dense_strategy)
def test_faiss_index_round_trips(name, settings_, data, tmp_path_factory):
    pytest.importorskip("faiss")
    vectors, queries = dense_rows(data)
    index = build(name, **settings_)
    index.build(vectors)
    want = index.search(queries, 5)
    path = tmp_path_factory.mktemp("index") / "index"
    index.to_disk(path)
    for other in (build(name, **settings_).from_bytes(index.to_bytes()),
                  build(name, **settings_).from_disk(path)):
        assert other.n_vectors == len(vectors) and other.kind == index.kind
        for got, expected in zip(other.search(queries, 5), want):
            numpy.testing.assert_array_equal(got, expected)


concept_ids = st.text(alphabet=st.characters(blacklist_characters="|",
                                             blacklist_categories=("Cs",)),
                      min_size=1, max_size=6).filter(lambda s: s.strip() == s and s)
concept_names = st.text(max_size=12)
concepts_strategy = st.lists(st.builds(
    Concept, st.lists(concept_ids, min_size=1, max_size=3),
    st.lists(concept_names, max_size=4),
    st.sampled_from(["", "Disease", "T047|T191"]), st.text(max_size=10)), min_size=1, max_size=12)


def dictionary_view(dictionary):
    """Everything a linker reads from a dictionary, as plain values."""
    return {
        "concepts": [(c.ids, c.names, c.type, c.definition) for c in dictionary.iter_concepts()],
        "names": list(dictionary.names),
        "name_concepts": [dictionary.concepts_of_name(n).tolist()
                          for n in range(dictionary.n_names)],
        "counts": dictionary.name_concept_counts.tolist(),
        "sources": dictionary.name_concept_sources.tolist(),
        "canonical": [dictionary.canonical_name(c) for c in range(dictionary.n_concepts)],
        "types": [dictionary.types_of(c) for c in range(dictionary.n_concepts)],
        "lookup": {i: dictionary.concept_index(i)
                   for c in range(dictionary.n_concepts) for i in dictionary.ids_of(c)},
        "shared": dictionary.shared_names(),
    }


@settings(max_examples=60, deadline=None)
@given(concepts=concepts_strategy,
       extra=st.lists(st.tuples(concept_names, st.integers(0, 11), st.booleans()), max_size=6),
       canonical=st.booleans())
def test_concept_dictionary_round_trips(concepts, extra, canonical, tmp_path_factory):
    assume(any(name.strip() for concept in concepts for name in concept.names))
    dictionary = ConceptDictionary.from_concepts(concepts)
    # Pairs from corpus annotations bring the counts and source bits that break ties: a
    # new name, or one of the concept's own (an ontology pair that data confirms).
    pairs = []
    for name, c, own in extra:
        concept = concepts[c % len(concepts)]
        if own and concept.names:
            name = concept.names[c % len(concept.names)]
        pairs.append((name, concept.ids[0]))
    dictionary, _ = dictionary.with_names([(n, i) for n, i in pairs if n.strip()])
    if canonical:
        dictionary.canonical_names = StringTable.from_strings(
            f"canonical {c}" for c in range(dictionary.n_concepts))
    want = dictionary_view(dictionary)
    path = tmp_path_factory.mktemp("dictionary") / "dictionary"
    dictionary.to_disk(path)
    assert dictionary_view(ConceptDictionary.from_bytes(dictionary.to_bytes())) == want
    assert dictionary_view(ConceptDictionary.from_disk(path)) == want
