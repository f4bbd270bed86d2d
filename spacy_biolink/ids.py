"""Concept id normalization shared by dictionary and corpus readers.

MEDIC writes OMIM ids bare (`613097`) and MeSH ids bare (`D008107`); the NCBI-disease
corpus writes `OMIM:613097`, and sometimes `MESH:C535662` or ids with stray spaces.
Both sides go through the same function so they meet.
"""
from typing import List

MESH_PREFIX = "MESH:"
OMIM_PREFIX = "OMIM:"


def normalize_medic_id(raw: str) -> str:
    concept_id = raw.strip()
    if concept_id.upper().startswith(MESH_PREFIX):
        concept_id = concept_id[len(MESH_PREFIX):].strip()
    elif concept_id.upper().startswith(OMIM_PREFIX):
        concept_id = OMIM_PREFIX + concept_id[len(OMIM_PREFIX):].strip()
    elif concept_id.isdigit():
        concept_id = OMIM_PREFIX + concept_id
    return concept_id


def split_gold_ids(raw: str) -> List[str]:
    """All ids of a corpus id field: `D1|D2` (composite) and `D1+D2` (several at once)."""
    ids = []
    for part in raw.replace("+", "|").split("|"):
        part = part.strip()
        if part and part not in ("-1", "-"):
            ids.append(normalize_medic_id(part))
    return ids
