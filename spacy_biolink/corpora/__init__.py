"""Annotated corpora: reading PubTator, converting to spaCy DocBin."""
from .pubtator import PubTatorDocument, PubTatorMention, read_pubtator
