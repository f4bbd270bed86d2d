"""The dictionary as evidence for a statistical NER: span_ruler patterns of the training
corpora's high-precision terms (term_patterns.py), and dictionary tags as a feature the
NER's tok2vec reads (gazetteer.py); and after it, the NER's own entities carried to
their abbreviations and recurrences in the document (propagate.py), and the variants
written in the notations the variant rule table normalizes (variants.py)."""
from .gazetteer import GAZETTEER_NAME, Gazetteer, gazetteer_terms, make_gazetteer
from .propagate import PROPAGATE_NAME, Propagate, make_propagate
from .term_patterns import (TERM_RULER_CONFIG, add_term_ruler, read_term_patterns,
                            term_patterns, write_term_patterns)
from .variants import VARIANTS_NAME, VariantFinder, make_variant_finder

__all__ = ["GAZETTEER_NAME", "Gazetteer", "PROPAGATE_NAME", "Propagate", "TERM_RULER_CONFIG",
           "add_term_ruler", "gazetteer_terms", "make_gazetteer", "make_propagate",
           "read_term_patterns", "term_patterns", "write_term_patterns", "VARIANTS_NAME",
           "VariantFinder", "make_variant_finder"]
