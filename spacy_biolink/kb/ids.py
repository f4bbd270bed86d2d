"""Concept id normalization shared by dictionary and corpus readers.

MEDIC writes OMIM ids bare (`613097`) and MeSH ids bare (`D008107`); the NCBI-disease
corpus writes `OMIM:613097`, and sometimes `MESH:C535662` or ids with stray spaces.
Both sides go through the same function so they meet.
"""
import re
from typing import List

MESH_PREFIX = "MESH:"
OMIM_PREFIX = "OMIM:"


def normalize_medic_id(raw: str) -> str:
    """Normalize a MEDIC/CTD id so corpus and dictionary ids compare equal: `MESH:D001` becomes
    `D001`, a bare number becomes `OMIM:number`, and spaces around the id go."""
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


# GNormPlus's `50929(Tax:10090)`: the gene's species, said beside its id.
_TAX_SUFFIX = re.compile(r"\(Tax:\d+\)\s*$")


def split_ncbi_id_parts(raw: str) -> List[List[str]]:
    """split_gold_id_parts for NCBI Gene and NCBI Taxonomy ids, which are bare numbers
    (`6528` is a gene, not OMIM:6528). GNormPlus and NLM-Gene list the genes a mention may
    mean with `,` or `;` (`3172,3651,6927` for "MODY"): one part whose ids are each right,
    like `+`. GNormPlus's `(Tax:N)` after an id is dropped."""
    return [[_TAX_SUFFIX.sub("", i).strip() for i in re.split(r"[+,;]", part)
             if i.strip() and i.strip() not in ("-1", "-")]
            for part in raw.split("|")]


# Namespaces of bare ids, as MEDIC and the corpora write them: MeSH descriptors
# (D + 6 or 9 digits) and supplementary concepts (C + 6 or 9 digits), UMLS CUIs (C + 7).
_BARE_NAMESPACES = [(re.compile(r"^D\d{6}(\d{3})?$"), "MESH"),
                    (re.compile(r"^C\d{7}$"), "UMLS"),
                    (re.compile(r"^C\d{6}(\d{3})?$"), "MESH")]

# Cross-reference prefixes of OBO ontologies -> the namespace they mean.
XREF_NAMESPACES = {"MESH": "MESH", "MSH": "MESH", "MESHD": "MESH", "OMIM": "OMIM",
                   "MIM": "OMIM", "UMLS": "UMLS", "UMLS_CUI": "UMLS"}


def namespace_of(concept_id: str) -> str:
    """The namespace of an id in the package's convention: "MESH" for D003924 and
    C535662, "UMLS" for C0011860, "OMIM" for OMIM:125853, "MONDO" for MONDO:0005148;
    "" when it cannot be told."""
    prefix, sep, _ = concept_id.partition(":")
    if sep and prefix:
        return XREF_NAMESPACES.get(prefix.upper(), prefix.upper())
    for pattern, namespace in _BARE_NAMESPACES:
        if pattern.match(concept_id):
            return namespace
    return ""


def normalize_xref(xref: str) -> str:
    """An OBO cross-reference in the package's id convention: MeSH and UMLS ids bare
    (MESH:D003924 -> D003924, UMLS_CUI:C0011860 -> C0011860), OMIM as OMIM:125853,
    anything else as written."""
    prefix, sep, local = xref.strip().partition(":")
    namespace = XREF_NAMESPACES.get(prefix.upper()) if sep else None
    if namespace in ("MESH", "UMLS"):
        return local.strip()
    if namespace == "OMIM":
        return OMIM_PREFIX + local.strip()
    return xref.strip()
