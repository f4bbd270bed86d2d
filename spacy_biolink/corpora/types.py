"""The six PubTator entity types, and each corpus's own type names mapped onto them.

PubTator3, BioRED and the corpora AIONER trains on each name types in their own words
(BioRED's GeneOrGeneProduct, tmVar3's five mutation types, NCBI-disease's four disease
types). Our NER predicts, and our linkers are labelled with, the six names below; every
converter and evaluator maps corpus types through `six_type_label` so that one table
says what each corpus's type is.
"""
from typing import Dict, FrozenSet, List, Optional

from ..kb.ids import split_gold_id_parts, split_ncbi_id_parts

GENE = "Gene"
DISEASE = "Disease"
CHEMICAL = "Chemical"
SPECIES = "Species"
VARIANT = "Variant"
CELL_LINE = "CellLine"
SIX_TYPES = (GENE, DISEASE, CHEMICAL, SPECIES, VARIANT, CELL_LINE)

# Corpus type name -> one of SIX_TYPES. A type absent here (GNormPlus's DomainMotif,
# NLM-Gene's Cell and ChromosomeLocation) is none of the six: converters
# leave such mentions out of the gold entities.
CORPUS_TYPE_LABELS: Dict[str, str] = {
    # BioRED
    "GeneOrGeneProduct": GENE,
    "DiseaseOrPhenotypicFeature": DISEASE,
    "ChemicalEntity": CHEMICAL,
    "OrganismTaxon": SPECIES,
    "SequenceVariant": VARIANT,
    "CellLine": CELL_LINE,
    # GNormPlus and NLM-Gene: BioRED annotates gene families ("caspases", "chemokines",
    # "BMP", "Wnt") as GeneOrGeneProduct, so their FamilyName is a Gene here too
    "FamilyName": GENE,
    # NCBI-disease
    "SpecificDisease": DISEASE,
    "DiseaseClass": DISEASE,
    "CompositeMention": DISEASE,
    "Modifier": DISEASE,
    # tmVar3
    "DNAMutation": VARIANT,
    "ProteinMutation": VARIANT,
    "SNP": VARIANT,
    "OtherMutation": VARIANT,
    "AcidChange": VARIANT,
    "ProteinAllele": VARIANT,
    "DNAAllele": VARIANT,
    # the six themselves (BC5CDR, GNormPlus, Linnaeus, S800, BioID, tmVar3)
    **{name: name for name in SIX_TYPES},
}


def six_type_label(corpus_type: str) -> Optional[str]:
    """One of SIX_TYPES for a corpus's mention type, or None when it is none of them."""
    return CORPUS_TYPE_LABELS.get(corpus_type)


def is_of_types(corpus_type: str, types) -> bool:
    """Whether a corpus's mention type is among `types`, named as the corpus writes it
    (GeneOrGeneProduct) or as its six-type label (Gene)."""
    return corpus_type in types or six_type_label(corpus_type) in types


def corpus_types_for(labels) -> FrozenSet[str]:
    """Every corpus type name that maps to one of `labels` (for filtering mentions)."""
    wanted = set(labels)
    return frozenset(name for name, label in CORPUS_TYPE_LABELS.items() if label in wanted)


# Types whose corpus ids are NCBI Gene or NCBI Taxonomy numbers (genes, species).
NCBI_NUMBERED = frozenset({GENE, SPECIES})


def gold_id_parts(raw_ids: str, corpus_type: str) -> List[List[str]]:
    """The ids of each part of a gold mention's id field, read by its type: a gene's or
    a species' bare number is an NCBI id (kb.ids.split_ncbi_id_parts); a variant's is
    one tmVar-style id, what follows its `;` left out; any other type's, as MEDIC
    writes OMIM (kb.ids.split_gold_id_parts)."""
    if six_type_label(corpus_type) in NCBI_NUMBERED:
        return split_ncbi_id_parts(raw_ids)
    if six_type_label(corpus_type) == VARIANT:
        # tmVar's `c|SUB|T|920|G;Gene:23417;RS#:...`: one id, whose `|` are its fields
        # (not composite parts); what tmVar attached after `;` is not part of it.
        variant = raw_ids.split(";", 1)[0].strip()
        return [[variant]] if variant and variant not in ("-1", "-") else [[]]
    return split_gold_id_parts(raw_ids)
