"""One entity label for NER training on corpora that annotate several mention types.

NCBI-disease tells SpecificDisease, DiseaseClass, CompositeMention and Modifier apart,
and `convert --keep-types` keeps those types as labels (by default `convert` writes
`Disease`, and this augmenter then changes nothing). bio_linker links every label alike,
so what an NER in front of it must get right is the span, not the type; asking it for
the type as well splits four ways what it learns about boundaries (see configs/ner.cfg
for figures). Applied as a spaCy corpus augmenter, to train and dev alike, so a DocBin
converted with --keep-types trains the one-label NER unchanged.
"""
from typing import Callable, Iterator, Optional

from spacy.language import Language
from spacy.tokens import Span
from spacy.training import Example

Augmenter = Callable[[Language, Example], Iterator[Example]]


def relabel_entities(label: Optional[str]) -> Augmenter:
    """An augmenter that gives every gold entity `label` (kb_id_ kept); None: unchanged."""

    def augment(nlp: Language, example: Example) -> Iterator[Example]:
        if label is None:
            yield example
            return
        reference = example.reference.copy()
        reference.ents = [Span(reference, ent.start, ent.end, label=label, kb_id=ent.kb_id)
                          for ent in reference.ents]
        yield Example(example.predicted, reference)

    return augment
