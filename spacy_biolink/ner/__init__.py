"""The dictionary as evidence for a statistical NER: span_ruler patterns of the training
corpora's high-precision terms (term_patterns.py)."""
from .term_patterns import (TERM_RULER_CONFIG, add_term_ruler, read_term_patterns,
                            term_patterns, write_term_patterns)

__all__ = ["TERM_RULER_CONFIG", "add_term_ruler", "read_term_patterns", "term_patterns",
           "write_term_patterns"]
