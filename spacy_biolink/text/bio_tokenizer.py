"""A tokenizer for biomedical text: spaCy's rules plus splits at brackets and hyphens.

spaCy's English tokenizer keeps "Ca(2+)", "(DOX)-induced", "[3H]GABA" and "STZ-" whole,
while BC5CDR and NCBI-disease annotate "Ca", "DOX", "GABA" and "STZ" inside them: a
mention that does not fall on token boundaries cannot be found by a token-level NER and
is widened (or dropped) when a corpus is converted. The rules here are spaCy's own
prefixes, suffixes and infixes (the language's defaults) with the biomedical splits
added, the way scispaCy's custom tokenizer extends spaCy's, and its special cases less
the emoticons made with a digit.
Which splits to add was chosen by the share of BC5CDR train + dev and NCBI-disease train
gold mentions that fall on token boundaries (benchmarks/exploration/tokenizer_alignment.py).
"""
import re
from typing import Any, Callable, Dict, List

from spacy.lang.char_classes import ALPHA, ALPHA_LOWER, ALPHA_UPPER, HYPHENS
from spacy.language import Language
from spacy.tokenizer import Tokenizer
from spacy.util import compile_infix_regex, compile_prefix_regex, compile_suffix_regex

# A bracket anywhere inside a token is its own token: chemical names nest them around
# charges, isotopes and abbreviations ("Ca(2+)", "[3H]GABA", "(GABA)A"), where mentions
# end or start.
BRACKET_INFIXES = [r"[()\[\]{}]"]
# A hyphen next to a bracket ("(DOX)-induced", "(bort)-dexamethasone") and a hyphen
# between a letter and a digit ("thallium-201", "dopamine-1", "encephalopathy--19");
# between two letters spaCy splits already.
HYPHEN_INFIXES = [r"(?<=[)\]}}])(?:{h})".format(h=HYPHENS),
                  r"(?:{h})(?=[(\[{{])".format(h=HYPHENS),
                  r"(?<=[{a}])(?:{h})(?=[0-9])".format(a=ALPHA, h=HYPHENS)]
# A '+' after a letter or a closing bracket: ion charges ("Na+", "Ca+2", "Na+/K+") and
# combinations ("GSPE+drug", "T+PCPA", "injection)+ritanserin").
_PLUS_AFTER_WORD = r"(?<=[{a})\]])\+".format(a=ALPHA)
PLUS_INFIXES = [_PLUS_AFTER_WORD]
# Every slash inside a token (spaCy splits it only before a letter): "Na+/K+",
# "Na(+)/H(+)", "5-HT/DA". URLs are matched whole before any infix applies.
SLASH_INFIXES = [r"/"]
# Comparisons inside a token ("lithium=0.85", "p<0.05"): spaCy splits them only before a
# letter.
COMPARISON_INFIXES = [r"(?<=[{a}0-9])[=<>](?=[0-9.])".format(a=ALPHA)]
# A word that ends in a hyphen ("STZ- and", "Dexamethasone- (Dex-)") is a word and a
# hyphen: the first half of a coordination whose second half carries the shared head.
# A word that ends in '+' ("Na+", "MDMA+ users") is a word and its charge. A period
# after a capital that ends a word of mixed case or stands alone ends the sentence
# ("vitamin D.", "hepatitis C.", "AmB.", "TdP."); spaCy keeps it, as in initials.
SUFFIXES = [r"(?<=[{a}0-9])(?:{h})".format(a=ALPHA, h=HYPHENS),
            _PLUS_AFTER_WORD,
            r"(?<=[{al}0-9][{au}])\.".format(al=ALPHA_LOWER, au=ALPHA_UPPER),
            r"(?<=^[{au}])\.".format(au=ALPHA_UPPER)]
# The same at the front ("-induced"): the head of such a coordination.
PREFIXES = [r"(?:{h})(?=[{a}])".format(a=ALPHA, h=HYPHENS)]

_DIGIT = re.compile(r"[0-9]")
_EMOTICON_PUNCT = re.compile(r"[()\[\]<>=:;_-]")


def bio_tokenizer_rules(nlp: Language):
    """(prefixes, suffixes, infixes): the language's default rules with the biomedical
    ones added (added ones first, so they win where both match)."""
    defaults = nlp.Defaults
    prefixes: List[str] = PREFIXES + list(defaults.prefixes or [])
    suffixes: List[str] = SUFFIXES + list(defaults.suffixes or [])
    infixes: List[str] = (BRACKET_INFIXES + HYPHEN_INFIXES + PLUS_INFIXES + SLASH_INFIXES
                          + COMPARISON_INFIXES
                          + list(defaults.infixes or []))
    return prefixes, suffixes, infixes


def bio_special_cases(nlp: Language) -> Dict[str, Any]:
    """The language's special cases less the emoticons made with a digit ("8)", "(-8",
    "8-)", "<3", ":1"): spaCy matches special cases again after splitting affixes, so
    "(CCK-8)" would come out "CCK", "-", "8)" and "(n = 8)" ends in "8)"."""
    return {text: tokens for text, tokens in nlp.Defaults.tokenizer_exceptions.items()
            if not (_DIGIT.search(text) and _EMOTICON_PUNCT.search(text))}


def make_bio_tokenizer(nlp: Language) -> Tokenizer:
    """spaCy's Tokenizer over `nlp`'s vocab with the language's special cases and URL
    match, and its prefix/suffix/infix rules extended by bio_tokenizer_rules."""
    prefixes, suffixes, infixes = bio_tokenizer_rules(nlp)
    defaults = nlp.Defaults
    return Tokenizer(
        nlp.vocab,
        rules=bio_special_cases(nlp),
        prefix_search=compile_prefix_regex(prefixes).search,
        suffix_search=compile_suffix_regex(suffixes).search,
        infix_finditer=compile_infix_regex(infixes).finditer,
        token_match=defaults.token_match,
        url_match=defaults.url_match,
    )


def create_bio_tokenizer() -> Callable[[Language], Tokenizer]:
    """The factory that `[nlp.tokenizer]` resolves to (see registry.py)."""
    return make_bio_tokenizer
