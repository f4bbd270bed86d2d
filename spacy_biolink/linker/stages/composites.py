"""The composite step: "breast and ovarian cancer" names two concepts, so its parts
("breast cancer", "ovarian cancer") are searched beside the whole, and the better answer
is kept (linker/policy.py's `link`).
"""
from typing import Dict, List, Optional, Tuple

import numpy

from ...text.composites import split_composite


class CompositeSplitter:
    """Splits coordinated mentions into their parts (enabled) and keeps the split only
    where every part matches better than the whole by more than `margin` and the parts
    name different concepts."""

    step = "composites"

    def __init__(self, enabled: bool, margin: float):
        self.enabled = enabled
        # 0 (as released) lets float noise (1.0 vs 0.99999988 for two exact names) split
        # "hereditary breast and ovarian cancer"; init-linker sets a small margin.
        self.margin = margin

    @property
    def settings(self) -> Dict:
        """The flat bio_linker settings this step stands for."""
        return {"split_composites": self.enabled, "split_margin": self.margin}

    def parts(self, text: str) -> List[str]:
        """The parts of a composite mention; empty when it is not one or splitting is off."""
        if not self.enabled:
            return []
        parts = split_composite(text)
        return parts if len(parts) > 1 else []

    def choose(self, whole: Tuple[str, list], split: List[Tuple[str, list]]
               ) -> List[Tuple[str, list]]:
        """The links of one mention: its parts' when each beats the whole and they name
        different concepts, else the whole's. Parts that all name the same concept are
        one concept written as a coordination ("hereditary breast and ovarian cancer", a
        syndrome)."""
        best_whole = whole[1][0][1] if whole[1] else -numpy.inf
        if (split and all(c and c[0][1] > best_whole + self.margin for _, c in split)
                and len({c[0][0] for _, c in split}) > 1):
            return split
        return [whole]
