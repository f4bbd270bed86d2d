"""The gene tie-break: which of several genes sharing a name a mention means.

A gene symbol is a name of many concepts: "NBS1" is NBN's previous symbol and, in the
corpora, a name of MRE11's complex and of the mouse and dog genes; "Stat3" is the human,
mouse and rat gene alike. All of them match the mention exactly, so the search ties them.
This stage orders the tied candidates (scores within `margin` of the best) by

1. the document's species: in a document whose words are about mice, rats or other
   animals more than about people (SPECIES_WORDS), a gene that is not human (no HGNC id:
   one the corpora added) comes before a human one, and the other way round elsewhere;
   among genes that are not human, one of the animal the document names most
   (ANIMAL_WORDS: "Bcl-2" is mouse 12043 and rat 24224 alike) comes first, each added
   gene's animal learned from the documents of the augmenting corpora that annotate it
   (learn_from_corpora; saved with the pipeline);
2. where the matching name comes from: a dictionary name (HGNC's symbol, alias or
   previous symbol) before a name that only corpus annotations gave;
3. how often the corpora annotated that name as that concept;

then the search's order. Scores are left as they are.

A mention whose abbreviation the linker resolved ("GM-CSF" read as "granulocyte-
macrophage colony-stimulating factor") is searched as written too (short_forms), and
its candidates are the better score of the two for each concept: a gene's symbol is
often in HGNC where the long form the paper spells out is not. The species rule is data (the word
lists below); HGNC tells human from not human only (it gives mouse and rat genes MGI and
RGD ids, not the NCBI Gene ids the corpora annotate), so an added gene's animal comes
from the corpora that annotate it.
"""
import json
import re
from collections import Counter, defaultdict
from typing import Dict, List, Optional, Sequence, Tuple

import numpy

from ...corpora.bioc import read_corpus
from ...corpora.types import gold_id_parts, is_of_types
from ...errors import BioLinkError, Errors
from ...kb.dictionary import SOURCE_ONTOLOGY
from . import Stage

# Each animal a document can be about, by its own words.
ANIMAL_WORDS = {
    "mouse": ("mouse", "mice", "murine"), "rat": ("rat", "rats"),
    "hamster": ("hamster", "hamsters"), "rabbit": ("rabbit", "rabbits"),
    "zebrafish": ("zebrafish",), "fly": ("drosophila",), "yeast": ("yeast", "cerevisiae"),
    "worm": ("elegans",), "plant": ("arabidopsis",), "cattle": ("bovine", "cattle"),
    "pig": ("porcine", "pig", "pigs"), "chicken": ("chicken",), "frog": ("xenopus",),
    "dog": ("dog", "dogs", "canine"), "sheep": ("sheep",),
    "monkey": ("monkey", "monkeys", "macaque"),
}
# Words that say which species a document is about, counted in its text: "other" is every
# animal's words and those that name no one animal ("rodent", "knockout").
SPECIES_WORDS = {
    "human": ("human", "humans", "patient", "patients", "man", "men", "woman", "women",
              "child", "children", "people", "individuals", "subjects", "families",
              "proband", "probands"),
    "other": tuple(word for words in ANIMAL_WORDS.values() for word in words)
    + ("rodent", "rodents", "knockout", "transgenic"),
}
_WORD = re.compile(r"[A-Za-z]+")
_KIND_OF_WORD = {word: kind for kind, words in SPECIES_WORDS.items() for word in words}
_ANIMAL_OF_WORD = {word: animal for animal, words in ANIMAL_WORDS.items() for word in words}
HUMAN_ID_PREFIX = "HGNC:"


def document_species(text: str) -> str:
    """"other" when `text` names mice, rats or other animals more often than people
    (SPECIES_WORDS), else "human"."""
    return document_context(text)[0]


def document_context(text: str) -> Tuple[str, Optional[str]]:
    """document_species(text), and the animal (ANIMAL_WORDS) its words name most: None
    when the document is about people, names no animal, or names two equally often."""
    counts = {"human": 0, "other": 0}
    animals: Counter = Counter()
    for word in _WORD.findall(text):
        lowered = word.lower()
        kind = _KIND_OF_WORD.get(lowered)
        if kind is not None:
            counts[kind] += 1
            animal = _ANIMAL_OF_WORD.get(lowered)
            if animal is not None:
                animals[animal] += 1
    if counts["other"] <= counts["human"]:
        return "human", None
    ranked = animals.most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return "other", None
    return "other", ranked[0][0]


def gene_animals(corpora, labels=(), exclude_pmids=frozenset()) -> Dict[str, str]:
    """Gene id -> the animal (ANIMAL_WORDS) of the documents of the PubTator / BioC
    `corpora` that annotate it, where more than half of those about an animal
    (document_context) are about that one; ids annotated only in documents about people
    are left out. labels: the mention types read (as the corpus writes them or as their
    six-type label), every type when empty; `exclude_pmids`: documents left out."""
    wanted = set(labels)
    votes: Dict[str, Counter] = defaultdict(Counter)
    for path in corpora:
        for document in read_corpus(path):
            if document.pmid in exclude_pmids:
                continue
            _, animal = document_context(document.text)
            if animal is None:
                continue
            ids = set()
            for mention in document.mentions:
                if wanted and not is_of_types(mention.type, wanted):
                    continue
                ids.update(i for part in gold_id_parts(mention.raw_ids, mention.type)
                           for i in part)
            for gene_id in ids:  # a document votes once for each gene it annotates
                votes[gene_id][animal] += 1
    out = {}
    for gene_id, counts in votes.items():
        animal, n = counts.most_common(1)[0]
        if 2 * n > sum(counts.values()):
            out[gene_id] = animal
    return out


class GeneContext(Stage):
    """The gene tie-break stage (module docstring); level "mentions", nothing trained."""

    level = "mentions"
    k = 0
    uses_query_vectors = False
    needs_training = False

    def __init__(self, margin: float = 1e-6, species: bool = True, name_sources: bool = True,
                 short_forms: bool = True, animals: bool = True):
        self.margin = margin
        self.short_forms = short_forms
        self.species = species
        self.name_sources = name_sources
        self.animals = animals
        # gene id -> its animal, learned from the augmenting corpora (gene_animals)
        self.gene_animals: Dict[str, str] = {}
        self._animal_of: Dict[int, Optional[str]] = {}
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
        self._animal_of = {}
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

    def _animal(self, concept: int) -> Optional[str]:
        """The animal learned for one of the ids of a gene that is not human, or None (a
        human gene's id annotated in documents about mice is still a human gene)."""
        if concept not in self._animal_of:
            ids = self._dictionary.concept_ids[concept].split("|")
            self._animal_of[concept] = None if self._human[concept] else next(
                (self.gene_animals[i] for i in ids if i in self.gene_animals), None)
        return self._animal_of[concept]

    def learn_from_corpora(self, linker, corpora, *, exclude_pmids=frozenset()) -> None:
        """Learn each gene's animal from the augmenting corpora (gene_animals), reading
        the mention types of the linker's `labels`."""
        self.gene_animals = gene_animals(corpora, linker.cfg.get("labels") or (),
                                         exclude_pmids)
        self._animal_of = {}

    def apply_to_mentions(self, linker, mentions: Sequence, links: Sequence) -> List:
        """Each part's tied best candidates re-ordered (module docstring)."""
        self._adopt(linker)
        context_of: Dict[int, Tuple[str, Optional[str]]] = {}
        out = []
        for mention, parts in zip(mentions, links):
            doc = mention.doc
            if doc is None:
                context = ("human", None)
            else:
                context = context_of.get(id(doc))
                if context is None:
                    context = context_of[id(doc)] = document_context(doc.text)
            if self.short_forms and len(parts) == 1:
                parts = [self._with_short_form(linker, mention, *parts[0])]
            out.append([(text, self._order(linker.query_key(text), candidates, context))
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

    def _order(self, key: str, candidates, context: Tuple[str, Optional[str]]):
        """The tied best of `candidates` re-ordered; context: the document's
        (species, animal), as document_context gives them."""
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
        want_human = context[0] == "human"
        animal = context[1] if self.species and self.animals else None

        def rank(item):
            position, (concept, _) = item
            from_file, count = names.get(concept, (False, 0))
            return (-(self.species and bool(self._human[concept]) == want_human),
                    -(animal is not None and self._animal(concept) == animal),
                    -(self.name_sources and from_file), -count, position)

        tied = [candidate for _, candidate in sorted(enumerate(candidates[:n_tied]), key=rank)]
        return tied + list(candidates[n_tied:])

    def state_to_bytes(self) -> bytes:
        """The genes' learned animals as JSON (nothing when none was learned: the other
        tables are read from the linker's dictionary)."""
        if not self.gene_animals:
            return b""
        return json.dumps({"gene_animals": self.gene_animals}, sort_keys=True).encode("utf8")

    def state_from_bytes(self, data: bytes) -> None:
        """Read what state_to_bytes wrote (nothing: no animals learned). A file that is
        not that raises BioLinkError E771."""
        self._animal_of = {}
        if not data:
            self.gene_animals = {}
            return
        try:
            animals = json.loads(data.decode("utf8"))["gene_animals"]
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as err:
            raise BioLinkError(Errors.E771.format(reason=f"{type(err).__name__}: {err}")) \
                from None
        if not isinstance(animals, dict) or not all(
                isinstance(k, str) and v in ANIMAL_WORDS for k, v in animals.items()):
            raise BioLinkError(Errors.E771.format(
                reason="gene_animals must map gene ids to animals of ANIMAL_WORDS"))
        self.gene_animals = animals

    def load_trained(self, path) -> None:
        """Nothing to read: the stage learns from the augmenting corpora, not a training."""

    def clear_cache(self) -> None:
        """Nothing: the tables are the dictionary's, rebuilt when the dictionary changes,
        not a memory of queries."""
