"""One vocabulary extended by another: MEDIC 2012 by the disease descriptors MeSH has
added since (Cardiotoxicity, D066126, is in BC5CDR and not in MEDIC), without giving up
MEDIC's synonyms and OMIM ids."""
import logging
from typing import Dict, List

from .dictionary import Concept, ConceptDictionary

logger = logging.getLogger(__name__)


def extend_dictionary(base: ConceptDictionary, extension: ConceptDictionary, *,
                      source: str = "<extended>") -> ConceptDictionary:
    """`base` with the names and concepts of `extension`.

    An extension concept that shares an id (primary or alternate) with a base concept adds
    its names to that concept, which keeps its ids, primary id, definition and, where it
    has one, its type; the ids it does not share are not added, so two base concepts are
    never joined. An extension concept sharing no id joins as a concept of its own."""
    concepts: List[Concept] = list(base.iter_concepts())
    where: Dict[str, int] = {}
    for position, concept in enumerate(concepts):
        for concept_id in concept.ids:
            where.setdefault(concept_id, position)
    n_new_concepts = n_new_names = 0
    for concept in extension.iter_concepts():
        position = next((where[i] for i in concept.ids if i in where), None)
        if position is None:
            concepts.append(concept)
            n_new_concepts += 1
            n_new_names += len(concept.names)
            for concept_id in concept.ids:
                where.setdefault(concept_id, len(concepts) - 1)
            continue
        known = concepts[position]
        seen = {name.lower() for name in known.names}
        added = [name for name in concept.names if name.lower() not in seen]
        if added or (not known.type and concept.type):
            n_new_names += len(added)
            concepts[position] = Concept(known.ids, known.names + tuple(added),
                                         known.type or concept.type, known.definition)
    logger.info("extended %d concepts by %d new concepts and %d new names", base.n_concepts,
                n_new_concepts, n_new_names)
    return ConceptDictionary.from_concepts(concepts, source=source)
