"""Concept lookup in scispaCy's shape: `linker.kb.cui_to_entity[cid]` and `linker.kb[cid]`.

Code written for scispaCy's `CandidateGenerator.kb` keeps working: a record has
`concept_id`, `canonical_name`, `aliases`, `types` and `definition`. Ours also answers
a concept's alternative ids (a MEDIC concept by its OMIM id, a MONDO term by its MeSH
xref), and builds each record from the dictionary's flat tables only when asked, so a
10M-name dictionary costs nothing until it is looked up.
"""
from collections.abc import Mapping
from typing import Callable, Iterator, List, NamedTuple, Optional, Tuple

import numpy

from .dictionary import ConceptDictionary
from ..errors import BioLinkError, Errors


class ConceptNotFound(BioLinkError, KeyError):
    """An id that is no concept's: a KeyError (so `in` and `.get` work) and a BioLinkError."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class ConceptRecord(NamedTuple):
    """One concept, field for field scispaCy's Entity (plus its other ids)."""

    concept_id: str
    canonical_name: str
    aliases: List[str]
    types: List[str]
    definition: Optional[str]
    ids: Tuple[str, ...] = ()

    def __repr__(self) -> str:
        return (f"ConceptRecord(concept_id={self.concept_id!r}, "
                f"canonical_name={self.canonical_name!r}, types={self.types!r})")


class ConceptLookup(Mapping):
    """concept id (or alternative id) -> ConceptRecord, over a ConceptDictionary.

    Iterating gives each concept's id once (as kb_id_ reports it); `len` is the number
    of concepts.
    """

    def __init__(self, dictionary: ConceptDictionary,
                 reported_id: Optional[Callable[[int], str]] = None):
        self.dictionary = dictionary
        # The id a record shows as concept_id: the linker's (id_preference), so that
        # kb[ent.kb_id_].concept_id == ent.kb_id_; default the primary id.
        self.reported_id = reported_id or dictionary.primary_id
        # concept -> its names as a CSR built on first use in numpy (~12 bytes a name):
        # the dictionary's own names_of builds a Python list per concept, gigabytes at
        # UMLS size.
        self._concept_names: Optional[Tuple[numpy.ndarray, numpy.ndarray]] = None

    def names_of(self, concept: int) -> List[str]:
        """The concept's names, in dictionary order."""
        if self._concept_names is None:
            d = self.dictionary
            owners = numpy.repeat(numpy.arange(d.n_names, dtype=numpy.int64),
                                  numpy.diff(d.name_concepts_indptr))
            order = numpy.argsort(d.name_concepts, kind="stable")
            indptr = numpy.zeros(d.n_concepts + 1, dtype=numpy.int64)
            numpy.cumsum(numpy.bincount(d.name_concepts, minlength=d.n_concepts), out=indptr[1:])
            self._concept_names = (indptr, owners[order])
        indptr, names = self._concept_names
        return [self.dictionary.names[int(n)] for n in names[indptr[concept]:indptr[concept + 1]]]

    @property
    def cui_to_entity(self) -> "ConceptLookup":
        """scispaCy's name for the same lookup."""
        return self

    def record(self, concept: int) -> ConceptRecord:
        """Everything known about concept number `concept`: reported id, canonical name, aliases,
        types, definition (None when absent) and all its ids."""
        d = self.dictionary
        canonical = d.canonical_name(concept)
        aliases = [n for n in self.names_of(concept) if n != canonical]
        definition = d.definitions[concept] if d.definitions is not None else ""
        return ConceptRecord(self.reported_id(concept), canonical, aliases,
                             list(d.types_of(concept)), definition or None, d.ids_of(concept))

    def _index(self, concept_id: str) -> int:
        c = self.dictionary.concept_index(concept_id) if isinstance(concept_id, str) else None
        if c is None:
            raise ConceptNotFound(Errors.E160.format(concept_id=concept_id,
                                                     n=self.dictionary.n_concepts))
        return c

    def __getitem__(self, concept_id: str) -> ConceptRecord:
        return self.record(self._index(concept_id))

    def canonical_name(self, concept_id: str) -> str:
        """`self[concept_id].canonical_name` without building the record: what `link` and
        `visualize` show for each id, where a record would read every alias (hundreds
        for some MeSH chemicals)."""
        return self.dictionary.canonical_name(self._index(concept_id))

    def __contains__(self, concept_id) -> bool:
        return isinstance(concept_id, str) and self.dictionary.concept_index(concept_id) is not None

    def __iter__(self) -> Iterator[str]:
        for c in range(self.dictionary.n_concepts):
            yield self.reported_id(c)

    def __len__(self) -> int:
        return self.dictionary.n_concepts

    def __repr__(self) -> str:
        return f"<ConceptLookup: {len(self)} concepts>"


def canonical_name_reader(kb: Mapping) -> Callable[[str], str]:
    """id -> canonical name over a concept lookup: ours reads the name alone; any other
    scispaCy-shaped mapping gives it through its record."""
    if isinstance(kb, ConceptLookup):
        return kb.canonical_name
    return lambda concept: kb[concept].canonical_name
