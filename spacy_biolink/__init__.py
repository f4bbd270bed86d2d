"""spacy-biolink: biomedical entity linking as a spaCy pipeline component."""
from . import registry  # noqa: F401  (registers architectures, indexes, loaders, scorers)
from .component import BioLinker, make_bio_linker
from .dictionary import Concept, ConceptDictionary
from .extensions import install_extensions
from .index import FaissIndex, SparseIndex
from .linking import LinkingPolicy, Mention
from .corpora import read_pubtator
from .readers import load_dictionary

__version__ = "0.1.0"

__all__ = ["BioLinker", "LinkingPolicy", "Mention", "make_bio_linker", "Concept",
           "ConceptDictionary", "install_extensions", "FaissIndex", "SparseIndex",
           "load_dictionary", "read_pubtator"]
