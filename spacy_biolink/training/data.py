"""Training data for name encoders: dictionary synonyms and preprocessed corpus mentions."""
from dataclasses import dataclass, field
from typing import List, Optional, Sequence

from ..linker.augment import AugmentStats, gold_name_pairs
from ..kb.dictionary import ConceptDictionary
from ..errors import BioLinkError, Errors
from ..kb.readers import load_dictionary
from ..io.util import PathLike


@dataclass
class MentionPairs:
    """(text, concept index) pairs, text as bio_linker would query it (abbreviations
    spelled out, composites split; not yet case/punctuation folded)."""

    texts: List[str] = field(default_factory=list)
    concepts: List[int] = field(default_factory=list)
    stats: Optional[AugmentStats] = None

    def __len__(self) -> int:
        return len(self.texts)


def preprocessing_linker(resolve_abbreviations: bool = True, split_composites: bool = True):
    """The nlp and linker (LinkingPolicy) of a bio_linker used only for its mention
    preprocessing (never initialized)."""
    import spacy

    nlp = spacy.blank("en")
    linker = nlp.add_pipe("bio_linker", config={"resolve_abbreviations": resolve_abbreviations,
                                                "split_composites": split_composites})
    return nlp, linker.linker


def corpus_mention_pairs(dictionary: ConceptDictionary, corpora: Sequence[PathLike], *,
                         resolve_abbreviations: bool = True, split_composites: bool = True,
                         required: bool = True) -> MentionPairs:
    """The gold mentions of PubTator `corpora` paired with their dictionary concepts.

    Mentions without an id, with a combined `+` id or an id the dictionary lacks are left
    out (counted in .stats); `required` makes "nothing left" an error.
    """
    nlp, linker = preprocessing_linker(resolve_abbreviations, split_composites)
    pairs, stats = gold_name_pairs(dictionary, corpora, linker, nlp.make_doc)
    out = MentionPairs(stats=stats)
    for text, concept_id in pairs:
        c = dictionary.concept_index(concept_id)
        if c is None:
            stats.unknown_id += 1
        else:
            out.texts.append(text)
            out.concepts.append(c)
    stats.added = len(out)
    if required and not out.texts:
        raise BioLinkError(Errors.E504.format(path=", ".join(map(str, corpora)),
                                              stats=stats.summary()))
    return out


def dictionary_name_pairs(dictionary: ConceptDictionary) -> MentionPairs:
    """Every (name, concept) of the dictionary, names shared by concepts once per concept."""
    import numpy

    out = MentionPairs()
    owners = numpy.repeat(numpy.arange(dictionary.n_names), numpy.diff(dictionary.name_concepts_indptr))
    names = dictionary.names
    for n, c in zip(owners.tolist(), dictionary.name_concepts.tolist()):
        out.texts.append(names[n])
        out.concepts.append(c)
    return out


def read_dictionary(path: PathLike, format: Optional[str] = None) -> ConceptDictionary:
    """Load the dictionary at `path` (format sniffed when None), as the linker would."""
    return load_dictionary(path, format)
