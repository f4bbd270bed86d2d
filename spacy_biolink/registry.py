"""Registered, versioned builders: thin wiring from config to implementations.

Names are frozen once released; a changed signature gets a new `.v2` beside the old one.
Entry points in setup.cfg point here, so configs resolve without importing the package.
"""
from typing import Callable, List, Optional

from spacy.util import registry

from .dictionary import ConceptDictionary
from .encoders.tfidf import tfidf_encoder
from .evaluation.scorer import score_linking
from .index import FaissIndex, SparseIndex
from .readers.dictionaries import load_dictionary
from .text.normalize import MentionNormalizer
from .util import PathLike


@registry.architectures("spacy-biolink.TfidfEncoder.v1")
def build_tfidf_encoder(analyzer: str = "char_wb", ngram_range: List[int] = [3, 3],
                        lowercase: bool = True, sublinear_tf: bool = False, min_df: int = 1):
    return tfidf_encoder(analyzer, ngram_range, lowercase, sublinear_tf, min_df)


@registry.misc("spacy-biolink.SparseIndex.v1")
def build_sparse_index(chunk_size: int = 256) -> SparseIndex:
    return SparseIndex(chunk_size=chunk_size)


@registry.misc("spacy-biolink.FaissIndex.v1")
def build_faiss_index(kind: str = "flat", hnsw_m: int = 32, ef_construction: int = 80,
                      ef_search: int = 64, nlist: int = 0, nprobe: int = 16,
                      pq_m: int = 16) -> FaissIndex:
    return FaissIndex(kind=kind, hnsw_m=hnsw_m, ef_construction=ef_construction,
                      ef_search=ef_search, nlist=nlist, nprobe=nprobe, pq_m=pq_m)


@registry.misc("spacy-biolink.MentionNormalizer.v1")
def build_mention_normalizer(lowercase: bool = True, remove_punctuation: bool = True
                             ) -> MentionNormalizer:
    """Folding applied to names and mentions alike; the spelling map comes with
    [initialize.components.bio_linker] spelling_map and is saved with the pipeline."""
    return MentionNormalizer(lowercase=lowercase, remove_punctuation=remove_punctuation)


@registry.misc("spacy-biolink.load_dictionary.v1")
def build_dictionary_loader(path: PathLike, format: Optional[str] = None
                            ) -> Callable[[], ConceptDictionary]:
    """For [initialize.components.bio_linker.dictionary]: read only when initialize runs."""

    def load() -> ConceptDictionary:
        return load_dictionary(path, format)

    return load


@registry.scorers("spacy-biolink.linking_scorer.v1")
def make_linking_scorer() -> Callable:
    return score_linking
