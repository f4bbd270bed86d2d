"""Mention and name normalization: case folding, punctuation, spelling variants,
plurals, a token spelling map.

Names and mentions go through the same folding so that "Wilson's disease" and
"wilson s disease" meet; the spelling map is for mentions only (it fixes corpus typos
such as "hemmorhage", which no dictionary name has). Because the folding is applied to
both sides, a lossy rule only has to be consistent, not linguistically right:
"diabetes" folds to "diabete" in the dictionary and in the text alike.
"""
import re
import string
import sys
from contextlib import contextmanager
from typing import Dict, Iterator, Mapping, Optional, Sequence

from ..errors import BioLinkError, Errors
from .gene_names import fold_gene_token, glue_symbol_parts
from .chemistry import ChemistryRules, check_groups
from ..io.files import check_no_control_characters, iter_lines
from ..io.util import PathLike

# Replaced by a space, not deleted, so "non-small-cell" keeps its word boundaries.
_PUNCTUATION = re.compile("[" + re.escape(string.punctuation) + "]")

# British spellings the dictionaries (MeSH, MEDIC) only have in their American form:
# haemorrhage, anaemia, oedema, diarrhoea, leucopenia, tumour, sulphonamide. Folded
# text only (lowercase, so the rules need no case variants). A run such as "aoe" folds to
# "ae", and folding that again gives "e": MentionNormalizer.v1 is frozen as it is (no
# dictionary name has such a run), so nothing folds an already folded text.
_SPELLING_VARIANTS = [
    (re.compile(r"ae|oe"), "e"),
    (re.compile(r"\bleuc"), "leuk"),
    # Not "four", "hour", "your": three letters before the ending.
    (re.compile(r"(?<=[a-z]{3})our\b"), "or"),
    (re.compile(r"sulph"), "sulf"),
]
# A final "s" after three letters that are not s, u or i ("strokes", "infarctions"; not
# "abscess", "virus", "arthritis").
_PLURAL = re.compile(r"(?<=[a-z]{2}[^sui\W\d])s\b")
# fold() keeps each distinct token's folded form up to this many tokens, then starts over.
TOKEN_CACHE_SIZE = 200_000


class _TokenCache(dict):
    """token -> folded token, computed on first lookup; emptied when full."""

    def __init__(self, fold, settings: tuple):
        super().__init__()
        self.fold = fold
        self.settings = settings
        self.limit = TOKEN_CACHE_SIZE

    def __missing__(self, token: str) -> str:
        if len(self) >= self.limit:
            self.clear()
        folded = self[token] = self.fold(token)
        return folded


class MentionNormalizer:
    def __init__(self, *, lowercase: bool = True, remove_punctuation: bool = True,
                 spelling_variants: bool = False, strip_plurals: bool = False,
                 spelling: Optional[Mapping[str, str]] = None, gene_symbols: bool = False,
                 chemistry: Sequence[str] = ()):
        self.lowercase = lowercase
        # Zn2+ = zinc, Arg = arginine, x hydrochloride = x (text/chemistry.py): the rule
        # groups applied to the whole text before the folding
        self.chemistry = check_groups(chemistry)
        self._chemistry_rules = ChemistryRules(self.chemistry) if self.chemistry else None
        # IL-6 = IL6 = Il6, IL-1 beta = IL1B (text/gene_names.py)
        self.gene_symbols = gene_symbols
        self.remove_punctuation = remove_punctuation
        self.spelling_variants = spelling_variants
        self.strip_plurals = strip_plurals
        self.spelling: Dict[str, str] = {}
        self._token_cache: Optional[_TokenCache] = None
        self.set_spelling(spelling or {})

    def set_spelling(self, spelling: Mapping[str, str]) -> None:
        """Set the spelling corrections (wrong -> right), folded like the text they apply to;
        a key that folds to more than one token is dropped, as it could never match."""
        # Keys are matched against folded tokens, so they are folded the same way once,
        # here; a key that folds to several tokens could never match one and is dropped.
        folded = {self.fold(wrong): self.fold(right) for wrong, right in spelling.items()}
        self.spelling = {wrong: right for wrong, right in folded.items()
                         if wrong and " " not in wrong}

    def fold(self, text: str) -> str:
        """Fold `text` for matching: lowercase, punctuation to spaces, plurals and British spellings
        stripped, as configured, and whitespace collapsed."""
        # Every rule stays inside a whitespace-separated token (see _fold_token), so each
        # distinct token is folded once: names and mentions repeat their words a lot.
        settings = (self.lowercase, self.remove_punctuation, self.strip_plurals,
                    self.spelling_variants, self.gene_symbols)
        if self._chemistry_rules is not None:  # whole-text rules, so before the token cache
            text = self._chemistry_rules(text)
        cache = self._token_cache
        if cache is None or cache.settings != settings:  # the settings are public attributes
            cache = self._token_cache = _TokenCache(self._fold_token, settings)
        folded = " ".join(filter(None, map(cache.__getitem__, text.split())))
        # Gluing a symbol's parts reaches across words ("IL-1 beta"), so it follows them.
        return glue_symbol_parts(folded) if self.gene_symbols else folded

    @contextmanager
    def unbounded_cache(self) -> Iterator[None]:
        """Within the block, keep every distinct token's folded form (then empty the
        cache): building a linker folds millions of names, and with millions of distinct
        words the bounded cache is emptied so often that nearly every token is folded
        from scratch."""
        self.fold("")  # makes the cache for the current settings
        cache = self._token_cache
        cache.limit = sys.maxsize
        try:
            yield
        finally:
            cache.clear()
            cache.limit = TOKEN_CACHE_SIZE

    def _fold_token(self, text: str) -> str:
        """fold() of one token (or of any text: it is the whole rule set). Nothing in it
        reaches across whitespace: lowercasing is per character (a final sigma looks at
        its neighbours, but whitespace ends that context), punctuation becomes a space,
        and the plural and spelling patterns match word characters only."""
        if self.gene_symbols:  # before lowercasing: TNFalpha's capitals mark the symbol
            text = fold_gene_token(text)
        if self.lowercase:
            text = text.lower()
        if self.remove_punctuation:
            text = _PUNCTUATION.sub(" ", text)
        # Plurals first: "tumours" must lose its "s" before "-our" can become "-or".
        if self.strip_plurals:
            text = _PLURAL.sub("", text)
        if self.spelling_variants:
            for pattern, replacement in _SPELLING_VARIANTS:
                text = pattern.sub(replacement, text)
        return " ".join(text.split())

    def __getstate__(self) -> Dict:
        return {**self.__dict__, "_token_cache": None}

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
        """The settings and spelling table, JSON-serializable, for saving with the pipeline."""
        return {"lowercase": self.lowercase, "remove_punctuation": self.remove_punctuation,
                "spelling_variants": self.spelling_variants,
                "strip_plurals": self.strip_plurals, "gene_symbols": self.gene_symbols,
                "chemistry": list(self.chemistry),
                "spelling": dict(self.spelling)}

    @classmethod
    def from_dict(cls, state: Dict) -> "MentionNormalizer":
        """Rebuild a normalizer saved by `to_dict`; options missing from older saves keep the
        behaviour those saves were indexed with."""
        # A pipeline saved before a folding option existed was indexed without it.
        normalizer = cls(lowercase=state["lowercase"],
                         remove_punctuation=state["remove_punctuation"],
                         spelling_variants=state.get("spelling_variants", False),
                         strip_plurals=state.get("strip_plurals", False),
                         gene_symbols=state.get("gene_symbols", False),
                         chemistry=state.get("chemistry", ()))
        # Already folded when saved: set directly so folding settings cannot drift.
        normalizer.spelling = dict(state.get("spelling", {}))
        return normalizer


def read_spelling_map(path: PathLike) -> Dict[str, str]:
    """A `wrong||right` file (BioSyn's ncbi-spell-check.txt), or `wrong<TAB>right`."""
    spelling: Dict[str, str] = {}
    for line_no, line in iter_lines(path, "Spelling map"):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("||") if "||" in line else line.split("\t")
        if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
            raise BioLinkError(Errors.E106.format(path=path, line=line_no, text=line))
        check_no_control_characters(path, line_no, line, "a spelling map line",
                                    allow="" if "||" in line else "\t")
        spelling[parts[0].strip()] = parts[1].strip()
    return spelling
