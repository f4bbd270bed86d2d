"""The indexes' registered builders: each version is a function over index/'s plain classes
that fixes their candidate source and defaults; `name` is only what the index's error
messages call it. bio_linker's default index is `spacy-biolink.AutoSparseIndex.v6`."""
from spacy.util import registry

from . import (AUTO_FAISS_MIN_NAMES, AUTO_MIN_NAMES, CANDIDATES_GROWTH, GROWTH_FROM,
               MAX_CANDIDATES, RARE_FROM, RARE_GRAMS, RARE_HITS, V2_CANDIDATES, V2_COVERAGE,
               V2_WORD_THRESHOLD,
               WORD_CANDIDATES, WORD_COVERAGE, AutoFaissIndex, AutoSparseIndex, FaissIndex,
               HybridIndex, NgramCandidates, PrunedSparseIndex, SparseIndex, WordCandidates)


@registry.misc("spacy-biolink.SparseIndex.v1")
def build_sparse_index(chunk_size: int = 256) -> SparseIndex:
    """Registered `spacy-biolink.SparseIndex.v1`: exact search over sparse vectors,
    `chunk_size` query rows per block (index/sparse.py)."""
    return SparseIndex(chunk_size=chunk_size, name="SparseIndex.v1")


@registry.misc("spacy-biolink.PrunedSparseIndex.v2")
def build_pruned_sparse_index_v2(coverage: float = V2_COVERAGE, candidates: int = V2_CANDIDATES,
                                 chunk_size: int = 256) -> PrunedSparseIndex:
    """Registered `spacy-biolink.PrunedSparseIndex.v2`: PrunedSparseIndex.v1's search (the
    same results for the same settings) with its candidates found block by block
    (index/pruned.py, block_kernels.py); defaults: coverage 0.8, 512 candidates."""
    return PrunedSparseIndex(NgramCandidates(coverage, blocked=True), candidates=candidates,
                             chunk_size=chunk_size, name="PrunedSparseIndex.v2")


@registry.misc("spacy-biolink.WordSparseIndex.v3")
def build_word_sparse_index_v3(word_threshold: float = V2_WORD_THRESHOLD,
                               rare_grams: int = RARE_GRAMS, rare_hits: int = RARE_HITS,
                               rare_from: int = 0, word_coverage: float = WORD_COVERAGE,
                               candidates: int = WORD_CANDIDATES, coverage: float = V2_COVERAGE,
                               chunk_size: int = 256, n_threads: int = 0) -> PrunedSparseIndex:
    """Registered `spacy-biolink.WordSparseIndex.v3`: WordSparseIndex.v1 (the words within
    `word_threshold` exact cosine of the query) whose words are looked for only among
    those holding `rare_hits` of the query's n-grams among their own `rare_grams` rarest
    (a prefix filter, index/word_kernels.py word_cosines_rare): a common n-gram is rarely
    a word's rarest, so the postings read stop following the vocabulary's size. Under
    `rare_from` words, WordSparseIndex.v2's search (word_coverage) instead. The names
    found are rescored exactly, as in v1."""
    return PrunedSparseIndex(WordCandidates(word_threshold, coverage,
                                            word_coverage=word_coverage,
                                            rare_grams=rare_grams, rare_hits=rare_hits,
                                            rare_from=rare_from),
                             candidates=candidates, chunk_size=chunk_size,
                             n_threads=n_threads, name="WordSparseIndex.v3")


@registry.misc("spacy-biolink.AutoSparseIndex.v6")
def build_auto_sparse_index_v6(min_names: int = AUTO_MIN_NAMES,
                               word_threshold: float = V2_WORD_THRESHOLD,
                               rare_grams: int = RARE_GRAMS, rare_hits: int = RARE_HITS,
                               rare_from: int = RARE_FROM,
                               word_coverage: float = WORD_COVERAGE,
                               candidates: int = WORD_CANDIDATES,
                               candidates_growth: float = CANDIDATES_GROWTH,
                               growth_from: int = GROWTH_FROM,
                               max_candidates: int = MAX_CANDIDATES,
                               coverage: float = V2_COVERAGE,
                               chunk_size: int = 256, n_threads: int = 0) -> AutoSparseIndex:
    """Registered `spacy-biolink.AutoSparseIndex.v6`: AutoSparseIndex.v5 (exact search
    under min_names names, candidates growing with the names) whose word step is
    WordSparseIndex.v3's (rare_grams, rare_hits) from `rare_from` distinct words on, v5's
    (word_coverage) below (bio_linker's default index)."""
    name = "AutoSparseIndex.v6"
    return AutoSparseIndex(
        SparseIndex(chunk_size=chunk_size, n_threads=n_threads, name=name),
        PrunedSparseIndex(WordCandidates(word_threshold, coverage, word_coverage=word_coverage,
                                         rare_grams=rare_grams, rare_hits=rare_hits,
                                         rare_from=rare_from),
                          candidates=candidates, chunk_size=chunk_size, n_threads=n_threads,
                          name=name, candidates_growth=candidates_growth,
                          growth_from=growth_from, max_candidates=max_candidates),
        min_names=min_names)


@registry.misc("spacy-biolink.FaissIndex.v1")
def build_faiss_index(kind: str = "flat", hnsw_m: int = 32, ef_construction: int = 80,
                      ef_search: int = 64, nlist: int = 0, nprobe: int = 16,
                      pq_m: int = 16) -> FaissIndex:
    """Registered `spacy-biolink.FaissIndex.v1`: a FAISS index over dense vectors;
    `kind` picks flat (exact), hnsw, ivf or ivfpq, and the other settings tune that kind."""
    return FaissIndex(kind=kind, hnsw_m=hnsw_m, ef_construction=ef_construction,
                      ef_search=ef_search, nlist=nlist, nprobe=nprobe, pq_m=pq_m)


@registry.misc("spacy-biolink.AutoFaissIndex.v1")
def build_auto_faiss_index(min_names: int = AUTO_FAISS_MIN_NAMES, nlist: int = 0,
                           nprobe: int = 32, train_size: int = 0) -> AutoFaissIndex:
    """Exact dense search (flat) below min_names names, IVF-SQ8 (nlist lists, nprobe of
    them scanned per query) from there on (index/faiss.py)."""
    return AutoFaissIndex(min_names=min_names, nlist=nlist, nprobe=nprobe, train_size=train_size)


@registry.misc("spacy-biolink.HybridIndex.v1")
def build_hybrid_index(dense_width: int, dense: FaissIndex, sparse: SparseIndex,
                       candidates: int = 64) -> HybridIndex:
    """For [dense | sparse] rows (HybridEncoder, BioSyn): each part's `candidates` best
    names, the union rescored by the full sum (index/hybrid.py)."""
    return HybridIndex(dense_width, dense, sparse, candidates=candidates)
