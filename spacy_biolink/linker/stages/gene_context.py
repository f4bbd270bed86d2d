"""The gene tie-break: which of several genes sharing a name a mention means.

A gene symbol is a name of many concepts: "NBS1" is NBN's previous symbol and, in the
corpora, a name of MRE11's complex and of the mouse and dog genes; "Stat3" is the human,
mouse and rat gene alike. All of them match the mention exactly, so the search ties them.
This stage orders the tied candidates (scores within `margin` of the best) by

1. the document's species: in a document whose words are about mice, rats or other
   animals more than about people (SPECIES_WORDS), a gene that is not human (no HGNC id:
   one the corpora added) comes before a human one, and the other way round elsewhere;
2. where the matching name comes from: a dictionary name (HGNC's symbol, alias or
   previous symbol) before a name that only corpus annotations gave;
3. how often the corpora annotated that name as that concept;

then the search's order. Scores are left as they are.

A mention whose abbreviation the linker resolved ("GM-CSF" read as "granulocyte-
macrophage colony-stimulating factor") is searched as written too (short_forms), and
its candidates are the better score of the two for each concept: a gene's symbol is
often in HGNC where the long form the paper spells out is not. The species rule is data (the word
lists below); the id space allows no more than human / not human, since HGNC gives mouse
and rat genes MGI and RGD ids, not the NCBI Gene ids the corpora annotate.
"""
import re
from typing import Dict, List, Optional, Sequence, Tuple

import numpy

from ...kb.dictionary import SOURCE_ONTOLOGY
from . import Stage

# Words that say which species a document is about, counted in its text.
SPECIES_WORDS = {
    "human": ("human", "humans", "patient", "patients", "man", "men", "woman", "women",
              "child", "children", "people", "individuals", "subjects", "families",
              "proband", "probands"),
    "other": ("mouse", "mice", "murine", "rat", "rats", "hamster", "hamsters", "rabbit",
              "rabbits", "zebrafish", "drosophila", "yeast", "cerevisiae", "elegans",
              "arabidopsis", "bovine", "porcine", "pig", "pigs", "chicken", "xenopus",
              "dog", "dogs", "canine", "sheep", "cattle", "monkey", "monkeys", "macaque",
              "rodent", "rodents", "knockout", "transgenic"),
}
_WORD = re.compile(r"[A-Za-z]+")
_KIND_OF_WORD = {word: kind for kind, words in SPECIES_WORDS.items() for word in words}
HUMAN_ID_PREFIX = "HGNC:"


def document_species(text: str) -> str:
    """"other" when `text` names mice, rats or other animals more often than people
    (SPECIES_WORDS), else "human"."""
    counts = {"human": 0, "other": 0}
    for word in _WORD.findall(text):
        kind = _KIND_OF_WORD.get(word.lower())
        if kind is not None:
            counts[kind] += 1
    return "other" if counts["other"] > counts["human"] else "human"


class GeneContext(Stage):
    """The gene tie-break stage (module docstring); level "mentions", nothing trained."""

    level = "mentions"
    k = 0
    uses_query_vectors = False
    needs_training = False

    def __init__(self, margin: float = 1e-6, species: bool = True, name_sources: bool = True,
                 short_forms: bool = True):
        self.margin = margin
        self.short_forms = short_forms
        self.species = species
        self.name_sources = name_sources
        # Built from the linker's dictionary on first use: which concepts are human, and
        # each concept's (name, concept) pairs, as positions into the dictionary's arrays;
        # a concept's names are folded when a tie first needs them.
        self._dictionary = None
        self._fold = None
        self._human: Optional[numpy.ndarray] = None
        self._pairs: Optional[Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]] = None
        self._names: Dict[int, List[Tuple[str, bool, int]]] = {}

    def _adopt(self, linker) -> None:
        dictionary = linker.dictionary
        if dictionary is self._dictionary and linker.normalizer.name == self._fold:
            return
        self._human = numpy.array([HUMAN_ID_PREFIX in ids for ids in dictionary.concept_ids],
                                  dtype=bool)
        indptr = dictionary.name_concepts_indptr
        owners = numpy.repeat(numpy.arange(dictionary.n_names), numpy.diff(indptr))
        by_concept = numpy.argsort(dictionary.name_concepts, kind="stable")
        concept_indptr = numpy.zeros(dictionary.n_concepts + 1, dtype=numpy.int64)
        numpy.cumsum(numpy.bincount(dictionary.name_concepts, minlength=dictionary.n_concepts),
                     out=concept_indptr[1:])
        self._pairs = (concept_indptr, by_concept, owners)
        self._names = {}
        self._fold = linker.normalizer.name
        self._dictionary = dictionary

    def _names_of(self, concept: int) -> List[Tuple[str, bool, int]]:
        """(folded name, from the dictionary file, corpus count) of each of the concept's
        names."""
        names = self._names.get(concept)
        if names is None:
            dictionary = self._dictionary
            concept_indptr, by_concept, owners = self._pairs
            pairs = by_concept[concept_indptr[concept]:concept_indptr[concept + 1]].tolist()
            names = self._names[concept] = [
                (self._fold(dictionary.names[int(owners[j])]),
                 bool(dictionary.name_concept_sources[j] & SOURCE_ONTOLOGY),
                 int(dictionary.name_concept_counts[j])) for j in pairs]
        return names

    def apply_to_mentions(self, linker, mentions: Sequence, links: Sequence) -> List:
        """Each part's tied best candidates re-ordered (module docstring)."""
        self._adopt(linker)
        species_of: Dict[int, str] = {}
        out = []
        for mention, parts in zip(mentions, links):
            doc = mention.doc
            if doc is None:
                species = "human"
            else:
                species = species_of.get(id(doc))
                if species is None:
                    species = species_of[id(doc)] = document_species(doc.text)
            if self.short_forms and len(parts) == 1:
                parts = [self._with_short_form(linker, mention, *parts[0])]
            out.append([(text, self._order(linker.query_key(text), candidates, species))
                        for text, candidates in parts])
        return out

    def _with_short_form(self, linker, mention, text: str, candidates):
        """(text, candidates) of a mention, merged with those of its own text when the
        linker searched another (its abbreviation's long form); the text that gave the
        best candidate is the one kept."""
        written = " ".join(mention.text.split())
        key = linker.query_key(written)
        if written == text or not key or key == linker.query_key(text):
            return text, candidates
        found = linker.link_texts([key], max(len(candidates), linker.cfg["k"]),
                                  label=mention.label)[key]
        best: Dict[int, float] = {}
        for concept, score in list(candidates) + list(found):
            if score > best.get(concept, float("-inf")):
                best[concept] = score
        merged = sorted(best.items(), key=lambda item: -item[1])[:len(candidates) or None]
        if found and (not candidates or found[0][1] > candidates[0][1]):
            text = written
        return text, merged

    def _order(self, key: str, candidates, species: str):
        if len(candidates) < 2:
            return candidates
        best = candidates[0][1]
        n_tied = 0
        while n_tied < len(candidates) and candidates[n_tied][1] >= best - self.margin:
            n_tied += 1
        if n_tied < 2:
            return candidates
        names: Dict[int, Tuple[bool, int]] = {}
        for concept, _ in candidates[:n_tied]:
            matches = [(from_file, count) for folded, from_file, count
                       in self._names_of(concept) if folded == key]
            names[concept] = (any(f for f, _ in matches), sum(n for _, n in matches))
        want_human = species == "human"

        def rank(item):
            position, (concept, _) = item
            from_file, count = names.get(concept, (False, 0))
            return (-(self.species and bool(self._human[concept]) == want_human),
                    -(self.name_sources and from_file), -count, position)

        tied = [candidate for _, candidate in sorted(enumerate(candidates[:n_tied]), key=rank)]
        return tied + list(candidates[n_tied:])

    def state_to_bytes(self) -> bytes:
        """Nothing: the stage's tables are read from the linker's dictionary."""
        return b""

    def state_from_bytes(self, data: bytes) -> None:
        """Nothing to read (state_to_bytes writes nothing)."""

    def load_trained(self, path) -> None:
        """Nothing to read: the stage is not trained."""

    def clear_cache(self) -> None:
        """Nothing: the tables are the dictionary's, rebuilt when the dictionary changes,
        not a memory of queries."""
