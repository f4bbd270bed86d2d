"""spacy-biolink: biomedical entity linking as a spaCy pipeline component.

The public names below load on first use (PEP 562), not at `import spacy_biolink`:
importing spaCy imports thinc, which imports torch when it is installed (seconds and
hundreds of MB), and `python -m spacy_biolink link --help` imports this module first.
Nothing needs the eager import to register: the factory and every registered builder
(each room's registry.py, and legacy/ for superseded versions) are declared as entry
points (setup.cfg), which spaCy loads when a config names them.
"""
import importlib
from typing import TYPE_CHECKING, Any, Dict, List

__version__ = "0.1.0"

# public name -> the module that defines it (relative to this package)
_EXPORTS: Dict[str, str] = {
    "BioLinker": ".linker.component",
    "make_bio_linker": ".linker.component",
    "Concept": ".kb.dictionary",
    "ConceptDictionary": ".kb.dictionary",
    "install_extensions": ".linker.extensions",
    "FaissIndex": ".index",
    "SparseIndex": ".index",
    "LinkingPolicy": ".linker.policy",
    "Mention": ".linker.policy",
    "read_pubtator": ".corpora",
    "load_dictionary": ".kb.readers",
    "save_pipeline": ".io.files",
}

__all__ = ["BioLinker", "LinkingPolicy", "Mention", "make_bio_linker", "Concept",
           "ConceptDictionary", "install_extensions", "FaissIndex", "SparseIndex",
           "load_dictionary", "read_pubtator", "save_pipeline"]

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time __getattr__ loads them
    from .corpora import read_pubtator
    from .index import FaissIndex, SparseIndex
    from .kb.dictionary import Concept, ConceptDictionary
    from .kb.readers import load_dictionary
    from .io.files import save_pipeline
    from .linker.component import BioLinker, make_bio_linker
    from .linker.extensions import install_extensions
    from .linker.policy import LinkingPolicy, Mention


def __getattr__(name: str) -> Any:
    """Load a public name from its module on first access."""
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name], __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later accesses skip __getattr__
    return value


def __dir__() -> List[str]:
    """The module's names, the not yet loaded public ones included."""
    return sorted(set(globals()) | set(_EXPORTS))
