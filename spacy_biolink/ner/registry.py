"""The NER helpers' registered builders: term patterns and gazetteer terms for
[initialize.components.*] blocks."""
from typing import Dict, List

from spacy.util import registry


@registry.misc("spacy-biolink.term_patterns.v1")
def build_term_patterns(paths: List[str], min_precision: float = 0.8, min_count: int = 2,
                        min_length: int = 3) -> List[Dict[str, str]]:
    """Registered `spacy-biolink.term_patterns.v1`: span_ruler patterns of the gold terms
    of training DocBins (`paths`: files or directories) that are annotated with their label
    in at least `min_precision` of their occurrences, at least `min_count` times
    (ner/term_patterns.py), e.g. for [initialize.components.term_ruler] patterns."""
    from .term_patterns import patterns_from_corpora

    return patterns_from_corpora(paths, min_precision=min_precision, min_count=min_count,
                                 min_length=min_length)


@registry.misc("spacy-biolink.read_term_patterns.v1")
def build_read_term_patterns(path: str) -> List[Dict]:
    """Registered `spacy-biolink.read_term_patterns.v1`: the span_ruler patterns of a JSONL
    file `ner-patterns` wrote, checked line by line (E764)."""
    from .term_patterns import read_term_patterns

    return read_term_patterns(path)


@registry.misc("spacy-biolink.gazetteer_terms.v1")
def build_gazetteer_terms(sources: Dict[str, Dict]) -> Dict[str, List[str]]:
    """Registered `spacy-biolink.gazetteer_terms.v1`: type -> names of the dictionaries in
    `sources` (type -> load_dictionary's arguments: path, format, filters such as
    mesh_branches), for [initialize.components.bio_gazetteer.terms] (ner/gazetteer.py)."""
    from .gazetteer import gazetteer_terms
    return gazetteer_terms(sources)
