"""Synonym / non-synonym name pairs from a dictionary, split by concept.

Seed 004's data split per pair, so one name could sit in train and test pairs at once and
the test measured memory. Here whole concepts go to train, dev or test, and a name that
several concepts share belongs to the latest split among them (test > dev > train) and
is dropped from the others: no name of a dev or test pair occurs in a train pair.

Negatives come in three kinds, for each anchor name:
- "jaccard": the most lexically similar name of another concept (character-trigram
  TF-IDF cosine, a smoothed Jaccard, searched with the linker's SparseIndex);
- "similar": a random one of the next most similar names of other concepts;
- "random": a random name of another concept.
All three are drawn within the anchor's own split.

The verifier trainer (training/siamese.py) learns on the train pairs; the dev and test
pairs score it, then and later (evaluation/pair_scores.py, rebuilt from the seed and
settings in its meta.json).
"""
import logging
import random
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Sequence, Tuple

import numpy

from ..errors import BioLinkError, Errors
from ..kb.dictionary import ConceptDictionary

logger = logging.getLogger("spacy_biolink")

SPLITS = ("train", "dev", "test")
NEGATIVE_KINDS = ("jaccard", "similar", "random")


@dataclass
class PairSet:
    """Name pairs with labels (1 synonym, 0 not) and where each came from
    ("positive" or one of NEGATIVE_KINDS)."""

    left: List[str] = field(default_factory=list)
    right: List[str] = field(default_factory=list)
    labels: List[int] = field(default_factory=list)
    kinds: List[str] = field(default_factory=list)

    def add(self, left: str, right: str, label: int, kind: str) -> None:
        """Add one (left, right) name pair with its label (1 same concept, 0 not) and kind."""
        self.left.append(left)
        self.right.append(right)
        self.labels.append(label)
        self.kinds.append(kind)

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def pairs(self) -> List[Tuple[str, str]]:
        """The (left, right) name pairs, in order."""
        return list(zip(self.left, self.right))

    def label_array(self) -> numpy.ndarray:
        """The labels as a float32 array, for the loss."""
        return numpy.asarray(self.labels, dtype=numpy.float32)

    def extend(self, other: "PairSet") -> None:
        """Add all pairs of `other` to this set."""
        for args in zip(other.left, other.right, other.labels, other.kinds):
            self.add(*args)

    def names(self) -> set:
        """Every distinct name in the pairs, either side."""
        return set(self.left) | set(self.right)

    def counts(self) -> Dict[str, int]:
        """The number of pairs of each kind."""
        out: Dict[str, int] = {}
        for kind in self.kinds:
            out[kind] = out.get(kind, 0) + 1
        return out

    def batches(self, batch_size: int, rng: random.Random) -> Iterator[List[int]]:
        """Pair indices in shuffled batches of `batch_size` (the last may be smaller)."""
        order = list(range(len(self)))
        rng.shuffle(order)
        for i in range(0, len(order), batch_size):
            yield order[i:i + batch_size]


def split_concepts(n_concepts: int, fractions: Sequence[float], seed: int) -> numpy.ndarray:
    """Split id (0 train, 1 dev, 2 test) of each concept; `fractions` = (dev, test)."""
    dev, test = fractions
    if not (0 <= dev < 1 and 0 <= test < 1 and dev + test < 1):
        raise BioLinkError(Errors.E701.format(value=list(fractions)))
    order = numpy.random.RandomState(seed).permutation(n_concepts)
    split = numpy.zeros(n_concepts, dtype=numpy.int8)
    n_test = int(round(test * n_concepts))
    n_dev = int(round(dev * n_concepts))
    split[order[:n_test]] = 2
    split[order[n_test:n_test + n_dev]] = 1
    return split


def concept_names_by_split(dictionary: ConceptDictionary, split: numpy.ndarray
                           ) -> List[Dict[int, List[str]]]:
    """For each split, concept -> its distinct names, each name kept only in the latest
    split that holds it."""
    owner_split: Dict[str, int] = {}
    for c in range(dictionary.n_concepts):
        for name in dictionary.names_of(c):
            owner_split[name] = max(owner_split.get(name, 0), int(split[c]))
    out: List[Dict[int, List[str]]] = [{} for _ in SPLITS]
    for c in range(dictionary.n_concepts):
        s = int(split[c])
        names = list(dict.fromkeys(n for n in dictionary.names_of(c) if owner_split[n] == s))
        if names:
            out[s][c] = names
    return out


def make_pairs(concept_names: Dict[int, List[str]], *, max_positives_per_concept: int = 10,
               negatives_per_kind: int = 1, n_similar: int = 20, seed: int = 0) -> PairSet:
    """Positive pairs within each concept and, for each positive pair's anchor,
    `negatives_per_kind` negatives of each NEGATIVE_KINDS kind."""
    from ..encoders.tfidf import CharNgramTfidf
    from ..index import SparseIndex

    rng = random.Random(seed)
    names: List[str] = []
    owner: List[int] = []
    for c, concept_names_ in concept_names.items():
        names.extend(concept_names_)
        owner.extend([c] * len(concept_names_))
    pairs = PairSet()
    if len(set(owner)) < 2:
        return pairs
    anchors: List[Tuple[int, int]] = []  # (name row, positive partner row)
    start = 0
    for c, concept_names_ in concept_names.items():
        rows = list(range(start, start + len(concept_names_)))
        start += len(concept_names_)
        candidates = [(a, b) for i, a in enumerate(rows) for b in rows[i + 1:]]
        if len(candidates) > max_positives_per_concept:
            candidates = rng.sample(candidates, max_positives_per_concept)
        anchors.extend(candidates)
    if not anchors:
        return pairs
    anchor_rows = sorted({row for pair in anchors for row in pair})
    tfidf = CharNgramTfidf(analyzer="char_wb", ngram_range=(3, 3)).fit(names)
    index = SparseIndex()
    index.build(tfidf.transform(names))
    _, found = index.search(tfidf.transform([names[a] for a in anchor_rows]), n_similar + 8)
    similar: Dict[int, List[int]] = {}
    for a, ids in zip(anchor_rows, found.tolist()):
        similar[a] = [j for j in ids if j >= 0 and owner[j] != owner[a] and names[j] != names[a]]
    for a, b in anchors:
        if rng.random() < 0.5:
            a, b = b, a
        pairs.add(names[a], names[b], 1, "positive")
        near = similar[a]
        for _ in range(negatives_per_kind):
            if near:
                pairs.add(names[a], names[near[0]], 0, "jaccard")
            if len(near) > 1:
                pairs.add(names[a], names[rng.choice(near[1:n_similar])], 0, "similar")
            while True:
                j = rng.randrange(len(names))
                if owner[j] != owner[a]:
                    break
            pairs.add(names[a], names[j], 0, "random")
    return pairs


def dictionary_pairs(dictionary: ConceptDictionary, *, fractions: Sequence[float] = (0.1, 0.1),
                     seed: int = 0, **settings) -> Dict[str, PairSet]:
    """{"train", "dev", "test"} pair sets from disjoint concept splits."""
    split = split_concepts(dictionary.n_concepts, fractions, seed)
    by_split = concept_names_by_split(dictionary, split)
    out = {}
    for s, name in enumerate(SPLITS):
        out[name] = make_pairs(by_split[s], seed=seed + s, **settings)
        logger.info("%s pairs: %d concepts, %s", name, len(by_split[s]), out[name].counts())
    return out
