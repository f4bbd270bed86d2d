"""The corpora's registered builders: corpus augmenters for spaCy's training."""
from typing import Optional

from spacy.util import registry


@registry.augmenters("spacy-biolink.relabel_entities.v1")
def build_relabel_entities(label: Optional[str] = "Disease"):
    """Registered `spacy-biolink.relabel_entities.v1`: a corpus augmenter giving every entity
    `label` (None keeps the labels), for corpora labelled differently from the pipeline."""
    from .relabel import relabel_entities

    return relabel_entities(label)
