"""The text room's registered builders: the mention normalizer and the tokenizer."""
from typing import List

from spacy.util import registry

from .chemistry import DEFAULT_GROUPS
from .normalize import MentionNormalizer


@registry.misc("spacy-biolink.MentionNormalizer.v1")
def build_mention_normalizer(lowercase: bool = True, remove_punctuation: bool = True,
                             spelling_variants: bool = False, strip_plurals: bool = False
                             ) -> MentionNormalizer:
    """Folding applied to names and mentions alike; the spelling map comes with
    [initialize.components.bio_linker] spelling_map and is saved with the pipeline.
    spelling_variants and strip_plurals default to off so that a config written before
    they existed folds as it did; bio_linker's default config turns them on."""
    return MentionNormalizer(lowercase=lowercase, remove_punctuation=remove_punctuation,
                             spelling_variants=spelling_variants, strip_plurals=strip_plurals)


@registry.misc("spacy-biolink.GeneNormalizer.v1")
def build_gene_normalizer(lowercase: bool = True, remove_punctuation: bool = True,
                          spelling_variants: bool = False, strip_plurals: bool = False
                          ) -> MentionNormalizer:
    """MentionNormalizer.v1's folding after the gene-symbol rules of text/gene_names.py
    (IL-6 = IL6 = Il6, IL-1 beta = IL-1β = IL1B, TNF-alpha = TNFA, type IV = type 4),
    for the names and mentions of a gene linker."""
    return MentionNormalizer(lowercase=lowercase, remove_punctuation=remove_punctuation,
                             spelling_variants=spelling_variants, strip_plurals=strip_plurals,
                             gene_symbols=True)


@registry.misc("spacy-biolink.ChemicalNormalizer.v1")
def build_chemical_normalizer(lowercase: bool = True, remove_punctuation: bool = True,
                              spelling_variants: bool = True, strip_plurals: bool = False,
                              chemistry: List[str] = list(DEFAULT_GROUPS)
                              ) -> MentionNormalizer:
    """MentionNormalizer.v1's folding after the chemistry rule groups `chemistry` of
    text/chemistry.py (Zn2+ = zinc, Na = sodium, Arg = arginine, H2O2 = hydrogen peroxide,
    x hydrochloride = x, L-x = x, x-ic acid = x-ate), for the names and mentions of a
    chemical linker; the groups' forms are data/chemistry.txt."""
    return MentionNormalizer(lowercase=lowercase, remove_punctuation=remove_punctuation,
                             spelling_variants=spelling_variants, strip_plurals=strip_plurals,
                             chemistry=chemistry)


@registry.tokenizers("spacy-biolink.BioTokenizer.v1")
def build_bio_tokenizer():
    """Registered `spacy-biolink.BioTokenizer.v1` (`[nlp.tokenizer]`): spaCy's tokenizer
    with splits at brackets, hyphens, '+' and slashes inside chemical names
    (text/bio_tokenizer.py)."""
    from .bio_tokenizer import create_bio_tokenizer
    return create_bio_tokenizer()
