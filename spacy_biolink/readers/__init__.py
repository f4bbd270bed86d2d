"""Dictionary readers (MEDIC/CTD, BioSyn, TSV, scispaCy KB JSONL)."""
from .dictionaries import READERS, infer_format, load_dictionary

__all__ = ["READERS", "infer_format", "load_dictionary"]
