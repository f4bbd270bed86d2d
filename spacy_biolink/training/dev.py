"""Scoring an encoder while it trains: gold-mention acc@k of an in-memory linker.

Checkpoints are chosen on the dev corpus with the same protocol `evaluate` uses on test
(evaluation/gold_mentions.py), never on test.
"""
from typing import Dict, Optional, Sequence, Set

from thinc.api import Model

from ..kb.dictionary import ConceptDictionary
from ..io.util import PathLike


def build_linker(encoder: Model, dictionary: ConceptDictionary, *,
                 index_config: Optional[Dict] = None, linker_config: Optional[Dict] = None,
                 augment: Sequence[PathLike] = (), spelling_map: Optional[PathLike] = None):
    """A blank English pipeline whose bio_linker uses `encoder` (an in-memory thinc Model,
    e.g. the one being trained) over `dictionary`, initialized. Returns the nlp."""
    import spacy
    from spacy.util import registry

    from ..encoders.saved import TRAINING_NORMALIZER

    nlp = spacy.blank("en")
    # The folding the trainers use, as init-linker --encoder does for the saved encoder.
    config = {"normalizer": dict(TRAINING_NORMALIZER), **(linker_config or {})}
    linker = nlp.add_pipe("bio_linker", config=config)
    linker.linker.model = encoder
    if index_config is not None:
        linker.linker.index = registry.resolve({"index": index_config})["index"]
    linker.initialize(nlp=nlp, dictionary=dictionary, augment=augment, spelling_map=spelling_map)
    return nlp


def augmented_for_dev(dictionary: ConceptDictionary, augment: Sequence[PathLike], *,
                      linker_config: Optional[Dict] = None) -> ConceptDictionary:
    """`dictionary` with the gold mentions of `augment` added as names, preprocessed as
    build_linker's linker does, with one "augmented the dictionary ..." log line.

    Trainers score dev after every epoch (and DAN once per hybrid weight): augmenting once
    and passing the result with no `augment` gives each dev linker the same dictionary
    without reading the corpora again and logging the line each time (issue 37: 8 times).
    """
    if not augment:
        return dictionary
    import logging

    import spacy

    from ..encoders.saved import TRAINING_NORMALIZER
    from ..linker.augment import augment_dictionary

    nlp = spacy.blank("en")
    config = {"normalizer": dict(TRAINING_NORMALIZER), **(linker_config or {})}
    linker = nlp.add_pipe("bio_linker", config=config)
    augmented, stats = augment_dictionary(dictionary, augment, linker.linker, nlp.make_doc)
    logging.getLogger(__name__).info("dev linkers: %s", stats.summary())
    return augmented


def dev_accuracy(encoder: Model, dictionary: ConceptDictionary, corpus: PathLike, *,
                 index_config: Optional[Dict] = None, linker_config: Optional[Dict] = None,
                 augment: Sequence[PathLike] = (), types: Optional[Set[str]] = None) -> Dict:
    """evaluate_gold_mentions of `encoder` on `corpus`: {"acc@1", "acc@5", "strict", ...}."""
    from ..evaluation import evaluate_gold_mentions

    nlp = build_linker(encoder, dictionary, index_config=index_config,
                       linker_config=linker_config, augment=augment)
    return evaluate_gold_mentions(nlp, corpus, types=types, progress=False)
