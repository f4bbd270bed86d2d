"""Synonym retrieval and concept mapping with the protocol of Fivez et al. (2021).

The dictionary's (name, concept) items are split, as a function of a seed alone:
1. `zero_shot_concepts` concepts are drawn at random: none of their names is trained on.
2. From the remaining (training) concepts, `test_rounds` times: one random name of each
   concept that still has at least two training names becomes a test name (so no
   training concept is left empty); then `validation_rounds` times the same for
   validation names (the trainer's stopping criterion). The rest are training names.

Each query name ranks a candidate set by cosine of the encodings:
- test / validation / train: all training names (a train query leaves itself out);
- zero-shot: all zero-shot names, the query itself left out.
Metrics per query set: mAP over all of the query concept's candidate names, Acc (the top
candidate names the query's concept) and MRR of the first such candidate. Ties are
broken against the query (an unrelated candidate scoring the same ranks first).

Names are folded as bio_linker folds them (lowercase, punctuation -> space), folded
duplicates within a concept are merged, and names that fold to the same text in two
concepts are left out (as in the paper): they have no single right answer.
"""
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

import numpy
from scipy import sparse

from ..kb.dictionary import ConceptDictionary
from ..errors import BioLinkError, Errors
from ..io.files import atomic_file, read_json
from ..io.util import PathLike

ROLES = ("train", "validation", "test", "zero_shot")
TRAIN, VALIDATION, TEST, ZERO_SHOT = range(4)
# A trained encoder's split, in its directory, where `eval-synonyms` looks for it
SPLIT_FILE = "split.json"

Encode = Callable[[List[str]], numpy.ndarray]


@dataclass
class SynonymSplit:
    """Items (folded name, concept index) and the role of each (TRAIN ... ZERO_SHOT)."""

    texts: List[str]
    concepts: numpy.ndarray
    roles: numpy.ndarray
    concept_ids: List[str]
    settings: Dict = field(default_factory=dict)
    stats: Dict = field(default_factory=dict)

    def indices(self, role: int) -> numpy.ndarray:
        """The positions of the names in `role` (TRAIN, VALIDATION, TEST or ZERO_SHOT)."""
        return numpy.flatnonzero(self.roles == role)

    def texts_of(self, role: int) -> List[str]:
        """The names in `role`, in split order."""
        return [self.texts[i] for i in self.indices(role)]

    @property
    def fingerprint(self) -> str:
        """A short hash of the items and their roles: equal splits, equal fingerprints."""
        digest = hashlib.sha1()
        for text, concept, role in zip(self.texts, self.concepts.tolist(), self.roles.tolist()):
            digest.update(f"{text}\t{self.concept_ids[concept]}\t{role}\n".encode("utf8"))
        return digest.hexdigest()[:16]

    def describe(self) -> Dict:
        """A JSON-ready summary: settings, fingerprint, names per role, concept counts and stats."""
        counts = {role: int((self.roles == i).sum()) for i, role in enumerate(ROLES)}
        return {**self.settings, "fingerprint": self.fingerprint, "names": counts,
                "zero_shot_concepts": int(len(numpy.unique(self.concepts[self.roles == ZERO_SHOT]))),
                "training_concepts": int(len(numpy.unique(self.concepts[self.roles != ZERO_SHOT]))),
                **self.stats}

    def to_disk(self, path: PathLike) -> None:
        """JSON: the settings and, per item, [name, concept id, role]."""
        items = [[t, self.concept_ids[c], ROLES[r]]
                 for t, c, r in zip(self.texts, self.concepts.tolist(), self.roles.tolist())]
        with atomic_file(path) as fileh:
            json.dump({"settings": self.settings, "stats": self.stats,
                       "fingerprint": self.fingerprint, "items": items}, fileh)

    @classmethod
    def from_disk(cls, path: PathLike) -> "SynonymSplit":
        """Load a split saved as split.json; a missing or malformed file raises BioLinkError."""
        path = Path(path)
        try:
            data = read_json(path, "Synonym split", expected="a split.json object", type=dict)
            items = data["items"]
            ids = sorted({item[1] for item in items})
            id_index = {cid: i for i, cid in enumerate(ids)}
            return cls(texts=[item[0] for item in items],
                       concepts=numpy.array([id_index[item[1]] for item in items], numpy.int64),
                       roles=numpy.array([ROLES.index(item[2]) for item in items], numpy.int8),
                       concept_ids=ids, settings=data.get("settings", {}),
                       stats=data.get("stats", {}))
        except (OSError, ValueError, KeyError, IndexError, TypeError) as err:
            raise BioLinkError(Errors.E627.format(path=path, reason=err)) from None


def retrieval_items(dictionary: ConceptDictionary, fold: Optional[Callable[[str], str]] = None):
    """(texts, concepts, stats): the unique folded names of each concept, names whose
    folded text belongs to two or more concepts left out."""
    if fold is None:
        from ..text.normalize import MentionNormalizer

        fold = MentionNormalizer().name
    owners: Dict[str, set] = {}
    indptr, name_concepts, names = (dictionary.name_concepts_indptr, dictionary.name_concepts,
                                    dictionary.names)
    for n in range(dictionary.n_names):
        text = " ".join(fold(names[n]).split())
        if text:
            owners.setdefault(text, set()).update(name_concepts[indptr[n]:indptr[n + 1]].tolist())
    texts, concepts = [], []
    ambiguous = 0
    for text, cs in owners.items():
        if len(cs) > 1:
            ambiguous += 1
            continue
        texts.append(text)
        concepts.append(next(iter(cs)))
    order = sorted(range(len(texts)), key=lambda i: (concepts[i], texts[i]))
    return ([texts[i] for i in order], numpy.array([concepts[i] for i in order], numpy.int64),
            {"ambiguous_names_left_out": ambiguous})


def make_split(dictionary: ConceptDictionary, *, seed: int = 1, zero_shot_concepts: float = 1000,
               test_rounds: int = 1, validation_rounds: int = 1,
               fold: Optional[Callable[[str], str]] = None) -> SynonymSplit:
    """The split described at the top of this module, a function of the dictionary and
    the settings alone. zero_shot_concepts: a count, or a share when below 1."""
    texts, concepts, stats = retrieval_items(dictionary, fold)
    concept_ids = [dictionary.primary_id(c) for c in range(dictionary.n_concepts)]
    rng = numpy.random.default_rng(seed)
    present = numpy.unique(concepts)
    n_zero = int(round(zero_shot_concepts * len(present))) if 0 < zero_shot_concepts < 1 \
        else int(zero_shot_concepts)
    if not 0 <= n_zero < len(present):
        raise BioLinkError(Errors.E628.format(value=zero_shot_concepts, n=len(present)))
    zero_shot = set(rng.choice(present, size=n_zero, replace=False).tolist()) if n_zero else set()
    roles = numpy.full(len(texts), TRAIN, numpy.int8)
    roles[numpy.isin(concepts, list(zero_shot))] = ZERO_SHOT
    by_concept: Dict[int, List[int]] = {}
    for i, c in enumerate(concepts.tolist()):
        if c not in zero_shot:
            by_concept.setdefault(c, []).append(i)
    for role, rounds in ((TEST, test_rounds), (VALIDATION, validation_rounds)):
        for _ in range(rounds):
            for c in sorted(by_concept):
                remaining = by_concept[c]
                if len(remaining) >= 2:
                    roles[remaining.pop(int(rng.integers(len(remaining))))] = role
    settings = {"seed": seed, "zero_shot_concepts": zero_shot_concepts,
                "test_rounds": test_rounds, "validation_rounds": validation_rounds}
    return SynonymSplit(texts, concepts, roles, concept_ids, settings, stats)


# Ranking ----------------------------------------------------------------------

def ranking_metrics(queries: numpy.ndarray, query_concepts: numpy.ndarray,
                    candidates: numpy.ndarray, candidate_concepts: numpy.ndarray, *,
                    query_candidate: Optional[numpy.ndarray] = None,
                    chunk_size: int = 512) -> Dict:
    """mAP, Acc and MRR of ranking `candidates` for each query by inner product
    (float arrays or CSR rows, e.g. TF-IDF or hybrid encodings).

    query_candidate: for each query, the candidate row that is the query itself (left
        out of its ranking), or -1. A query with no other candidate of its concept is
        skipped (counted in "skipped").
    """
    if not sparse.issparse(queries):
        queries = numpy.asarray(queries, numpy.float32)
    if not sparse.issparse(candidates):
        candidates = numpy.asarray(candidates, numpy.float32)
    members: Dict[int, numpy.ndarray] = {}
    order = numpy.argsort(candidate_concepts, kind="stable")
    bounds = numpy.flatnonzero(numpy.diff(candidate_concepts[order])) + 1
    for group in numpy.split(order, bounds):
        if len(group):
            members[int(candidate_concepts[group[0]])] = group
    average_precisions, hits, reciprocal_ranks = [], [], []
    skipped = 0
    n_queries = queries.shape[0]  # len() of a scipy sparse matrix raises TypeError
    for start in range(0, n_queries, chunk_size):
        scores = queries[start:start + chunk_size] @ candidates.T
        if sparse.issparse(scores):
            scores = scores.toarray()
        scores = numpy.asarray(scores, dtype=numpy.float32)
        for row, q in enumerate(range(start, min(start + chunk_size, n_queries))):
            row_scores = scores[row]
            relevant = members.get(int(query_concepts[q]), numpy.zeros(0, numpy.int64))
            if query_candidate is not None and query_candidate[q] >= 0:
                row_scores[query_candidate[q]] = -numpy.inf
                relevant = relevant[relevant != query_candidate[q]]
            if not len(relevant):
                skipped += 1
                continue
            relevant_scores = numpy.sort(row_scores[relevant])[::-1]
            # Rank of the i-th best relevant name: i plus the unrelated names scoring at
            # least as high (ties go against the query).
            at_least = (row_scores[None, :] >= relevant_scores[:, None]).sum(axis=1)
            relevant_at_least = numpy.arange(1, len(relevant) + 1)
            ranks = relevant_at_least + (at_least - _count_ge(relevant_scores))
            precisions = relevant_at_least / ranks
            average_precisions.append(float(precisions.mean()))
            hits.append(float(ranks[0] == 1))
            reciprocal_ranks.append(float(1.0 / ranks[0]))
    n = len(average_precisions)
    return {"mAP": float(numpy.mean(average_precisions)) if n else 0.0,
            "Acc": float(numpy.mean(hits)) if n else 0.0,
            "MRR": float(numpy.mean(reciprocal_ranks)) if n else 0.0,
            "queries": n, "skipped": skipped}


def _count_ge(sorted_desc: numpy.ndarray) -> numpy.ndarray:
    """For each value of a descending array, how many of its values are >= it."""
    ascending = sorted_desc[::-1]
    return len(sorted_desc) - numpy.searchsorted(ascending, sorted_desc, side="left")


def evaluate_synonym_retrieval(encode: Encode, split: SynonymSplit, *,
                               query_sets: Sequence[str] = ("test", "zero_shot"),
                               max_train_queries: int = 2000, seed: int = 0) -> Dict:
    """{"test": {...}, "zero_shot": {...}, ...} for an encoder (texts -> L2-normalised rows).

    "train" queries are a random sample of `max_train_queries` training names (all of them
    cost |train|^2 scores).
    """
    train = split.indices(TRAIN)
    train_vectors = encode(split.texts_of(TRAIN))
    out = {}
    for name in query_sets:
        if name == "zero_shot":
            items = split.indices(ZERO_SHOT)
            vectors = encode(split.texts_of(ZERO_SHOT))
            out[name] = ranking_metrics(vectors, split.concepts[items], vectors,
                                        split.concepts[items],
                                        query_candidate=numpy.arange(len(items)))
        elif name == "train":
            rng = numpy.random.default_rng(seed)
            picked = numpy.sort(rng.choice(len(train), size=min(max_train_queries, len(train)),
                                           replace=False))
            out[name] = ranking_metrics(train_vectors[picked], split.concepts[train[picked]],
                                        train_vectors, split.concepts[train],
                                        query_candidate=picked)
        elif name in ("test", "validation"):
            items = split.indices(ROLES.index(name))
            vectors = encode([split.texts[i] for i in items])
            out[name] = ranking_metrics(vectors, split.concepts[items], train_vectors,
                                        split.concepts[train])
        else:
            raise BioLinkError(Errors.E629.format(value=name, options=", ".join(ROLES)))
    return out


# Baselines ----------------------------------------------------------------------

def concept_prototypes(vectors: numpy.ndarray, concepts: numpy.ndarray) -> numpy.ndarray:
    """For each row, the mean of the rows of its concept (the concept's prototype)."""
    _, inverse, counts = numpy.unique(concepts, return_inverse=True, return_counts=True)
    sums = numpy.zeros((len(counts), vectors.shape[1]), numpy.float64)
    numpy.add.at(sums, inverse, vectors)
    return (sums / counts[:, None])[inverse].astype(numpy.float32)


def sgw_encoder(vectors, *, cca_split: Optional[SynonymSplit] = None,
                regularization: float = 1e-3) -> Encode:
    """The baselines: mean word vector (SGW), or its CCA projection fitted on the
    training names of `cca_split` against their concepts' prototypes."""
    from ..encoders.dan import fit_cca, l2_normalize, project

    if cca_split is None:
        return lambda texts: l2_normalize(vectors.mean_many(texts))
    names = vectors.mean_many(cca_split.texts_of(TRAIN))
    prototypes = concept_prototypes(names, cca_split.concepts[cca_split.indices(TRAIN)])
    name_mean, name_projection, _, _ = fit_cca(names, prototypes, regularization=regularization)
    return lambda texts: l2_normalize(project(vectors.mean_many(texts), name_mean, name_projection))


BASELINES = ("sgw", "sgw-cca", "tfidf")


def encoder_for_evaluation(encoder: str, *, vectors_path: Optional[PathLike] = None,
                           split: Optional[SynonymSplit] = None, batch_size: int = 16384):
    """(encode, covered, description) for a saved encoder directory or a baseline name.

    sgw: mean word vector of [vectors_path]; sgw-cca: its CCA projection fitted on the
    split's training names; tfidf: char_wb 3-gram TF-IDF fitted on the training names.
    A saved encoder is initialized on the training names as bio_linker initializes it
    (a no-op for trained weights; a hybrid's TF-IDF part is fitted). covered(text) says
    whether a word-vector encoder knows any word of text (None for other encoders).
    """
    from ..encoders.wordvectors import WordVectors

    if encoder in ("sgw", "sgw-cca"):
        if vectors_path is None:
            raise BioLinkError(Errors.E631.format(value=encoder + " without --vectors",
                                                  command="evaluation",
                                                  options=", ".join(BASELINES)))
        vectors = WordVectors.from_disk(vectors_path)
        encode = sgw_encoder(vectors, cca_split=split if encoder == "sgw-cca" else None)
        return encode, lambda text: bool(vectors.ids(text)), {"encoder": encoder,
                                                              "vectors": str(vectors_path)}
    if encoder == "tfidf":
        from ..encoders.tfidf import tfidf_encoder

        model = tfidf_encoder("char_wb", (3, 3), True, False, 1)
        model.initialize(X=split.texts_of(TRAIN) if split is not None else None)
        return model.predict, None, {"encoder": "tfidf (char_wb 3-grams)"}
    path = Path(encoder)
    if not path.is_dir():
        raise BioLinkError(Errors.E631.format(value=encoder, command="evaluation",
                                              options=", ".join(BASELINES)))
    from ..encoders.saved import load_encoder

    model, meta = load_encoder(path)
    if split is not None:
        model.initialize(X=split.texts_of(TRAIN))
    word_vectors = next((node.attrs["vectors"] for node in model.walk()
                         if isinstance(node.attrs.get("vectors"), WordVectors)), None)

    def encode(texts: List[str]):
        parts = [model.predict(list(texts[i:i + batch_size]))
                 for i in range(0, len(texts), batch_size)]
        if not parts:
            return model.predict([])
        return sparse.vstack(parts, format="csr") if sparse.issparse(parts[0]) \
            else numpy.concatenate(parts)

    covered = (lambda text: bool(word_vectors.ids(text))) if word_vectors is not None else None
    return encode, covered, {"encoder": str(path), "method": meta.get("method"),
                             "trained_split": meta.get("split", {}).get("fingerprint")}


def resolve_split(dictionary: ConceptDictionary, *, encoder: str = "",
                  split_path: Optional[PathLike] = None, seed: Optional[int] = None,
                  zero_shot_concepts: float = 1000, test_rounds: int = 1,
                  validation_rounds: int = 1) -> SynonymSplit:
    """The split to evaluate on: split_path if given; else, with no seed given, the split
    a trained encoder directory was trained with (ENCODER/split.json); else make_split
    from the seed (default 1, the trainer's default)."""
    if split_path is not None:
        return SynonymSplit.from_disk(split_path)
    saved = Path(encoder) / SPLIT_FILE if encoder not in BASELINES else None
    if seed is None and saved is not None and saved.is_file():
        return SynonymSplit.from_disk(saved)
    return make_split(dictionary, seed=1 if seed is None else seed,
                      zero_shot_concepts=zero_shot_concepts, test_rounds=test_rounds,
                      validation_rounds=validation_rounds)
