"""bio_types: keep only the entity types a user asks for.

A six-type pipeline tags genes, diseases, chemicals, species, variants and cell lines; a
user who wants diseases and chemicals sets `keep` and the other entities leave doc.ents
before anything links them. Put it after the NER (and bio_propagate), before the linkers:

    nlp.add_pipe("bio_types", config={"keep": ["Disease", "Chemical"]}, before="bio_linker")

A pipeline saved with this pipe takes the setting at load time, as every spaCy setting:
`spacy.load(path, config={"components": {"bio_types": {"keep": [...]}}})`. An empty
`keep` keeps every type. A corpus type name (BioRED's "DiseaseOrPhenotypicFeature") stands
for its six-type label (corpora/types.py), and an entity labelled with a corpus type is
judged by its six-type label too.
"""
import warnings
from typing import Iterable, List, Optional, Sequence

from spacy.language import Language
from spacy.tokens import Doc

from ..corpora.types import six_type_label
from ..errors import BioLinkError, Errors, Warnings

TYPES_NAME = "bio_types"


@Language.factory(
    TYPES_NAME,
    # It only removes entities: listing doc.ents as assigned would make it count as a
    # span source (an NER) for the checks that look for one.
    requires=["doc.ents"],
    default_config={"keep": []},
)
def make_type_choice(nlp: Language, name: str, *, keep: List[str]):
    """The `bio_types` factory: a TypeChoice pipe (config: keep, the labels to keep; empty
    keeps all)."""
    return TypeChoice(name, keep=keep, nlp=nlp)


class TypeChoice:
    """Drops the doc.ents whose label (or its six-type label) is not in `keep`."""

    def __init__(self, name: str = TYPES_NAME, *, keep: Sequence[str] = (),
                 nlp: Optional[Language] = None):
        if isinstance(keep, str) or not all(isinstance(k, str) and k for k in keep):
            raise BioLinkError(Errors.E366.format(setting="keep", value=keep,
                                                  reason="not a list of non-empty labels"))
        self.name = name
        self.keep = list(keep)
        self._labels = frozenset(keep) | {six_type_label(k) for k in keep if six_type_label(k)}
        self._nlp = nlp
        self._checked = not keep or nlp is None

    def keeps(self, label: str) -> bool:
        """Whether an entity of `label` stays."""
        return not self._labels or label in self._labels or \
            six_type_label(label) in self._labels

    def __call__(self, doc: Doc) -> Doc:
        """Drop the entities of `doc` whose type is not kept, in place, and return it."""
        if not self._checked:
            self._check_labels()
        if self._labels:
            ents = doc.ents
            kept = [ent for ent in ents if self.keeps(ent.label_)]
            if len(kept) != len(ents):
                doc.ents = kept
        return doc

    def pipe(self, docs: Iterable[Doc], batch_size: int = 128):
        """Each doc of `docs`, its entities of other types dropped."""
        for doc in docs:
            yield self(doc)

    def _check_labels(self) -> None:
        """W360 for a kept name no entity-setting pipe predicts (a typo keeps nothing)."""
        self._checked = True
        labels = set()
        for name, pipe in self._nlp.pipeline:
            if name == self.name:
                break
            if "doc.ents" in self._nlp.get_pipe_meta(name).assigns:
                labels.update(getattr(pipe, "labels", ()) or ())
        if not labels:
            return  # an entity_ruler without patterns yet, a pipe that lists no labels
        known = labels | {six_type_label(label) for label in labels if six_type_label(label)}
        unknown = [k for k in self.keep if k not in known and six_type_label(k) not in known]
        if unknown:
            warnings.warn(Warnings.W360.format(keep=self.keep, unknown=unknown,
                                               labels=sorted(labels)))
