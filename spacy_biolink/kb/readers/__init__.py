"""Dictionary readers (MEDIC/CTD, BioSyn, TSV, scispaCy KB JSONL, UMLS RRF, OBO) and the
content sniffer that recognises each format (sniff.py)."""
from .dictionaries import READERS, infer_format, load_dictionary

__all__ = ["READERS", "infer_format", "load_dictionary"]
