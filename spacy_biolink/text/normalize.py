"""Mention and name normalization: case folding, punctuation, a token spelling map.

Names and mentions go through the same folding so that "Wilson's disease" and
"wilson s disease" meet; the spelling map is for mentions only (it fixes corpus typos
such as "hemmorhage", which no dictionary name has).
"""
import re
import string
from typing import Dict, Mapping, Optional

from ..errors import BioLinkError, Errors
from ..util import PathLike, open_text

# Replaced by a space, not deleted, so "non-small-cell" keeps its word boundaries.
_PUNCTUATION = re.compile("[" + re.escape(string.punctuation) + "]")


class MentionNormalizer:
    def __init__(self, *, lowercase: bool = True, remove_punctuation: bool = True,
                 spelling: Optional[Mapping[str, str]] = None):
        self.lowercase = lowercase
        self.remove_punctuation = remove_punctuation
        self.spelling: Dict[str, str] = {}
        self.set_spelling(spelling or {})

    def set_spelling(self, spelling: Mapping[str, str]) -> None:
        # Keys are matched against folded tokens, so they are folded the same way once,
        # here; a key that folds to several tokens could never match one and is dropped.
        folded = {self.fold(wrong): self.fold(right) for wrong, right in spelling.items()}
        self.spelling = {wrong: right for wrong, right in folded.items()
                         if wrong and " " not in wrong}

    def fold(self, text: str) -> str:
        if self.lowercase:
            text = text.lower()
        if self.remove_punctuation:
            text = _PUNCTUATION.sub(" ", text)
        return " ".join(text.split())

    def name(self, text: str) -> str:
        """The form a dictionary name is encoded in."""
        return self.fold(text)

    def mention(self, text: str) -> str:
        """The form a mention is encoded in: folded, then spelling-corrected token by token."""
        folded = self.fold(text)
        if not self.spelling:
            return folded
        return " ".join(self.spelling.get(token, token) for token in folded.split(" "))

    def to_dict(self) -> Dict:
        return {"lowercase": self.lowercase, "remove_punctuation": self.remove_punctuation,
                "spelling": dict(self.spelling)}

    @classmethod
    def from_dict(cls, state: Dict) -> "MentionNormalizer":
        normalizer = cls(lowercase=state["lowercase"],
                         remove_punctuation=state["remove_punctuation"])
        # Already folded when saved: set directly so folding settings cannot drift.
        normalizer.spelling = dict(state.get("spelling", {}))
        return normalizer


def read_spelling_map(path: PathLike) -> Dict[str, str]:
    """A `wrong||right` file (BioSyn's ncbi-spell-check.txt), or `wrong<TAB>right`."""
    spelling: Dict[str, str] = {}
    with open_text(path) as fileh:
        for line_no, raw in enumerate(fileh, start=1):
            line = raw.rstrip("\r\n")
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.split("||") if "||" in line else line.split("\t")
            if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
                raise BioLinkError(Errors.E106.format(path=path, line=line_no, text=line))
            spelling[parts[0].strip()] = parts[1].strip()
    return spelling
