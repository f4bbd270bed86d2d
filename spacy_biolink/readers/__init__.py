from .dictionaries import READERS, infer_format, load_dictionary
from .pubtator import PubTatorDocument, PubTatorMention, read_pubtator

__all__ = ["READERS", "infer_format", "load_dictionary", "PubTatorDocument", "PubTatorMention",
           "read_pubtator"]
