"""Gene-name folding: the spellings of one gene symbol made one.

Papers write a symbol many ways: IL6, IL-6, Il6, il-6, IL 6; TNF-alpha, TNFalpha, TNF-α,
TNFA; IL-1 beta, IL1beta, IL-1β, IL1B; collagen type IV, COL4. The rules below are data
(the tables) applied token by token, to dictionary names and mentions alike, before the
linker's ordinary folding (lowercase, punctuation): so they only have to be consistent,
and "IL-1 beta" and "IL1B" both become "il 1 b".

1. A Greek letter becomes the Latin letter gene symbols use for it (α -> a, β -> b,
   θ -> q as in PRKCQ, ζ -> z), as a word of its own.
2. A Greek letter's name glued after a capital or a digit (TNFalpha, IL1beta, HIF1alpha,
   PKCdelta) is split off; short names (mu, pi, xi, ...) only count as words of their own.
3. Punctuation splits words, and letters and digits are split apart: IL-6 -> IL 6,
   Cyp2e1 -> Cyp 2 e 1.
4. A word that is a Greek letter's name becomes that letter; a Roman numeral of two
   letters or more (II..XX) becomes its number (type IV -> type 4). I, V and X alone stay
   letters: in "factor X" and "vitamin D" they are letters.
5. Over the whole folded text (glue_symbol_parts): a number or a single letter is glued
   to the word before it, so every spelling meets in one form: "il 1 b" -> "il1b",
   "tnf a" -> "tnfa" (TNFA), "collagen type 4" -> "collagen type4".
"""
import re
from typing import Dict

# Greek letter -> the Latin letter HGNC symbols use for it (PRKCQ is PKC-theta, PRKCH
# PKC-eta, PRKCZ PKC-zeta).
GREEK_LETTERS: Dict[str, str] = {
    "alpha": "a", "beta": "b", "gamma": "g", "delta": "d", "epsilon": "e", "zeta": "z",
    "eta": "h", "theta": "q", "iota": "i", "kappa": "k", "lambda": "l", "mu": "m",
    "nu": "n", "omicron": "o", "pi": "p", "rho": "r", "sigma": "s", "tau": "t",
    "upsilon": "u", "phi": "f", "chi": "c", "psi": "y", "omega": "w",
}
GREEK_CHARACTERS: Dict[str, str] = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ζ": "zeta",
    "η": "eta", "θ": "theta", "ι": "iota", "κ": "kappa", "λ": "lambda", "μ": "mu",
    "µ": "mu", "ν": "nu", "ο": "omicron", "π": "pi", "ρ": "rho", "σ": "sigma", "ς": "sigma",
    "τ": "tau", "υ": "upsilon", "φ": "phi", "ϕ": "phi", "χ": "chi", "ψ": "psi",
    "ω": "omega", "Α": "alpha", "Β": "beta", "Γ": "gamma", "Δ": "delta", "Ε": "epsilon",
    "Κ": "kappa", "Λ": "lambda", "Σ": "sigma", "Ω": "omega",
}
# Names long enough to be split off when glued to a symbol (TNFalpha); the short ones
# (eta, mu, pi, ...) end too many ordinary words.
GLUED_GREEK = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "iota",
               "kappa", "lambda", "sigma", "omega", "upsilon", "omicron")
ROMAN_NUMERALS: Dict[str, str] = {
    "ii": "2", "iii": "3", "iv": "4", "vi": "6", "vii": "7", "viii": "8", "ix": "9",
    "xi": "11", "xii": "12", "xiii": "13", "xiv": "14", "xv": "15", "xvi": "16",
    "xvii": "17", "xviii": "18", "xix": "19", "xx": "20",
}

_GREEK_CHARACTER = re.compile("[" + "".join(GREEK_CHARACTERS) + "]")
# After a capital or a digit (TNFalpha, HIF1alpha), or starting a word before a capital
# or a digit (NF-kappaB); never before a lower-case letter (alphavirus, betaine).
_GLUED = re.compile(r"(?:(?<=(?-i:[A-Z0-9]))|(?<![^\s]))(" + "|".join(GLUED_GREEK)
                    + r")(?=(?-i:[A-Z0-9])|\s|$)", re.IGNORECASE)
_NOT_WORD = re.compile(r"[\W_]+")
_LETTER_DIGIT = re.compile(r"(?<=[^\W\d_])(?=\d)|(?<=\d)(?=[^\W\d_])")


def fold_gene_token(text: str) -> str:
    """One whitespace-separated token (or any text) with the gene rules applied: the
    words it becomes, space-separated, case kept (the linker's folding lowercases)."""
    text = _GREEK_CHARACTER.sub(lambda m: f" {GREEK_CHARACTERS[m.group()]} ", text)
    text = _GLUED.sub(r" \1 ", _NOT_WORD.sub(" ", text))
    text = _LETTER_DIGIT.sub(" ", text)
    words = []
    for word in text.split():
        lower = word.lower()
        words.append(ROMAN_NUMERALS.get(lower) or GREEK_LETTERS.get(lower) or word)
    return " ".join(words)


# A space before a word that is a number or a single letter (the word ends there).
_LONE_PART = re.compile(r" (?=(?:\d+|[^\W\d_])(?: |$))")


def glue_symbol_parts(folded: str) -> str:
    """`folded` (already lowercased and split by fold_gene_token) with each number and
    single letter glued to the word before it: "il 1 b" -> "il1b"."""
    return _LONE_PART.sub("", folded)
