"""Annotated corpora: reading PubTator, converting to spaCy DocBin."""
from .docbin import ConversionStats, convert_pubtator, corpus_kb_id, pubtator_to_docs
from .pubtator import PubTatorDocument, PubTatorMention, read_pubtator
