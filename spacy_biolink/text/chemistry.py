"""Chemistry-aware folding for a chemical linker: Zn2+ = Zn(2+) = zinc ion = zinc,
Na = sodium, Arg = arginine, H2O2 = hydrogen peroxide, lidocaine hydrochloride =
lidocaine, L-arginine = arginine, kainic acid = kainate.

A corpus of chemicals names them in forms a MeSH name never has (an ion's symbol and
charge, a formula, an amino acid's code), or with parts MeSH files elsewhere (a salt's
counter-ion, a stereo prefix). Each rule turns a whole name into one canonical text, and
it is applied to dictionary names and mentions alike (MentionNormalizer's `chemistry`),
before the usual folding, so both sides meet: a lossy rule only has to be consistent.

The forms and their canonical names are data (spacy_biolink/data/chemistry.txt); the
patterns around them (charges, "ion", "-ic acid") are the few regular expressions below.
Rules are grouped, and a linker names the groups it applies (CHEMISTRY_GROUPS).
"""
import re
from functools import lru_cache
from importlib import resources
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple

from ..errors import BioLinkError, Errors

# Group name -> what it does (the names a config may list, in the order they apply).
CHEMISTRY_GROUPS: Dict[str, str] = {
    "stereo": "L-, D-, (+)-, (S)-, cis-, trans- dropped from the start of a longer name",
    "locants": "1,2- and N- style locants dropped from the start of a longer name",
    "salts": "hydrochloride, mesylate, monohydrate ... dropped from the end of a longer name",
    "ions": "Zn2+, Zn(2+), Zn++, Zn(II), zinc ion(s) -> zinc; Cl- -> chloride",
    "elements": "a whole name that is an element symbol -> the element (Na -> sodium)",
    "amino_acids": "a three-letter amino-acid code -> the amino acid (Arg -> arginine)",
    "amino_acid_letters": "a one-letter amino-acid code -> the amino acid (R -> arginine)",
    "formulas": "a common molecular formula -> its name (H2O2, H(2)O(2) -> hydrogen peroxide)",
    "acids": "X-ic acid -> X-ate, X-ous acid -> X-ite (kainic acid = kainate)",
}
# The groups chosen on BioRED dev and BC5CDR dev chemicals together (docs/chemicals.md):
# locants and one-letter codes are off, as neither helped there.
DEFAULT_GROUPS = ("stereo", "salts", "ions", "elements", "amino_acids", "formulas", "acids")

# Table group (data file) -> the rule group that uses it.
_TABLE_GROUPS = {"element": ("ions", "elements"), "anion": ("ions",), "cation": ("ions",),
                 "amino_acid": ("amino_acids",), "amino_acid_letter": ("amino_acid_letters",),
                 "formula": ("formulas",), "salt": ("salts",), "stereo": ("stereo",)}
_NEEDS_CANONICAL = {"element", "anion", "cation", "amino_acid", "amino_acid_letter", "formula"}

DATA_FILE = "chemistry.txt"

# A charge after a symbol: 2+, (2+), ++, +2, (+2), ^2+, 2-, (-), (II), (III)
_CHARGE = re.compile(r"^(?P<symbol>[A-Z][A-Za-z0-9]{0,4}?)\s?\^?"
                     r"(?:\((?P<p_charge>\d?[+-]{1,3}|[+-]\d)\)|(?P<charge>\d?[+-]{1,3}|[+-]\d)"
                     r"|\((?P<roman>I{1,3}|IV|VI{0,2})\))$")
# "zinc ion", "calcium ions", "Zn ion", "sodium cation(s)", "chloride anion(s)"
_ION_WORD = re.compile(r"^(?P<name>\S.*?)\s+(?:cation|anion|ion)s?$", re.IGNORECASE)
# "zinc(II)", "iron (III)"
_ROMAN_NAME = re.compile(r"^(?P<name>[A-Za-z]{3,})\s?\((?:I{1,3}|IV|VI{0,2})\)$")
_BRACKETED_NUMBER = re.compile(r"\((?P<n>\d+)\)")
_IC_ACID = re.compile(r"\b(?P<stem>[A-Za-z]{3,})ic acid\b", re.IGNORECASE)
_OUS_ACID = re.compile(r"\b(?P<stem>[A-Za-z]{3,})ous acid\b", re.IGNORECASE)
# 1,2- 2,3,7,8- N,N- N6- 4'- at the start, before a name of at least three letters
_LOCANT = re.compile(r"^(?:\d+'?|[NOSC]\d*'?)(?:,(?:\d+'?|[NOSC]\d*'?))*-(?=[A-Za-z(]{3})")
# A leftover shorter than this is no name to fold to: "L-" alone stays as it is.
_MIN_REST = 3
# Charges as running text writes them after a symbol, each of which `ions` folds.
_CATION_CHARGES = ("+", "(+)", "2+", "(2+)", "3+", "(3+)")
_ANION_CHARGES = ("-", "(-)", "2-", "(2-)")
_SUBSCRIPT = re.compile(r"(?<=[A-Za-z)])(\d+)")


class ChemistryRules:
    """The rule groups `groups` of the table at `path` (the package's by default),
    callable on a text: `ChemistryRules(["ions"])("Zn2+")` is "zinc"."""

    def __init__(self, groups: Sequence[str] = DEFAULT_GROUPS, *, path=None):
        self.groups: FrozenSet[str] = frozenset(check_groups(groups))
        tables = read_chemistry_table(path)
        self.elements = tables.get("element", {})
        self.anions = tables.get("anion", {})
        self.cations = tables.get("cation", {})
        whole: Dict[str, str] = {}
        if "elements" in self.groups:
            whole.update(self.elements)
        if "amino_acid_letters" in self.groups:
            whole.update(tables.get("amino_acid_letter", {}))
        if "amino_acids" in self.groups:
            for code, name in tables.get("amino_acid", {}).items():
                whole[code] = whole[code.upper()] = name
        if "formulas" in self.groups:
            whole.update(tables.get("formula", {}))
        self.whole = whole
        # One pattern a group, so a name no rule touches costs one failed match each.
        # Longest first, so "dihydrochloride" is not read as "di" + "hydrochloride".
        salts = sorted(tables.get("salt", {}), key=len, reverse=True)
        self.salts = re.compile(
            r"(?<=\S{%d})[ ,-]+(?:%s)$" % (_MIN_REST, "|".join(map(re.escape, salts))),
            re.IGNORECASE) if "salts" in self.groups and salts else None
        stereo = sorted(tables.get("stereo", {}), key=len, reverse=True)
        self.stereo = re.compile(
            r"^(?:%s)[- ]+(?=\S{%d})" % ("|".join(map(re.escape, stereo)), _MIN_REST)
        ) if "stereo" in self.groups and stereo else None
        self.element_names = frozenset(self.elements.values())

    def __call__(self, text: str) -> str:
        """`text` with the rules applied (unchanged when none matches)."""
        text = " ".join(text.split())
        if self.stereo is not None or "locants" in self.groups:
            text = self._strip_prefixes(text)
        if self.salts is not None:
            text = self._strip_salts(text)
        if "ions" in self.groups and len(text) < 40:
            text = self._ion(text)
        canonical = self.whole.get(text)
        if canonical is None and "formulas" in self.groups and "(" in text and len(text) < 20:
            # subscripts and mass numbers written in brackets: CaCl(2), H(2)O(2), (3)H
            canonical = self.whole.get(_BRACKETED_NUMBER.sub(r"\g<n>", text))
        if canonical is not None:
            return canonical
        if "acids" in self.groups and " acid" in text.lower():
            text = _OUS_ACID.sub(r"\g<stem>ite", _IC_ACID.sub(r"\g<stem>ate", text))
        return text

    def _strip_prefixes(self, text: str) -> str:
        while True:
            before = text
            if self.stereo is not None:
                match = self.stereo.match(text)
                if match:
                    text = text[match.end():]
            if "locants" in self.groups:
                match = _LOCANT.match(text)
                if match:
                    text = text[match.end():]
            if text == before:
                return text

    def _strip_salts(self, text: str) -> str:
        while True:  # "x hydrochloride hemihydrate": one salt word at a time
            match = self.salts.search(text)
            if not match:
                return text
            text = text[:match.start()].rstrip(" ,-")

    def _ion(self, text: str) -> str:
        match = _CHARGE.match(text)
        if match:
            symbol = match.group("symbol")
            charge = match.group("p_charge") or match.group("charge") or ""
            # NH4+ reads as NH with charge 4+ first: the digit may be the symbol's.
            forms = [symbol] + [symbol + charge[:1]] * charge[:1].isdigit()
            for form in forms:
                if "-" in charge:
                    name = self.anions.get(form)
                else:
                    name = self.cations.get(form) or self.elements.get(form)
                if name is not None:
                    return name
        match = _ION_WORD.match(text) if text[-1:] in "nNsS" else None
        if match:
            name = match.group("name")
            return self.elements.get(name) or self.cations.get(name) or name
        match = _ROMAN_NAME.match(text) if text.endswith(")") else None
        if match and match.group("name").lower() in self.element_names:
            return match.group("name")
        return text


@lru_cache(maxsize=4)
def _read_table(path: Optional[str]) -> Tuple[Tuple[str, Tuple[Tuple[str, str], ...]], ...]:
    if path is None:
        text = resources.files("spacy_biolink.data").joinpath(DATA_FILE).read_text("utf8")
        where = f"spacy_biolink/data/{DATA_FILE}"
    else:
        with open(path, encoding="utf8") as f:
            text = f.read()
        where = path
    tables: Dict[str, Dict[str, str]] = {}
    for line_no, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) == 2:
            cols.append("")
        reason = None
        if len(cols) != 3:
            reason = f"{len(cols)} tab-separated fields, expected 3"
        elif cols[0] not in _TABLE_GROUPS:
            reason = f"unknown group {cols[0]!r} (one of {', '.join(_TABLE_GROUPS)})"
        elif not cols[1].strip():
            reason = "empty FORM"
        elif cols[0] in _NEEDS_CANONICAL and not cols[2].strip():
            reason = f"group {cols[0]} needs a CANONICAL name"
        if reason:
            raise BioLinkError(Errors.E581.format(path=where, line=line_no, reason=reason,
                                                  text=line))
        tables.setdefault(cols[0], {})[cols[1].strip()] = cols[2].strip()
    return tuple((group, tuple(rows.items())) for group, rows in tables.items())


def read_chemistry_table(path=None) -> Dict[str, Dict[str, str]]:
    """Table group -> {form: canonical} of the chemistry rule table (the package's
    data/chemistry.txt when `path` is None); E581 names a bad line."""
    return {group: dict(rows) for group, rows in _read_table(None if path is None else str(path))}


def written_forms(names: Iterable[str], *, path=None) -> List[str]:
    """The forms a text writes that the salt, ion and formula rules (of the table at
    `path`, the package's by default) fold onto one of `names`, and that are not among
    `names` (case aside): "Quetiapine" for "Quetiapine Fumarate" (one word, see
    _taggable), "Zn2+", "Zn(2+)" for "Zinc", "H2O2", "H(2)O(2)" for "Hydrogen Peroxide".
    A linker folds both sides and needs none of them; a dictionary tagger matches what
    is written (the NER's gazetteer, `chemistry_forms`). The other groups give none:
    element symbols alone and amino-acid codes are English words as often ("In", "His"),
    and what a stereo prefix leaves is often no chemical ("L-Type VDCC", "DL antibody").
    First form of each spelling, in the order found."""
    given = list(names)
    known = {name.lower() for name in given}
    found: Dict[str, str] = {}

    def add(form: str) -> None:
        if form.lower() not in known:
            found.setdefault(form.lower(), form)

    rules = ChemistryRules(["salts"], path=path)
    if rules.salts is not None:
        for name in given:
            # "Hydratase, Fumarate" is MeSH's inverted "Fumarate Hydratase", no salt
            if "," not in name:
                folded = rules(name)
                if folded != " ".join(name.split()) and _taggable(folded):
                    add(folded)
    tables = read_chemistry_table(path)
    for table, charges in (("element", _CATION_CHARGES), ("cation", _CATION_CHARGES),
                           ("anion", _ANION_CHARGES)):
        for symbol, name in tables.get(table, {}).items():
            if name.lower() in known:
                for charge in charges:
                    add(symbol + charge)
    for form, name in tables.get("formula", {}).items():
        if name.lower() in known:
            add(form)
            add(_SUBSCRIPT.sub(r"(\1)", form))  # CaCl(2), as PubMed often writes it
    return list(found.values())


def _taggable(folded: str) -> bool:
    """Whether what the salt rule leaves of a name is one word a tagger should look for
    in running text. What it leaves of a supplementary record's name can be an acronym
    that names a disease or a gene as often ("PDB hydrochloride"), a radical ("benzyl
    hydrate") or an adjective ("ferrous fumarate"): none of them a chemical in text."""
    lowered = folded.lower()
    return (len(folded) >= 6 and " " not in folded and any(ch.islower() for ch in folded)
            and sum(ch.isalpha() for ch in folded) >= _MIN_REST
            and not lowered.endswith(("yl", "ous", "ic")))


def check_groups(groups: Iterable[str]) -> Tuple[str, ...]:
    """`groups` as a tuple, each one of CHEMISTRY_GROUPS (E580 otherwise)."""
    if isinstance(groups, str):
        raise BioLinkError(Errors.E580.format(value=groups, unknown=[groups],
                                              groups=list(CHEMISTRY_GROUPS)))
    groups = tuple(groups)
    unknown = [g for g in groups if g not in CHEMISTRY_GROUPS]
    if unknown:
        raise BioLinkError(Errors.E580.format(value=list(groups), unknown=unknown,
                                              groups=list(CHEMISTRY_GROUPS)))
    return groups
