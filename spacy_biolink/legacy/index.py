"""Superseded index builders, kept so that pipelines saved with them load and search as
they did (tests/data/linker_saved_words_0_1 is one). New configs use
`spacy-biolink.AutoSparseIndex.v6`, `PrunedSparseIndex.v2` and `WordSparseIndex.v3`."""
from spacy.util import registry

from ..index import (AUTO_MIN_NAMES, CANDIDATES_GROWTH, GROWTH_FROM, MAX_CANDIDATES,
                     V2_CANDIDATES, V2_COVERAGE, V2_WORD_THRESHOLD, WORD_CANDIDATES,
                     WORD_COVERAGE, WORD_THRESHOLD, AutoSparseIndex, NgramCandidates,
                     PrunedSparseIndex, SparseIndex, WordCandidates)


@registry.misc("spacy-biolink.PrunedSparseIndex.v1")
def build_pruned_sparse_index(coverage: float = 0.8, candidates: int = 256,
                              chunk_size: int = 256) -> PrunedSparseIndex:
    """Registered `spacy-biolink.PrunedSparseIndex.v1`: candidates from the n-grams holding
    `coverage` of each query's squared weight, found by the exact kernel, the best
    `candidates` names rescored exactly (index/pruned.py); coverage 1 is exact."""
    return PrunedSparseIndex(NgramCandidates(coverage), candidates=candidates,
                             chunk_size=chunk_size, name="PrunedSparseIndex.v1")


@registry.misc("spacy-biolink.AutoSparseIndex.v1")
def build_auto_sparse_index(min_names: int = AUTO_MIN_NAMES, coverage: float = 0.8,
                            candidates: int = 256, chunk_size: int = 256) -> AutoSparseIndex:
    """Registered `spacy-biolink.AutoSparseIndex.v1`: exact sparse search below min_names
    names, PrunedSparseIndex.v1's from there on (index/auto.py)."""
    name = "AutoSparseIndex.v1"
    return AutoSparseIndex(
        SparseIndex(chunk_size=chunk_size, name=name),
        PrunedSparseIndex(NgramCandidates(coverage), candidates=candidates,
                          chunk_size=chunk_size, name=name),
        min_names=min_names)


@registry.misc("spacy-biolink.AutoSparseIndex.v2")
def build_auto_sparse_index_v2(min_names: int = AUTO_MIN_NAMES, coverage: float = V2_COVERAGE,
                               candidates: int = V2_CANDIDATES,
                               chunk_size: int = 256) -> AutoSparseIndex:
    """Registered `spacy-biolink.AutoSparseIndex.v2`: exact sparse search below min_names
    names, PrunedSparseIndex.v2's from there on."""
    name = "AutoSparseIndex.v2"
    return AutoSparseIndex(
        SparseIndex(chunk_size=chunk_size, name=name),
        PrunedSparseIndex(NgramCandidates(coverage, blocked=True), candidates=candidates,
                          chunk_size=chunk_size, name=name),
        min_names=min_names)


@registry.misc("spacy-biolink.WordSparseIndex.v1")
def build_word_sparse_index(word_threshold: float = WORD_THRESHOLD,
                            candidates: int = WORD_CANDIDATES, coverage: float = V2_COVERAGE,
                            chunk_size: int = 256, n_threads: int = 0) -> PrunedSparseIndex:
    """Registered `spacy-biolink.WordSparseIndex.v1`: candidates from the words within
    `word_threshold` cosine of the query, `candidates` of them rescored exactly
    (index/word_index.py); for rows of a plain char_wb TF-IDF encoder, else
    PrunedSparseIndex.v2's search (coverage). n_threads: threads a batch of queries is split
    over (0: one per core, one in a worker process)."""
    return PrunedSparseIndex(WordCandidates(word_threshold, coverage), candidates=candidates,
                             chunk_size=chunk_size, n_threads=n_threads,
                             name="WordSparseIndex.v1")


@registry.misc("spacy-biolink.AutoSparseIndex.v3")
def build_auto_sparse_index_v3(min_names: int = AUTO_MIN_NAMES,
                               word_threshold: float = WORD_THRESHOLD,
                               candidates: int = WORD_CANDIDATES, coverage: float = V2_COVERAGE,
                               chunk_size: int = 256, n_threads: int = 0) -> AutoSparseIndex:
    """Registered `spacy-biolink.AutoSparseIndex.v3`: exact sparse search below min_names
    names, WordSparseIndex.v1's from there on. n_threads:
    threads a batch of queries is split over (0: one per core, one in a worker process),
    for either search."""
    name = "AutoSparseIndex.v3"
    return AutoSparseIndex(
        SparseIndex(chunk_size=chunk_size, n_threads=n_threads, name=name),
        PrunedSparseIndex(WordCandidates(word_threshold, coverage), candidates=candidates,
                          chunk_size=chunk_size, n_threads=n_threads, name=name),
        min_names=min_names)


@registry.misc("spacy-biolink.WordSparseIndex.v2")
def build_word_sparse_index_v2(word_threshold: float = V2_WORD_THRESHOLD,
                               word_coverage: float = WORD_COVERAGE,
                               candidates: int = WORD_CANDIDATES, coverage: float = V2_COVERAGE,
                               chunk_size: int = 256, n_threads: int = 0) -> PrunedSparseIndex:
    """Registered `spacy-biolink.WordSparseIndex.v2`: WordSparseIndex.v1 whose query words
    come from each query's rarest n-grams holding `word_coverage` of its squared weight
    (index/word_kernels.py, word_cosines_pruned; 1 reads them all: v1's candidates), split
    over n_threads: the common n-grams' postings, most of a large vocabulary's, are not
    read. The names found are rescored exactly, as in v1."""
    return PrunedSparseIndex(WordCandidates(word_threshold, coverage,
                                            word_coverage=word_coverage),
                             candidates=candidates, chunk_size=chunk_size,
                             n_threads=n_threads, name="WordSparseIndex.v2")


@registry.misc("spacy-biolink.AutoSparseIndex.v4")
def build_auto_sparse_index_v4(min_names: int = AUTO_MIN_NAMES,
                               word_threshold: float = V2_WORD_THRESHOLD,
                               word_coverage: float = WORD_COVERAGE,
                               candidates: int = WORD_CANDIDATES, coverage: float = V2_COVERAGE,
                               chunk_size: int = 256, n_threads: int = 0) -> AutoSparseIndex:
    """Registered `spacy-biolink.AutoSparseIndex.v4`: exact sparse search below min_names
    names, WordSparseIndex.v2's from there on (256 candidates at every size)."""
    name = "AutoSparseIndex.v4"
    return AutoSparseIndex(
        SparseIndex(chunk_size=chunk_size, n_threads=n_threads, name=name),
        PrunedSparseIndex(WordCandidates(word_threshold, coverage, word_coverage=word_coverage),
                          candidates=candidates, chunk_size=chunk_size, n_threads=n_threads,
                          name=name),
        min_names=min_names)


@registry.misc("spacy-biolink.AutoSparseIndex.v5")
def build_auto_sparse_index_v5(min_names: int = AUTO_MIN_NAMES,
                               word_threshold: float = V2_WORD_THRESHOLD,
                               word_coverage: float = WORD_COVERAGE,
                               candidates: int = WORD_CANDIDATES,
                               candidates_growth: float = CANDIDATES_GROWTH,
                               growth_from: int = GROWTH_FROM,
                               max_candidates: int = MAX_CANDIDATES,
                               coverage: float = V2_COVERAGE,
                               chunk_size: int = 256, n_threads: int = 0) -> AutoSparseIndex:
    """Registered `spacy-biolink.AutoSparseIndex.v5`: AutoSparseIndex.v4 whose approximate
    search rescores more candidates as the dictionary grows: `candidates` up to
    `growth_from` names, `candidates_growth` times more per tenfold of names, at most
    `max_candidates`."""
    name = "AutoSparseIndex.v5"
    return AutoSparseIndex(
        SparseIndex(chunk_size=chunk_size, n_threads=n_threads, name=name),
        PrunedSparseIndex(WordCandidates(word_threshold, coverage, word_coverage=word_coverage),
                          candidates=candidates, chunk_size=chunk_size, n_threads=n_threads,
                          name=name, candidates_growth=candidates_growth,
                          growth_from=growth_from, max_candidates=max_candidates),
        min_names=min_names)
