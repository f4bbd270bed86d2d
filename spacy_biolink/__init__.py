"""spacy-biolink: biomedical entity linking as a spaCy pipeline component."""
from . import registry  # noqa: F401  (registers architectures, indexes, loaders, scorers)
from .linker.component import BioLinker, make_bio_linker
from .kb.dictionary import Concept, ConceptDictionary
from .linker.extensions import install_extensions
from .index import FaissIndex, SparseIndex
from .linker.policy import LinkingPolicy, Mention
from .corpora import read_pubtator
from .kb.readers import load_dictionary
from .io.files import save_pipeline

__version__ = "0.1.0"

__all__ = ["BioLinker", "LinkingPolicy", "Mention", "make_bio_linker", "Concept",
           "ConceptDictionary", "install_extensions", "FaissIndex", "SparseIndex",
           "load_dictionary", "read_pubtator", "save_pipeline"]
