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


def split_gold_id_parts(raw: str) -> List[List[str]]:
    """The ids of each part of a corpus id field, in order.

    `D1|D2` is a composite mention naming two concepts, one per part: [[D1], [D2]].
    `D1+D2` is one mention that needs both concepts at once: [[D1, D2]].
    A CUI-less part (`-1`) has no ids: `D1|-1` gives [[D1], []].
    """
    return [[normalize_medic_id(i) for i in part.split("+")
             if i.strip() and i.strip() not in ("-1", "-")]
            for part in raw.split("|")]
