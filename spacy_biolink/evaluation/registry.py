"""The linking scorer's registered builder (`bio_linker`'s default scorer)."""
from typing import Callable

from spacy.util import registry

from .scorer import score_linking


@registry.scorers("spacy-biolink.linking_scorer.v1")
def make_linking_scorer() -> Callable:
    """Registered `spacy-biolink.linking_scorer.v1`: `score_linking`, the default scorer."""
    return score_linking
