"""The text room's registered builders: the mention normalizer and the tokenizer."""
from spacy.util import registry

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


@registry.tokenizers("spacy-biolink.BioTokenizer.v1")
def build_bio_tokenizer():
    """Registered `spacy-biolink.BioTokenizer.v1` (`[nlp.tokenizer]`): spaCy's tokenizer
    with splits at brackets, hyphens, '+' and slashes inside chemical names
    (text/bio_tokenizer.py)."""
    from .bio_tokenizer import create_bio_tokenizer
    return create_bio_tokenizer()
