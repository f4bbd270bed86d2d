"""The knowledge base side: ConceptDictionary (the one owner of ids and names), the
dictionary readers (readers/), id normalisation (ids.py), concept lookup in scispaCy's
shape (lookup.py) and one vocabulary extended by another (extend.py)."""
from .dictionary import Concept, ConceptDictionary
from .lookup import ConceptLookup, ConceptNotFound
from .readers import load_dictionary

__all__ = ["Concept", "ConceptDictionary", "ConceptLookup", "ConceptNotFound", "load_dictionary"]
