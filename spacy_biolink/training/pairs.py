"""Corpus pairs for the verifier: mention-vs-name pairs from a PubTator corpus, and the
held-out NIL protocol. The dictionary pairs, split by concept, are in
evaluation/name_pairs.py.

Corpus pairs (corpus_training_pairs) are what the verifier judges when it runs in the
linker: a gold mention as the linker queries it (abbreviations spelled out, composites
split, case and punctuation folded) against a concept's name closest to it
(verify.best_name_finder). Positives pair the mention with its gold concept; hard
negatives ("corpus_wrong") with the wrong concepts a TF-IDF linker ranks highest;
"corpus_nil" pairs a mention that names no dictionary concept (`-1`, or an id the
dictionary lacks) with the linker's top candidate. Only train-split concepts take
part: the linker searches their train names alone, and mentions of dev or test
concepts are left out.

held_out_mentions is the NIL-detection protocol shared by the trainer (on dev) and
benchmarks/verifier_nil.py (on test): the corpus's gold concepts of one held-out split
are removed from the dictionary, and each mention is linked and labelled linkable,
removed, nil_gold or absent.
"""
import logging
import warnings
from dataclasses import dataclass, field
from typing import Collection, Dict, List, Optional, Sequence, Set, Tuple

import numpy

from ..evaluation.name_pairs import PairSet, concept_names_by_split
from ..io.util import PathLike
from ..kb.dictionary import Concept, ConceptDictionary

logger = logging.getLogger("spacy_biolink")

CORPUS_KINDS = ("corpus_positive", "corpus_wrong", "corpus_nil")
# What a corpus mention is once some concepts were removed from the dictionary.
MENTION_CATEGORIES = ("linkable", "removed", "nil_gold", "absent")


def tfidf_linker(dictionary: ConceptDictionary, augment: Sequence[PathLike] = (), **config):
    """An nlp whose bio_linker is the factory's default TF-IDF linker over `dictionary`
    (its default normalizer, not the trainers' folding), built with training/dev.py's
    in-memory builder; `augment`: PubTator corpora whose gold mentions join the
    dictionary. `config` overrides bio_linker settings."""
    import spacy
    from spacy.util import registry

    from .dev import build_linker

    defaults = spacy.blank("en").get_factory_meta("bio_linker").default_config
    encoder = registry.resolve({"model": dict(defaults["encoder"])})["model"]
    with warnings.catch_warnings():
        # Names shared by concepts (W001) are expected here and said once elsewhere.
        warnings.filterwarnings("ignore", message=".*W001")
        return build_linker(encoder, dictionary, augment=augment,
                            linker_config={"normalizer": dict(defaults["normalizer"]), **config})


def sub_dictionary(full: ConceptDictionary, concept_names: Dict[int, List[str]],
                   source: str) -> ConceptDictionary:
    """The concepts of `concept_names` (full-dictionary indices) with only those names."""
    return ConceptDictionary.from_concepts(
        (Concept(full.ids_of(c), names) for c, names in sorted(concept_names.items())),
        source=source)


@dataclass
class LinkedMentions:
    """Corpus mentions linked by a bio_linker: what the verifier sees for each.

    keys: the query each mention became (BioLinker.query_key of its resolved text);
    categories: one of MENTION_CATEGORIES; golds: the gold concepts (indices into
    `dictionary`, the linker's dictionary; empty for NIL); candidates: ranked
    (concept, score), best first.
    """

    dictionary: ConceptDictionary
    best_name_of: object
    keys: List[str] = field(default_factory=list)
    categories: List[str] = field(default_factory=list)
    golds: List[Set[int]] = field(default_factory=list)
    candidates: List[List[Tuple[int, float]]] = field(default_factory=list)
    skipped: Dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.keys)

    def top_pairs(self) -> List[Tuple[str, str]]:
        """(query, the top candidate's name closest to it); ("", "") without a candidate."""
        return [(key, self.best_name_of(c[0][0], key)) if c else ("", "")
                for key, c in zip(self.keys, self.candidates)]

    def top_scores(self) -> numpy.ndarray:
        """The top candidate's retrieval score, -1 without a candidate."""
        return numpy.asarray([c[0][1] if c else -1.0 for c in self.candidates], numpy.float32)

    def has_candidate(self) -> numpy.ndarray:
        """Per mention: True when the linker found at least one candidate."""
        return numpy.asarray([bool(c) for c in self.candidates], dtype=bool)

    def top_correct(self) -> numpy.ndarray:
        """Per mention: True when the top candidate is a gold concept."""
        return numpy.asarray([bool(c) and c[0][0] in gold
                              for c, gold in zip(self.candidates, self.golds)], dtype=bool)

    def category_mask(self, *categories: str) -> numpy.ndarray:
        """Per mention: True when its category is one of `categories`."""
        return numpy.isin(numpy.asarray(self.categories, dtype=object), list(categories))

    def counts(self) -> Dict[str, int]:
        """The number of mentions in each of MENTION_CATEGORIES (zero included)."""
        out = {c: 0 for c in MENTION_CATEGORIES}
        for category in self.categories:
            out[category] += 1
        return out


def link_corpus_mentions(nlp, full: ConceptDictionary, corpus: PathLike, *,
                         dropped: Collection[int] = (), types: Optional[Set[str]] = None,
                         k: int = 5, linker: Optional[str] = None) -> LinkedMentions:
    """Every single-part mention of the PubTator `corpus` (of `types`), linked by the
    bio_linker of `nlp` (initialized over some part of `full`): the one named `linker`,
    or the only one.

    A mention is nil_gold without an id, absent when none of its ids is in `full`,
    removed when its concept is not in the linker's dictionary, linkable otherwise.
    Mentions of `dropped` concepts (indices into `full`) and composites (`|` ids) are
    left out and counted in .skipped.
    """
    from ..linker.policy import Mention
    from ..corpora.pubtator import read_pubtator
    from ..kb.ids import split_gold_id_parts
    from ..linker.find import the_linker
    from ..linker.stages.verifier import best_name_finder

    linker = the_linker(nlp, linker, command="link_corpus_mentions")
    linked = linker.dictionary
    dropped = set(dropped)
    out = LinkedMentions(linked, best_name_finder(linked, linker.normalizer.mention),
                         skipped={"composite": 0, "dropped": 0})
    mentions = []
    for document in read_pubtator(corpus, types=types):
        doc = nlp.make_doc(document.text)
        for m in document.mentions:
            parts = split_gold_id_parts(m.raw_ids)
            if len(parts) > 1:
                out.skipped["composite"] += 1
                continue
            in_full = {c for c in map(full.concept_index, parts[0]) if c is not None}
            if in_full & dropped:
                out.skipped["dropped"] += 1
                continue
            golds = {c for c in (linked.concept_index(full.primary_id(f)) for f in in_full)
                     if c is not None}
            if not parts[0]:
                category = "nil_gold"
            elif not in_full:
                category = "absent"
            elif not golds:
                category = "removed"
            else:
                category = "linkable"
            out.categories.append(category)
            out.golds.append(golds)
            mentions.append(Mention(doc, m.start, m.end, m.text, m.type))
    for mention_links in linker.link(mentions, k=k):
        text, candidates = mention_links[0]  # the whole mention: composites stay whole
        out.keys.append(linker.linker.query_key(text))
        out.candidates.append(candidates)
    return out


def held_out_mentions(full: ConceptDictionary, corpus: PathLike, split: numpy.ndarray,
                      held_out: int, *, types: Optional[Set[str]] = None, k: int = 5,
                      removed: Optional[Collection[int]] = None,
                      augment: Sequence[PathLike] = (),
                      linker_config: Optional[Dict] = None) -> LinkedMentions:
    """The NIL-detection protocol: `corpus`'s gold concepts of split `held_out` (1 dev,
    2 test) are removed from `full` and every mention is linked by the TF-IDF linker
    over the rest (no composite splitting); mentions of concepts of a later split are
    dropped (on dev, the test concepts). `removed`: remove these concepts instead.
    `augment`: corpora whose gold mentions join the dictionary as names (of the
    concepts left in it: a removed concept gains none)."""
    from ..corpora.pubtator import read_pubtator
    from ..kb.ids import split_gold_id_parts

    dropped = {c for c in range(full.n_concepts) if split[c] > held_out}
    if removed is None:
        gold = {c for document in read_pubtator(corpus, types=types) for m in document.mentions
                for part in split_gold_id_parts(m.raw_ids) for c in map(full.concept_index, part)
                if c is not None}
        removed = {c for c in gold if split[c] == held_out}
    removed = set(removed)
    kept = {c: full.names_of(c) for c in range(full.n_concepts) if c not in removed}
    dictionary = sub_dictionary(full, kept, source=f"{full!r} minus {len(removed)} held out")
    nlp = tfidf_linker(dictionary, augment,
                       **{"split_composites": False, **(linker_config or {})})
    out = link_corpus_mentions(nlp, full, corpus, dropped=dropped, types=types, k=k)
    out.skipped["removed_concepts"] = len(removed)
    return out


def corpus_training_pairs(full: ConceptDictionary, corpus: PathLike, split: numpy.ndarray, *,
                          negatives: int = 3, k: int = 10, types: Optional[Set[str]] = None
                          ) -> Tuple[PairSet, Dict[str, int]]:
    """Mention-vs-name training pairs from the gold mentions of `corpus`, train-split
    concepts only (see the module docstring). Returns the pairs and what was left out."""
    from ..linker.find import the_linker
    from ..linker.policy import Mention
    from ..linker.stages.verifier import best_name_finder
    from .data import corpus_mention_pairs

    by_split = concept_names_by_split(full, split)
    train = sub_dictionary(full, by_split[0], source=f"{full!r}, train-split names")
    # corpus_mention_pairs has split composites already; the whole text is queried.
    nlp = tfidf_linker(train, split_composites=False)
    linker = the_linker(nlp)
    best_name_of = best_name_finder(train, linker.normalizer.mention)
    # A mention spelled like a dev or test name would put that name in a train pair.
    held_out_keys = {linker.linker.query_key(name) for s in (1, 2) for names in by_split[s].values()
                     for name in names}
    mentions = corpus_mention_pairs(full, [corpus])
    stats = {"mentions": len(mentions), "held_out_concept": 0, "held_out_name": 0,
             "no_key": 0}
    gold_of_key: Dict[str, Set[int]] = {}
    # One mention text per key, linked as written: linking folds it to the key itself.
    text_of_key: Dict[str, str] = {}
    for text, c in zip(mentions.texts, mentions.concepts):
        key = linker.linker.query_key(text)
        if not key:
            stats["no_key"] += 1
        elif split[c] != 0:
            stats["held_out_concept"] += 1
        elif key in held_out_keys:
            stats["held_out_name"] += 1
        else:
            gold = train.concept_index(full.primary_id(c))
            if gold is not None and train.names_of(gold):
                gold_of_key.setdefault(key, set()).add(gold)
                text_of_key.setdefault(key, text)
    keys = sorted(gold_of_key)
    found = {key: links[0][1] for key, links in
             zip(keys, linker.link([Mention.of_text(text_of_key[key]) for key in keys], k))}
    pairs = PairSet()
    for key in keys:
        golds = gold_of_key[key]
        gold_names = {name for g in golds for name in train.names_of(g)}
        for gold in sorted(golds):
            pairs.add(key, best_name_of(gold, key), 1, "corpus_positive")
        wrong = 0
        for concept, _ in found[key]:
            if wrong >= negatives:
                break
            name = best_name_of(concept, key)
            # A name the gold concept shares ("HD") is no negative.
            if concept not in golds and name not in gold_names:
                pairs.add(key, name, 0, "corpus_wrong")
                wrong += 1
    nil = link_corpus_mentions(nlp, full, corpus, types=types, k=1)
    nil_keys = set()
    for key, category, candidates in zip(nil.keys, nil.categories, nil.candidates):
        if category not in ("nil_gold", "absent") or not key or not candidates:
            continue
        if key in held_out_keys:
            stats["held_out_name"] += 1
        elif key not in nil_keys and key not in gold_of_key:
            nil_keys.add(key)
            pairs.add(key, best_name_of(candidates[0][0], key), 0, "corpus_nil")
    stats.update(pairs.counts())
    logger.info("corpus pairs from %s: %s", corpus, stats)
    return pairs, stats
