"""The variant normalizer: sequence-variant mentions become tmVar-style normalized ids
(`c|SUB|T|920|G`, `p|SUB|V|600|E`, `p|FS|V|35|A|25`, `c|DEL|1195|C`, `rs2297882`), the
forms tmVar3 and BioRED annotate, by rules written as data (data/variant_rules.tsv: a
table of regular expressions and id templates, see its header).

A variant names a concept no dictionary lists: the id space is the variants themselves.
So the normalizer is a stage of a bio_linker (a "mentions" stage, run after retrieval):
for a mention of one of its labels that a rule matches, the answer is the rule's id, as a
string candidate with score 1.0 (policy.reported_id reports a string as it is); for one
that no rule matches, the retriever's candidates stand (a small dictionary of corpus
mentions, --augment ... --augment-new-concepts Variant) or, with fallback false, none.
Being a stage, it composes with everything a linker has: labels, kb_id_ and kb_ents,
saving (the rule table travels with the pipeline as its state), `evaluate`, `link`.
"""
import re
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from ...errors import BioLinkError, Errors
from ...io.util import PathLike
from . import Stage

RULES_FILE = Path(__file__).resolve().parent.parent.parent / "data" / "variant_rules.tsv"

AMINO_ACIDS = {
    "ala": "A", "arg": "R", "asn": "N", "asp": "D", "cys": "C", "gln": "Q", "glu": "E",
    "gly": "G", "his": "H", "ile": "I", "leu": "L", "lys": "K", "met": "M", "phe": "F",
    "pro": "P", "ser": "S", "thr": "T", "trp": "W", "tyr": "Y", "val": "V", "ter": "X",
    "sec": "U", "asx": "B", "glx": "Z", "xaa": "X", "stop": "X", "*": "X",
    "alanine": "A", "arginine": "R", "asparagine": "N", "aspartic acid": "D",
    "aspartate": "D", "cysteine": "C", "glutamine": "Q", "glutamic acid": "E",
    "glutamate": "E", "glycine": "G", "histidine": "H", "isoleucine": "I", "leucine": "L",
    "lysine": "K", "methionine": "M", "phenylalanine": "F", "proline": "P", "serine": "S",
    "threonine": "T", "tryptophan": "W", "tyrosine": "Y", "valine": "V",
    "stop codon": "X", "termination": "X", "termination codon": "X",
}
NUCLEOTIDES = {"adenine": "A", "adenosine": "A", "guanine": "G", "guanosine": "G",
               "cytosine": "C", "cytidine": "C", "thymine": "T", "thymidine": "T",
               "uracil": "U"}
NUMBER_WORDS = {"one": "1", "single": "1", "two": "2", "three": "3", "four": "4",
                "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10"}


def _amino_acid(value: str) -> str:
    word = value.split("(")[0].strip()
    if len(word) == 1:
        return "X" if word == "*" else word.upper()
    return AMINO_ACIDS.get(word.lower(), word)


def _nucleotides(value: str) -> str:
    word = value.split("(")[0].strip()
    return NUCLEOTIDES.get(word.lower(), word.upper())


def _position(value: str) -> str:
    return re.sub(r"\s+", "", value).replace(",", "")


def _range(value: str) -> str:
    """1314 through 1328 -> 1314_1328; 1782-83 -> 1782_1783 (a short end takes the start's
    leading digits); 7916 and 7917 -> 7916_7917."""
    parts = [p for p in re.split(r"\s*(?:_|-|\bto\b|\bthrough\b|\band\b)\s*", value.strip()) if p]
    if len(parts) != 2:
        return _position(value)
    start, end = parts
    if end.isdigit() and start.isdigit() and len(end) < len(start):
        end = start[:len(start) - len(end)] + end
    return f"{start}_{end}"


def _number(value: str) -> str:
    return NUMBER_WORDS.get(value.lower(), value.replace(",", ""))


def _big_unit(value: str) -> str:
    return {"kb": "K", "kbp": "K", "mb": "M", "mbp": "M"}.get(value.lower(), value.upper())


# The standard genetic code, codon -> one-letter amino acid (X: stop).
_BASES = "TCAG"
_CODE = "FFLLSSSSYYXXCCXWLLLLPPPPHHQQRRRRIIIMTTTTNNKKSSRRVVVVAAAADDEEGGGG"
CODONS = {a + b + c: _CODE[16 * i + 4 * j + k] for i, a in enumerate(_BASES)
          for j, b in enumerate(_BASES) for k, c in enumerate(_BASES)}


def _codon(value: str) -> str:
    return CODONS.get(value.upper().replace("U", "T"), value)


FILTERS: Dict[str, Callable[[str], str]] = {
    "aa": _amino_acid, "nt": _nucleotides, "pos": _position, "range": _range,
    "size": _number, "num": _number, "big": _big_unit, "upper": str.upper,
    "codon": _codon, "alts": lambda value: value.replace("/", ","),
}
_FIELD = re.compile(r"\{(\w+)(?::(\w+))?\}")
_MACRO = re.compile(r"%(\w+)%")


class VariantRules:
    """An ordered table of (pattern, id template) rules read from a rule file's text
    (data/variant_rules.tsv's format); `normalize(text)` gives the first match's id."""

    def __init__(self, text: str, *, where: str = "<rules>"):
        self.text = text
        self.where = where
        self.rules: List[Tuple[re.Pattern, str, int]] = []
        macros: Dict[str, str] = {}
        for line_no, line in enumerate(text.splitlines(), 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) != 2 or not cols[0] or not cols[1].strip():
                raise BioLinkError(Errors.E342.format(
                    path=where, line=line_no, text=line[:200],
                    reason=f"{len(cols)} tab-separated column(s), expected 2"))
            pattern, template = cols[0], cols[1].strip()
            try:
                expanded = _MACRO.sub(lambda m: _macro(macros, m.group(1)), pattern)
            except KeyError as err:
                raise BioLinkError(Errors.E342.format(
                    path=where, line=line_no, text=line[:200],
                    reason=f"macro %{err.args[0]}% is not defined above")) from None
            if pattern.startswith("@"):
                macros[pattern[1:]] = _MACRO.sub(lambda m: _macro(macros, m.group(1)), template)
                continue
            try:
                compiled = re.compile(expanded)
            except re.error as err:
                raise BioLinkError(Errors.E342.format(
                    path=where, line=line_no, text=line[:200],
                    reason=f"not a regular expression ({err})")) from None
            for name, filter_name in _FIELD.findall(template):
                if filter_name and filter_name not in FILTERS:
                    raise BioLinkError(Errors.E342.format(
                        path=where, line=line_no, text=line[:200],
                        reason=f"unknown filter {filter_name!r} (one of {', '.join(FILTERS)})"))
                if name != "seq" and name not in compiled.groupindex:
                    raise BioLinkError(Errors.E342.format(
                        path=where, line=line_no, text=line[:200],
                        reason=f"the template names {{{name}}}, a group the pattern lacks"))
            self.rules.append((compiled, template, line_no))

    @classmethod
    def from_file(cls, path: Optional[PathLike] = None) -> "VariantRules":
        """The rules of a table file (the shipped data/variant_rules.tsv when None)."""
        path = Path(path) if path is not None else RULES_FILE
        try:
            text = path.read_text(encoding="utf8")
        except (OSError, UnicodeDecodeError) as err:
            raise BioLinkError(Errors.E343.format(
                setting="rules", value=str(path),
                reason=f"cannot read it ({err}); give a UTF-8 rule table, or null for the "
                       f"shipped one")) from None
        return cls(text, where=str(path))

    def match(self, text: str) -> Optional[Tuple[str, int]]:
        """(normalized id, line of the rule) of the first rule the whole text matches."""
        text = " ".join(text.split()).strip(" .,;:")
        if text.startswith("(") and text.endswith(")") and text.count("(") == 1:
            text = text[1:-1].strip()
        for pattern, template, line_no in self.rules:
            found = pattern.fullmatch(text)
            if found is not None:
                return _fill(template, found), line_no
        return None

    def normalize(self, text: str) -> Optional[str]:
        """The normalized id of a variant mention, or None when no rule matches."""
        found = self.match(text)
        return found[0] if found else None


def _macro(macros: Dict[str, str], name: str) -> str:
    return f"(?:{macros[name]})"


def _fill(template: str, found: "re.Match") -> str:
    groups = found.groupdict()

    def field(m: "re.Match") -> str:
        name, filter_name = m.group(1), m.group(2)
        value = groups.get(name)
        if name == "seq" and not value:
            return "c"
        if value is None:
            return ""
        return FILTERS[filter_name](value) if filter_name else value

    return _FIELD.sub(field, template)


# A dictionary name matching the query exactly scores a cosine of 1 (float noise aside).
EXACT = 0.999


def _exact(links) -> bool:
    """True when a mention's one link's best candidate is an exact dictionary match."""
    return len(links) == 1 and bool(links[0][1]) and links[0][1][0][1] >= EXACT


def variant_id(raw_ids: str) -> str:
    """The variant part of a corpus id field: tmVar3 writes what it attached after `;`
    (`c|SUB|T|920|G;Gene:23417;RS#:...`), which is not part of the normalized form."""
    return raw_ids.split(";", 1)[0].strip()


class VariantNormalizer(Stage):
    """A mention stage: mentions whose label is one of `labels` get the rule table's id
    (module docstring)."""

    level = "mentions"
    # Rules, not weights: a pipe built from the config is ready to link.
    needs_training = False

    def __init__(self, labels: Sequence[str] = ("Variant",), fallback: bool = True,
                 rules: Optional[PathLike] = None, prefer_exact: bool = False):
        if isinstance(labels, str) or not all(isinstance(label, str) for label in labels):
            raise BioLinkError(Errors.E343.format(
                setting="labels", value=labels,
                reason="give a list of span labels, e.g. [\"Variant\"]"))
        self.labels = frozenset(labels)
        self.fallback = fallback
        self.prefer_exact = prefer_exact
        # A pipeline saved with a table of the user's own holds the table itself: loaded
        # where that file is not, its rules come from the saved state (state_from_bytes).
        self.rules_path = rules
        self.rules: Optional[VariantRules] = None
        if rules is None or Path(rules).is_file():
            self.rules = VariantRules.from_file(rules)

    @property
    def open_labels(self) -> frozenset:
        """Labels whose ids this stage builds itself, dictionary or not (evaluate does
        not skip their mentions for want of a dictionary id)."""
        return self.labels

    def takes(self, label: Optional[str]) -> bool:
        """Whether a mention of this label is a variant to normalize."""
        if label is None:
            return False
        if label in self.labels:
            return True
        from ...corpora.types import six_type_label

        return six_type_label(label) in self.labels

    def apply_to_mentions(self, linker, mentions, links):
        """Each variant mention's links replaced by the rule's id (a string candidate,
        score 1.0); without a rule, the retriever's (fallback) or none. With prefer_exact,
        a mention the dictionary names exactly keeps the dictionary's answer."""
        if self.rules is None:  # neither the file nor a saved table
            self.rules = VariantRules.from_file(self.rules_path)
        out = list(links)
        for i, mention in enumerate(mentions):
            if not self.takes(mention.label):
                continue
            if self.prefer_exact and _exact(out[i]):
                continue
            found = self.rules.normalize(mention.text)
            if found is not None:
                out[i] = [(mention.text, [(found, 1.0)])]
            elif not self.fallback:
                out[i] = [(mention.text, [])]
        return out

    def state_to_bytes(self) -> bytes:
        """The rule table's text: a pipeline links the same way wherever it is loaded."""
        if self.rules is None:
            self.rules = VariantRules.from_file(self.rules_path)
        return self.rules.text.encode("utf8")

    def state_from_bytes(self, data: bytes) -> None:
        """Read a rule table saved with the pipeline."""
        self.rules = VariantRules(data.decode("utf8"), where="<saved variant rules>")

    def load_trained(self, path) -> None:
        """Nothing is trained: a rule table file may be given instead."""
        self.rules = VariantRules.from_file(path)
