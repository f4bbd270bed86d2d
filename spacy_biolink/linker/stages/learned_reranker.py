"""A learned reranker stage: LightGBM's lambdarank over features of each (mention,
candidate) pair, computed from the linker's own candidates after every earlier stage.

Features (FEATURES, one row per candidate of each linked text):
- retrieval: the candidate's score, its rank, the gap to the best score and the ratio to it;
- lexical: whether the query key is a (folded) name of the candidate, token and character
  trigram Jaccard with the candidate's closest name, the length ratio to that name,
  whether the text is a spelled-out short form, whether it is a composite's part;
- prior: log(1 + how often the augmenting corpora annotated the concept), log(1 + its
  names);
- type: how often the training mentions of the span's label had a concept of this type
  (the concept's best type; missing when the dictionary has no types);
- document: how many other mentions of the same document have the candidate first, and
  how many have it among their k.
Scores become probabilities (softmax over the k candidates at a temperature fitted on
dev), so `nil_threshold` (fitted on dev for a target precision) makes a mention NIL
where the top candidate is unlikely to be right; the probability is the span's score.
The model is saved in LightGBM's own text format, never pickled.
"""
import math
from collections import Counter, defaultdict
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy
import srsly

from ...errors import BioLinkError, Errors
from ...io.util import PathLike
from . import Stage

FEATURES = ("score", "rank", "gap_to_best", "score_ratio",
            "exact_name", "token_jaccard", "trigram_jaccard", "length_ratio",
            "short_form", "composite_part",
            "log_annotations", "log_names",
            "label_type_rate",
            "doc_top_votes", "doc_topk_votes")
MODEL_FILE = "model.txt"
SETTINGS_FILE = "learned_reranker.json"
LABEL_TYPES_FILE = "label_types.json"


def _trigrams(text: str) -> frozenset:
    padded = f" {text} "
    return frozenset(padded[i:i + 3] for i in range(max(len(padded) - 2, 1)))


def _jaccard(a: frozenset, b: frozenset) -> float:
    return len(a & b) / (len(a | b) or 1)


class _ConceptView:
    """What the features read of one dictionary, computed once per dictionary: folded
    names and their trigrams per concept (on demand), annotation counts, name counts."""

    def __init__(self, linker):
        dictionary = linker.dictionary
        self.dictionary = dictionary
        self.fold = linker.normalizer.name
        counts = numpy.bincount(dictionary.name_concepts, weights=dictionary.name_concept_counts,
                                minlength=dictionary.n_concepts)
        self.log_annotations = numpy.log1p(counts)
        self.log_names = numpy.log1p(numpy.bincount(dictionary.name_concepts,
                                                    minlength=dictionary.n_concepts))
        self._names: Dict[int, List[Tuple[str, frozenset]]] = {}
        self._lexical: Dict[Tuple[str, int], Tuple[float, float, float, float]] = {}

    def names(self, concept: int) -> List[Tuple[str, frozenset]]:
        found = self._names.get(concept)
        if found is None:
            found = []
            for name in self.dictionary.names_of(concept):
                folded = self.fold(name)
                found.append((folded, _trigrams(folded)))
            if len(self._names) < 500_000:
                self._names[concept] = found
        return found

    def lexical(self, key: str, key_tokens: set, key_grams: frozenset, concept: int
                ) -> Tuple[float, float, float, float]:
        """exact_name, token_jaccard, trigram_jaccard, length_ratio of a query key against
        a concept's closest name; remembered per (key, concept), since a batch (and a
        corpus) asks for the same pairs again."""
        found = self._lexical.get((key, concept))
        if found is not None:
            return found
        names = self.names(concept)
        exact = float(any(folded == key for folded, _ in names))
        if names:
            folded, grams = max(names, key=lambda n: _jaccard(key_grams, n[1]))
            tokens = set(folded.split())
            found = (exact, len(key_tokens & tokens) / (len(key_tokens | tokens) or 1),
                     _jaccard(key_grams, grams),
                     min(len(key), len(folded)) / (max(len(key), len(folded)) or 1))
        else:
            found = (exact, 0.0, 0.0, 0.0)
        if len(self._lexical) >= 1_000_000:
            self._lexical.clear()
        self._lexical[(key, concept)] = found
        return found

    def types(self, concept: int) -> List[str]:
        types = self.dictionary.types
        if types is None:
            return []
        joined = types[concept]
        return joined.split("|") if joined else []


class LearnedReranker(Stage):
    """The LightGBM ranker, the k candidates it reranks, its temperature and NIL
    threshold, and the label -> type rates learned from the training mentions."""

    level = "mentions"

    def __init__(self, *, k: int = 20, temperature: float = 1.0,
                 nil_threshold: Optional[float] = None):
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise BioLinkError(Errors.E530.format(setting="k", value=k, what="an integer >= 1"))
        if not temperature > 0:
            raise BioLinkError(Errors.E530.format(setting="temperature", value=temperature,
                                                  what="a number > 0"))
        if nil_threshold is not None and not 0.0 <= nil_threshold <= 1.0:
            raise BioLinkError(Errors.E530.format(setting="nil_threshold", value=nil_threshold,
                                                  what="null or a probability in [0, 1]"))
        self.k = k
        self.temperature = float(temperature)
        self.nil_threshold = nil_threshold
        self.booster = None
        self.label_types: Dict[str, Dict[str, float]] = {}
        self._view: Optional[_ConceptView] = None

    # Features ---------------------------------------------------------------

    def view(self, linker) -> _ConceptView:
        """The concept tables of the linker's dictionary (rebuilt when it changes)."""
        if self._view is None or self._view.dictionary is not linker.dictionary:
            self._view = _ConceptView(linker)
        return self._view

    def features(self, linker, mentions: Sequence, links: Sequence) -> numpy.ndarray:
        """One row of FEATURES per candidate (the first k) of every linked text, in order:
        mention by mention, part by part, candidate by candidate."""
        view = self.view(linker)
        k = self.k
        # Document votes: each text's candidate lists, grouped by document.
        top_of_doc: Dict[int, Counter] = defaultdict(Counter)
        topk_of_doc: Dict[int, Counter] = defaultdict(Counter)
        for mention, parts in zip(mentions, links):
            if mention.doc is None:
                continue
            doc_key = id(mention.doc)
            for _, candidates in parts:
                if candidates:
                    top_of_doc[doc_key][candidates[0][0]] += 1
                topk_of_doc[doc_key].update({c for c, _ in candidates[:k]})
        rows: List[List[float]] = []
        for mention, parts in zip(mentions, links):
            doc_key = id(mention.doc) if mention.doc is not None else None
            raw = " ".join(mention.text.split())
            for text, candidates in parts:
                candidates = candidates[:k]
                if not candidates:
                    continue
                key = linker.query_key(text)
                key_tokens = set(key.split())
                key_grams = _trigrams(key)
                best = candidates[0][1]
                short_form = float(len(parts) == 1 and text != raw and len(raw) <= 10)
                composite = float(len(parts) > 1)
                rates = self.label_types.get(mention.label or "", {})
                own_top = {candidates[0][0]}
                for rank, (concept, score) in enumerate(candidates):
                    exact, token, trigram, length = view.lexical(key, key_tokens, key_grams,
                                                                 concept)
                    types = view.types(concept)
                    type_rate = max((rates.get(t, 0.0) for t in types), default=math.nan) \
                        if rates else math.nan
                    if doc_key is not None:
                        top_votes = top_of_doc[doc_key][concept] - (concept in own_top)
                        topk_votes = topk_of_doc[doc_key][concept] - 1
                    else:
                        top_votes = topk_votes = 0
                    rows.append([score, rank, best - score, score / best if best > 0 else 0.0,
                                 exact, token, trigram, length, short_form, composite,
                                 float(view.log_annotations[concept]),
                                 float(view.log_names[concept]), type_rate,
                                 float(top_votes), float(topk_votes)])
        return numpy.asarray(rows, dtype=numpy.float64).reshape(-1, len(FEATURES))

    # As a stage of the linker -----------------------------------------------

    def scores(self, features: numpy.ndarray) -> numpy.ndarray:
        """The ranker's raw score of each feature row."""
        if self.booster is None:
            raise BioLinkError(Errors.E531.format(path="<learned reranker>",
                                                  reason="no trained model loaded"))
        if not len(features):
            return numpy.zeros(0)
        return numpy.asarray(self.booster.predict(features, num_threads=1), dtype=numpy.float64)

    def apply_to_mentions(self, linker, mentions: Sequence, links: Sequence) -> List:
        """Each linked text's first k candidates in the ranker's order, scored by their
        probability; a text whose best probability is under nil_threshold gets none."""
        from .reranker import softmax_rows

        raw = self.scores(self.features(linker, mentions, links))
        out, at = [], 0
        for parts in links:
            new_parts = []
            for text, candidates in parts:
                candidates = candidates[:self.k]
                if not candidates:
                    new_parts.append((text, []))
                    continue
                row = raw[at:at + len(candidates)]
                at += len(candidates)
                probs = softmax_rows(row, self.temperature)
                order = numpy.argsort(-probs, kind="stable")
                ranked = [(candidates[i][0], float(probs[i])) for i in order.tolist()]
                if self.nil_threshold is not None and ranked[0][1] < self.nil_threshold:
                    ranked = []
                new_parts.append((text, ranked))
            out.append(new_parts)
        return out

    def clear_cache(self) -> None:
        """Forget the names and lexical features computed so far."""
        self._view = None

    # Weights ----------------------------------------------------------------

    def state_to_bytes(self) -> bytes:
        """The ranker in LightGBM's text format and the label -> type rates."""
        if self.booster is None:
            raise BioLinkError(Errors.E531.format(path="<learned reranker>",
                                                  reason="no trained model to save"))
        return srsly.msgpack_dumps({"model": self.booster.model_to_string(),
                                    "label_types": self.label_types})

    def state_from_bytes(self, data: bytes) -> None:
        """Read what state_to_bytes wrote (text, never a pickle)."""
        try:
            state = srsly.msgpack_loads(data)
            self.set_model(state["model"], state["label_types"])
        except (ValueError, KeyError, TypeError) as err:
            raise BioLinkError(Errors.E531.format(path="<stage state>", reason=str(err))) from None

    def set_model(self, model_text: str, label_types: Dict[str, Dict[str, float]]) -> None:
        """Use a LightGBM model (its text format) and label -> type rates."""
        import lightgbm

        if not isinstance(model_text, str) or not model_text.startswith("tree"):
            raise BioLinkError(Errors.E531.format(path="<learned reranker>",
                                                  reason="the model is not LightGBM's text format"))
        booster = lightgbm.Booster(model_str=model_text)
        if booster.num_feature() != len(FEATURES):
            raise BioLinkError(Errors.E531.format(
                path="<learned reranker>",
                reason=f"the model reads {booster.num_feature()} features, this version "
                       f"computes {len(FEATURES)}"))
        self.booster = booster
        self.label_types = {str(label): {str(t): float(r) for t, r in rates.items()}
                            for label, rates in label_types.items()}

    def load_trained(self, path: PathLike) -> None:
        """Read a directory written by `train configs/rank.cfg`."""
        model_text, _, label_types = read_trained(path)
        self.set_model(model_text, label_types)


def read_trained(path: PathLike) -> Tuple[str, Dict, Dict]:
    """The model text, settings (k, temperature, nil_threshold) and label -> type rates
    of a trained learned-reranker directory."""
    path = Path(path)
    for name in (MODEL_FILE, SETTINGS_FILE, LABEL_TYPES_FILE):
        if not (path / name).is_file():
            raise BioLinkError(Errors.E531.format(path=path, reason=f"no {name}"))
    settings = srsly.read_json(path / SETTINGS_FILE)
    kept = {key: settings[key] for key in ("k", "temperature", "nil_threshold") if key in settings}
    return ((path / MODEL_FILE).read_text(encoding="utf8"), kept,
            srsly.read_json(path / LABEL_TYPES_FILE))


def is_learned_reranker_dir(path: PathLike) -> bool:
    """Whether `path` holds a trained learned reranker (not a cross-encoder)."""
    return (Path(path) / SETTINGS_FILE).is_file()
