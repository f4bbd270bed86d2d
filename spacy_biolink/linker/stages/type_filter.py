"""The type filter: mentions of a span label are searched among the concepts of the types
that label allows ("Chemical" -> MeSH tree branch D, "Disease" -> UMLS group DISO), so a
disease mention cannot be answered with a drug of the same name.
"""
from typing import Dict, List, Optional
import warnings

import numpy

from ...errors import BioLinkError, Errors, Warnings


class TypeFilter:
    """label -> allowed types; labels not listed are not filtered. Types are the
    dictionary's own (`|`-joined per concept) or UMLS semantic groups, which stand for
    their TUIs."""

    step = "type_filter"

    def __init__(self, types: Optional[Dict[str, List[str]]] = None):
        self.types = check_type_filter(types)
        self._given = dict(types or {})
        self._masks: Dict[str, numpy.ndarray] = {}
        self._dictionary = None

    @property
    def settings(self) -> Dict:
        """The flat bio_linker settings this step stands for."""
        return {"type_filter": self._given}

    def group(self, label: Optional[str]) -> Optional[str]:
        """The label its mentions are searched under: itself where the filter restricts
        it, None (every concept) otherwise."""
        return label if label in self.types else None

    def reset(self, dictionary) -> None:
        """Take a new dictionary: masks are recomputed, and a label whose types the
        dictionary lacks warns now (W020) rather than at its first span."""
        self._dictionary = dictionary
        self._masks = {}
        for label in self.types:
            self.allowed(label)

    def allowed(self, label: Optional[str]) -> Optional[numpy.ndarray]:
        """The mask of a label's allowed concepts; None when the label is not filtered."""
        if label is None or label not in self.types or self._dictionary is None:
            return None
        mask = self._masks.get(label)
        if mask is None:
            allowed = self.types[label]
            dictionary = self._dictionary
            mask = numpy.zeros(dictionary.n_concepts, dtype=bool)
            if dictionary.types is not None:
                for c, joined in enumerate(dictionary.types):
                    if joined and not allowed.isdisjoint(joined.split("|")):
                        mask[c] = True
            if not mask.any():
                warnings.warn(Warnings.W020.format(types=_shown(self._given.get(label, allowed)),
                                                   label=label, known=_known_types(dictionary)))
            self._masks[label] = mask
        return mask


def _shown(types, first: int = 8) -> str:
    """The first few of `types`, sorted, and how many more."""
    types = sorted(set(types))
    more = f" and {len(types) - first} more" if len(types) > first else ""
    return ", ".join(repr(t) for t in types[:first]) + more


def _known_types(dictionary) -> str:
    """The types the dictionary's concepts have, the first few, for W020."""
    if dictionary.types is None:
        return "none (it gives no concept a type)"
    known = {t for joined in dictionary.types if joined for t in joined.split("|")}
    return _shown(known) if known else "none (it gives no concept a type)"


def check_type_filter(value) -> Dict[str, frozenset]:
    """label -> frozenset of allowed types; UMLS semantic groups (DISO) become their TUIs."""
    from ...kb.readers.umls import semantic_groups

    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
            isinstance(label, str) and isinstance(types, (list, tuple))
            and all(isinstance(t, str) and t for t in types) for label, types in value.items()):
        raise BioLinkError(Errors.E161.format(value=value))
    groups: Dict[str, List[str]] = {}
    for tui, (group, _, _) in semantic_groups().items():
        groups.setdefault(group, []).append(tui)
    out = {}
    for label, types in value.items():
        allowed = set()
        for t in types:
            allowed.update(groups.get(t, [t]))
        out[label] = frozenset(allowed)
    return out
