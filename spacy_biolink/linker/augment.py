"""Dictionary augmentation: gold corpus mentions become names of their concepts.

BioSyn and Triplet-Search both merge the training mentions into the dictionary before
evaluating (train+dev for test, train for dev): a test mention seen in training then
matches exactly. The mentions go through the linker's own abbreviation resolution and
composite splitting, so what is added is what a query will look like.
"""
import warnings
from collections import defaultdict
from dataclasses import dataclass
from itertools import permutations
from typing import AbstractSet, Callable, Dict, List, Optional, Sequence, Set, Tuple

from spacy.tokens import Doc

from ..corpora.bioc import read_corpus
from ..errors import Warnings
from ..kb.dictionary import ConceptDictionary
from ..corpora.types import gold_id_parts, is_of_types, six_type_label
from ..text.composites import split_composite
from ..io.util import PathLike


@dataclass
class AugmentStats:
    mentions: int = 0
    added: int = 0
    no_id: int = 0
    # `D1+D2`: a name for several concepts at once is a synonym of none of them.
    combined: int = 0
    # A composite that does not split into one part per id, or whose parts cannot be
    # told apart by the names of its concepts, cannot say which part is which.
    composite_mismatch: int = 0
    unknown_id: int = 0
    # Unknown ids made concepts of their own (new_concept_types).
    new_concepts: int = 0
    # Unknown ids of new_concept_types made alternative ids of a concept whose name their
    # mentions give (an id the vocabulary has since replaced).
    renamed_ids: int = 0
    # Mentions of a type the linker's `labels` leave to another linker: a species' 9606
    # must not become a name of gene 9606.
    other_labels: int = 0
    # Documents left out because their PMID is held out (a dev or test document that
    # another corpus also holds: BioRED shares abstracts with BC5CDR, NCBI and tmVar3).
    held_out_documents: int = 0

    def summary(self) -> str:
        """One sentence for the log: names added and the mentions skipped, by reason."""
        return (f"augmented the dictionary with {self.added} names from {self.mentions} "
                f"corpus mentions (skipped: {self.no_id} without an id, {self.combined} "
                f"combined `+` ids, {self.composite_mismatch} composites that do not split "
                f"into one part per id, {self.unknown_id} with an id not in the dictionary)"
                + (f"; {self.new_concepts} ids the dictionary lacks became concepts"
                   if self.new_concepts else "")
                + (f"; {self.renamed_ids} ids the dictionary lacks became alternative ids "
                   f"of the concept their mentions name" if self.renamed_ids else "")
                + (f"; {self.other_labels} mentions of types outside the linker's labels "
                   f"left out" if self.other_labels else "")
                + (f"; {self.held_out_documents} held-out documents left out"
                   if self.held_out_documents else ""))


def augment_dictionary(dictionary: ConceptDictionary, corpora: Sequence[PathLike], linker,
                       make_doc: Callable[[str], Doc], *, short_forms: bool = True,
                       new_concept_types: Sequence[str] = (), replaced_ids: bool = False,
                       exclude_pmids: AbstractSet[str] = frozenset()
                       ) -> Tuple[ConceptDictionary, AugmentStats]:
    """`dictionary` with the gold mentions of PubTator `corpora` added as names.

    linker: the BioLinker whose preprocessing (abbreviations, composite splitting) the
        mentions go through.
    short_forms: also add a mention's own text when abbreviation resolution changed it.
        A short form used in a later document without its definition ("HTN", "MI") then
        still has a name to match; one defined there is resolved before it is searched.
    new_concept_types: corpus mention types (PubTator's type column, e.g. "Chemical")
        whose ids the dictionary lacks become concepts of their own, named by their
        mentions, instead of being skipped. A vocabulary newer than the corpus has merged
        or retired some of its ids; the annotations still use them, and a test mention
        annotated like a training one can then be linked to them. Only these types:
        a disease id must not become a concept of a chemical linker.
    replaced_ids: with new_concept_types, an unknown id whose mentions (case and spacing
        aside) are names of one concept of the dictionary, and of no other, becomes an
        alternative id of that concept instead: the vocabulary replaced it (MeSH made the
        supplementary record C059262 "cidofovir" the descriptor D000077404), so a link
        reports the current id and a gold annotation with the old one still counts as
        that concept. Not for genes: a mouse gene named like a human one is another gene.
    exclude_pmids: documents of `corpora` with these PMIDs are left out: the dev and
        test documents a linker will be measured on, where another corpus holds them too.
    """
    triples, stats = gold_name_triples(dictionary, corpora, linker, make_doc,
                                       short_forms=short_forms, exclude_pmids=exclude_pmids)
    pairs = [(name, concept_id) for name, concept_id, _ in triples]
    # A type is named as the corpus writes it (GeneOrGeneProduct) or as its label (Gene).
    new_types = set(new_concept_types)
    seen = {name for _, _, mention_type in triples
            for name in (mention_type, six_type_label(mention_type)) if name}
    if new_types - seen:
        warnings.warn(Warnings.W021.format(missing=sorted(new_types - seen),
                                           seen=sorted(seen) or "none"))
    unknown_ids = {concept_id for _, concept_id, mention_type in triples
                   if is_of_types(mention_type, new_types)
                   and dictionary.concept_index(concept_id) is None}
    renamed = (replacements(dictionary, [(name, concept_id) for name, concept_id in pairs
                                         if concept_id in unknown_ids])
               if replaced_ids else {})
    new_ids = unknown_ids - renamed.keys()
    augmented, unknown = dictionary.with_names(pairs, source="<augmented dictionary>",
                                               new_concept_ids=new_ids, alternative_ids=renamed)
    stats.unknown_id = len(unknown)
    stats.added = len(pairs) - len(unknown)
    stats.new_concepts = len(new_ids)
    stats.renamed_ids = len(renamed)
    return augmented, stats


def replacements(dictionary: ConceptDictionary, pairs: Sequence[Tuple[str, str]]
                 ) -> Dict[str, str]:
    """unknown id -> the primary id of the one concept whose names hold its mentions'
    (name, unknown id) `pairs`, compared without case or extra spaces; ids whose
    mentions name no concept, or several, are left out."""
    wanted: Dict[str, Set[str]] = defaultdict(set)
    for name, concept_id in pairs:
        wanted[_fold_case(name)].add(concept_id)
    if not wanted:
        return {}
    owners: Dict[str, Set[int]] = defaultdict(set)
    for n, name in enumerate(dictionary.names):
        for concept_id in wanted.get(_fold_case(name), ()):
            owners[concept_id].update(dictionary.concepts_of_name(n).tolist())
    return {concept_id: dictionary.primary_id(next(iter(concepts)))
            for concept_id, concepts in owners.items() if len(concepts) == 1}


def _fold_case(name: str) -> str:
    return " ".join(name.lower().split())


def gold_name_pairs(dictionary: ConceptDictionary, corpora: Sequence[PathLike], linker,
                    make_doc: Callable[[str], Doc], *, short_forms: bool = False
                    ) -> Tuple[List[Tuple[str, str]], AugmentStats]:
    """(mention text as the linker would query it, gold id) for every gold mention of
    `corpora` that names one concept; composites contribute one pair per part.
    short_forms: also (the mention's own text, id) where abbreviation resolution changed
    the text of a mention with one id.

    This is both the augmentation and the training data of the trainable encoders.
    """
    triples, stats = gold_name_triples(dictionary, corpora, linker, make_doc,
                                       short_forms=short_forms)
    return [(name, concept_id) for name, concept_id, _ in triples], stats


def gold_name_triples(dictionary: ConceptDictionary, corpora: Sequence[PathLike], linker,
                      make_doc: Callable[[str], Doc], *, short_forms: bool = False,
                      exclude_pmids: AbstractSet[str] = frozenset()
                      ) -> Tuple[List[Tuple[str, str, str]], AugmentStats]:
    """gold_name_pairs' pairs, each with the corpus type of the mention it came from
    (name, id, type); the documents whose PMID is in `exclude_pmids` are left out."""
    from .policy import Mention

    stats = AugmentStats()
    pairs: List[Tuple[str, str, str]] = []
    labels = set(linker.cfg.get("labels") or ())
    for path in corpora:
        for document in read_corpus(path):  # PubTator or BioC
            if document.pmid in exclude_pmids:
                stats.held_out_documents += 1
                continue
            doc = make_doc(document.text)
            mentions = [Mention(doc, m.start, m.end, m.text) for m in document.mentions]
            for gold, text in zip(document.mentions, linker.resolved_texts(mentions)):
                stats.mentions += 1
                if labels and not is_of_types(gold.type, labels):
                    stats.other_labels += 1
                    continue
                id_parts = gold_id_parts(gold.raw_ids, gold.type)
                if not any(id_parts):
                    stats.no_id += 1
                    continue
                names = [text]
                if short_forms and len(id_parts) == 1 and len(id_parts[0]) == 1:
                    raw = " ".join(gold.text.split())
                    if raw != text:
                        pairs.append((raw, id_parts[0][0], gold.type))
                if len(id_parts) > 1:
                    names = split_composite(text) if linker.cfg["split_composites"] else []
                    order = align_parts(names, id_parts, dictionary, linker.normalizer.name)
                    if order is None:
                        stats.composite_mismatch += 1
                        continue
                    id_parts = [id_parts[i] for i in order]
                for name, ids in zip(names, id_parts):
                    if len(ids) == 1:
                        pairs.append((name, ids[0], gold.type))
                    elif ids:
                        stats.combined += 1
    return pairs, stats


# Beyond this many parts, trying every pairing costs more than the few names are worth.
MAX_PARTS_TO_ALIGN = 6


def align_parts(parts: List[str], id_parts: List[List[str]], dictionary: ConceptDictionary,
                fold: Callable[[str], str]) -> Optional[List[int]]:
    """Which id part each text part names, as an order of id_parts; None when unclear.

    The corpora do not always list a composite's ids in text order ("ovarian and breast
    cancer" may carry D001943|D010051), so each part goes to the concept whose names share
    most words with it; a tie between two pairings means the names cannot tell.
    """
    if len(parts) != len(id_parts) or len(parts) > MAX_PARTS_TO_ALIGN:
        return None
    concept_names = [_concept_word_sets(ids, dictionary, fold) for ids in id_parts]
    overlap = [[max((_jaccard(set(fold(part).split()), words) for words in names), default=0.0)
                for names in concept_names] for part in parts]
    scored = sorted(((sum(overlap[p][i] for p, i in enumerate(order)), order)
                     for order in permutations(range(len(parts)))), reverse=True)
    if len(scored) > 1 and scored[0][0] == scored[1][0]:
        return None
    return list(scored[0][1])


def _concept_word_sets(ids: List[str], dictionary: ConceptDictionary,
                       fold: Callable[[str], str]) -> List[Set[str]]:
    concepts = {c for c in (dictionary.concept_index(i) for i in ids) if c is not None}
    return [set(fold(name).split()) for c in sorted(concepts) for name in dictionary.names_of(c)]


def _jaccard(a: Set[str], b: Set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0
