"""A second opinion on retrieved candidates: the Siamese synonymy verifier (seed 004).

Retrieval ranks every concept, so a mention whose concept is not in the dictionary still
gets one. The verifier scores (mention, candidate's best-matching name) and drops the
candidate its NIL rule rejects: mode "nil" makes the mention NIL at once, mode "next"
tries the next candidate (up to `max_tries`).

NIL rules (`rule`), given p = p(synonym) and the candidate's retrieval score s:
    "verifier"  reject when p < threshold
    "either"    reject when p < threshold or s < score_threshold
    "combined"  reject when w_p * logit(p) + w_s * s + bias < 0, weights = [w_p, w_s, bias]
The trainer fits all three on a dev corpus (training/nil_rule.py: the most NIL answers for at
most a given loss of acc@1; for "combined" also the mix of logit(p) and s), and a trained
verifier applies the one chosen there. The score-only rule is bio_linker's own
`threshold` setting. The score is what the linker gives, so "either" and "combined" as
the trainer fits them (default TF-IDF linker over the dictionary alone, prior_weight 0)
suit that linker; refit them for another.

Also the curation API: `CandidateVerifier.score_pairs([(name, name), ...])`.
"""
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy
import srsly

from ...kb.dictionary import ConceptDictionary
from ...errors import BioLinkError, Errors
from ...io.util import PathLike, atomic_directory
from ...io.files import read_json, write_json
from . import Stage

Candidates = List[Tuple[int, float]]
MODES = ("nil", "next")
NIL_RULES = ("verifier", "either", "combined")
VERIFIER_CFG = "verifier.json"
# p = exp(-L1) reaches 1.0 exactly; logit(p) is taken of p clipped to this margin.
_P_MARGIN = 1e-4


class CandidateVerifier(Stage):
    """The verifier Model (List[(str, str)] -> probabilities), its NIL rule and mode: a
    "candidates" stage (it checks each query's candidates before the composite decision)."""

    level = "candidates"

    def __init__(self, model, threshold: float = 0.5, mode: str = "nil", max_tries: int = 3,
                 model_config: Optional[Dict] = None, rule: str = "verifier",
                 score_threshold: Optional[float] = None,
                 weights: Optional[Sequence[float]] = None):
        if mode not in MODES:
            raise BioLinkError(Errors.E704.format(value=mode, options=", ".join(MODES)))
        check_nil_rule(rule, threshold, score_threshold, weights)
        self.model = model
        self.threshold = float(threshold)
        self.mode = mode
        self.max_tries = int(max_tries)
        self.model_config = dict(model_config or {})
        self.rule = rule
        self.score_threshold = None if score_threshold is None else float(score_threshold)
        self.weights = None if weights is None else [float(w) for w in weights]
        self._best_name_of: Optional[Callable[[int, str], str]] = None
        self._best_name_source = None

    @classmethod
    def from_trained(cls, path: PathLike, *, threshold: Optional[float] = None,
                     mode: str = "nil", max_tries: int = 3, rule: Optional[str] = None,
                     score_threshold: Optional[float] = None,
                     weights: Optional[Sequence[float]] = None) -> "CandidateVerifier":
        """A verifier directory written by `train configs/siamese.cfg` (encoder.cfg, model,
        meta.json), with the settings `trained_settings` gives."""
        from ...encoders.saved import load_encoder

        model_config, settings = trained_settings(
            path, threshold=threshold, mode=mode, max_tries=max_tries, rule=rule,
            score_threshold=score_threshold, weights=weights)
        model, _ = load_encoder(path, role="verifier")
        return cls(model, model_config=model_config, **settings)

    def score_pairs(self, pairs: Sequence[Tuple[str, str]]) -> numpy.ndarray:
        """p(synonym) of each (name, name) pair, float32."""
        if not pairs:
            return numpy.zeros((0,), numpy.float32)
        return numpy.asarray(self.model.predict(list(pairs)), dtype=numpy.float32)

    def passes(self, probs: Sequence[float], scores: Sequence[float]) -> numpy.ndarray:
        """Whether the NIL rule keeps each candidate, given its p(synonym) and its
        retrieval score."""
        return ~nil_rule_rejects(self.nil_settings(), probs, scores)

    def nil_settings(self) -> Dict:
        """The rule and the settings it uses, as fit_nil_rules and verifier.json hold them."""
        settings: Dict = {"rule": self.rule}
        if self.rule in ("verifier", "either"):
            settings["threshold"] = self.threshold
        if self.rule == "either":
            settings["score_threshold"] = self.score_threshold
        if self.rule == "combined":
            settings["weights"] = list(self.weights)
        return settings

    def verify(self, dictionary: ConceptDictionary, mention_texts: Sequence[str],
               candidates_per_mention: Sequence[Candidates],
               normalize: Callable[[str], str] = str.lower) -> List[Candidates]:
        """verify_links against `dictionary`, each candidate represented by its name
        closest to the mention (best_name_finder, kept while the dictionary is the same)."""
        if self._best_name_of is None or self._best_name_source is not dictionary:
            self._best_name_of = best_name_finder(dictionary, normalize)
            self._best_name_source = dictionary
        return verify_links(self, mention_texts, candidates_per_mention, self._best_name_of)

    # As a stage of the linker (stages/__init__.py) -------------------------

    def apply_to_candidates(self, linker, query_texts: Sequence[str],
                            candidates: Sequence[Candidates]) -> List[Candidates]:
        """The candidates the NIL rule keeps, per query, with the linker's dictionary and
        mention folding."""
        return self.verify(linker.dictionary, query_texts, candidates, linker.normalizer.mention)

    def state_to_bytes(self) -> bytes:
        """The model's weights; the NIL settings are the stage's config."""
        return self.model.to_bytes()

    def state_from_bytes(self, data: bytes) -> None:
        """Read weights written by `state_to_bytes`; the stage's config keeps its model
        settings (batch_size, ...)."""
        from ...encoders.settings import keeping_config_settings

        with keeping_config_settings(self.model, where="verifier stage"):
            self.model.from_bytes(data)

    def load_trained(self, path: PathLike) -> None:
        """Read the weights of a verifier directory written by `train configs/siamese.cfg`."""
        from ...encoders.saved import MODEL_FILE

        self.state_from_bytes((Path(path) / MODEL_FILE).read_bytes())

    # Saved inside a pipeline saved before stages were config (the bio_linker's
    # `verifier` part, or one set as an attribute): the same files as a trained verifier
    # directory plus the linking settings.
    def to_disk(self, path: PathLike) -> None:
        """Save the verifier (model, its config and the NIL settings) to `path`, atomically."""
        from ...encoders.saved import save_encoder

        with atomic_directory(path, force=True) as tmp:
            save_encoder(tmp, self.model, self.model_config, meta={"method": "siamese",
                                                                    "threshold": self.threshold})
            write_json(tmp / VERIFIER_CFG, self._settings(), indent=2)

    def _settings(self) -> Dict:
        return {"threshold": self.threshold, "mode": self.mode, "max_tries": self.max_tries,
                "rule": self.rule, "score_threshold": self.score_threshold,
                "weights": self.weights}

    def to_bytes(self) -> bytes:
        """Serialize the verifier (model config, weights, NIL settings) to msgpack bytes."""
        from thinc.api import Config

        return srsly.msgpack_dumps({"model_config": Config({"model": self.model_config}).to_str(),
                                    "model": self.model.to_bytes(), **self._settings()})

    @classmethod
    def from_bytes(cls, data: bytes) -> "CandidateVerifier":
        """Rebuild a verifier from `to_bytes` data. The model config is checked against the
        allowed architectures before it is resolved, so loading runs no foreign code."""
        from spacy import util
        from thinc.api import Config

        from ...encoders.checks import check_model
        from ...io.safe_models import check_model_config

        msg = srsly.msgpack_loads(data)
        model_config = dict(Config().from_str(msg["model_config"], interpolate=False)["model"])
        check_model_config(model_config, role="verifier", where="bio_linker verifier")
        model = util.registry.resolve({"model": model_config})["model"]
        check_model(model, role="verifier", where="bio_linker verifier")
        model.from_bytes(msg["model"])
        # Saved before NIL rules existed: the p threshold alone.
        return cls(model, msg["threshold"], msg["mode"], msg["max_tries"], model_config,
                   rule=msg.get("rule", "verifier"), score_threshold=msg.get("score_threshold"),
                   weights=msg.get("weights"))

    @classmethod
    def from_disk(cls, path: PathLike) -> "CandidateVerifier":
        """Load a verifier saved by `to_disk`; settings missing from older saves get the
        defaults they were saved with."""
        settings_path = Path(path) / VERIFIER_CFG
        # The standard parser: srsly's reads some decimals (0.7) one unit in the last place
        # off, and the threshold a user saved is the one to use.
        settings = (read_json(settings_path, "Verifier settings", type=dict)
                    if settings_path.is_file() else {})
        return cls.from_trained(path, threshold=settings.get("threshold"),
                                mode=settings.get("mode", "nil"),
                                max_tries=settings.get("max_tries", 3),
                                rule=settings.get("rule", "verifier"),
                                score_threshold=settings.get("score_threshold"),
                                weights=settings.get("weights"))


def trained_settings(path: PathLike, *, threshold: Optional[float] = None,
                     mode: str = "nil", max_tries: int = 3, rule: Optional[str] = None,
                     score_threshold: Optional[float] = None,
                     weights: Optional[Sequence[float]] = None) -> Tuple[Dict, Dict]:
    """The [model] block of a verifier directory written by `train configs/siamese.cfg`
    and the stage settings to use it with. The rule defaults to the one chosen on dev
    (meta.json `nil_rule`, "verifier" for verifiers trained without a dev corpus), its
    settings to the ones fitted there (`nil_rules`); the threshold of a verifier without
    them is the dev pairs' max-F1 one. Arguments given replace the saved values."""
    from ...encoders.saved import read_encoder_config

    model_config, _, meta = read_encoder_config(path)
    if meta.get("method") != "siamese":
        raise BioLinkError(Errors.E703.format(path=path, method=meta.get("method")))
    rule = rule or meta.get("nil_rule", "verifier")
    fitted = meta.get("nil_rules", {}).get(rule, {})
    if threshold is None:
        threshold = fitted.get("threshold", meta.get("threshold", 0.5))
    if score_threshold is None:
        score_threshold = fitted.get("score_threshold")
    if weights is None:
        weights = fitted.get("weights")
    if rule != "verifier" and not fitted and score_threshold is None and weights is None:
        raise BioLinkError(Errors.E710.format(path=path, rule=rule,
                                              fitted=sorted(meta.get("nil_rules", {}))))
    # The mode is checked where it is used: init_linker before any work, the constructor.
    check_nil_rule(rule, threshold, score_threshold, weights)
    return dict(model_config), {"threshold": float(threshold), "mode": mode,
                                "max_tries": int(max_tries), "rule": rule,
                                "score_threshold": score_threshold,
                                "weights": None if weights is None else list(weights)}


def best_name_finder(dictionary: ConceptDictionary,
                     normalize: Callable[[str], str] = str.lower
                     ) -> Callable[[int, str], str]:
    """best_name_of(concept, mention): the concept's name sharing the most character
    trigrams with the mention (Jaccard); cheap enough for the few candidates verified."""
    cache: Dict[str, frozenset] = {}

    def trigrams(text: str) -> frozenset:
        grams = cache.get(text)
        if grams is None:
            padded = f" {normalize(text)} "
            grams = frozenset(padded[i:i + 3] for i in range(max(len(padded) - 2, 1)))
            if len(cache) < 200_000:
                cache[text] = grams
        return grams

    def best_name_of(concept: int, mention: str) -> str:
        names = dictionary.names_of(concept)
        query = trigrams(mention)

        def jaccard(name: str) -> float:
            grams = trigrams(name)
            return len(query & grams) / (len(query | grams) or 1)

        return max(names, key=jaccard) if names else ""

    return best_name_of


def verify_links(verifier: CandidateVerifier, mention_texts: Sequence[str],
                 candidates_per_mention: Sequence[Candidates],
                 best_name_of: Callable[[int, str], str]) -> List[Candidates]:
    """The candidates that survive verification, per mention, in their ranked order.

    mode "nil": if the top candidate fails, the mention gets no candidate (NIL);
        otherwise its list is unchanged.
    mode "next": failing candidates among the first `max_tries` are dropped, the others
        keep their order; if none of the tried ones passes, the mention is NIL.
    A candidate fails when the verifier's NIL rule rejects its p(synonym) and score.
    All (mention, best name) pairs of a batch are scored in one model call.
    """
    if len(mention_texts) != len(candidates_per_mention):
        raise ValueError(f"{len(mention_texts)} mention texts but "
                         f"{len(candidates_per_mention)} candidate lists")
    tries = 1 if verifier.mode == "nil" else max(verifier.max_tries, 1)
    pairs: List[Tuple[str, str]] = []
    scores: List[float] = []
    slots: List[Tuple[int, int]] = []
    for m, (text, candidates) in enumerate(zip(mention_texts, candidates_per_mention)):
        for position, (concept, score) in enumerate(candidates[:tries]):
            pairs.append((text, best_name_of(concept, text)))
            scores.append(score)
            slots.append((m, position))
    probs = verifier.score_pairs(pairs)
    passed: Dict[Tuple[int, int], bool] = dict(
        zip(slots, verifier.passes(probs, scores).tolist()))
    out: List[Candidates] = []
    for m, candidates in enumerate(candidates_per_mention):
        kept: Candidates = []
        for position, candidate in enumerate(candidates):
            if position >= tries:
                if kept:
                    kept.extend(candidates[position:])
                break
            if passed[(m, position)]:
                kept.append(candidate)
                if verifier.mode == "nil":
                    kept.extend(candidates[position + 1:])
                    break
        out.append(kept)
    return out


# NIL rules ----------------------------------------------------------------


def check_nil_rule(rule: str, threshold: float, score_threshold: Optional[float] = None,
                   weights: Optional[Sequence[float]] = None) -> None:
    """E705 / E708 / E709 for settings the rule cannot use."""
    if rule not in NIL_RULES:
        raise BioLinkError(Errors.E708.format(value=rule, options=", ".join(NIL_RULES)))
    if not isinstance(threshold, (int, float)) or not 0.0 <= threshold <= 1.0:
        raise BioLinkError(Errors.E705.format(value=threshold))
    if rule == "either" and not isinstance(score_threshold, (int, float)):
        raise BioLinkError(Errors.E709.format(rule=rule, setting="score_threshold",
                                              value=score_threshold,
                                              expected="a number (the retrieval score below "
                                                       "which a candidate fails)"))
    if rule == "combined" and (weights is None or len(weights) != 3
                               or not all(isinstance(w, (int, float)) for w in weights)):
        raise BioLinkError(Errors.E709.format(rule=rule, setting="weights", value=weights,
                                              expected="three numbers [p_weight, score_weight, "
                                                       "bias]"))


def logit(probs: Sequence[float]) -> numpy.ndarray:
    """log(p / (1 - p)) of probabilities, clipped away from 0 and 1 so it stays finite."""
    p = numpy.clip(numpy.asarray(probs, dtype=numpy.float64), _P_MARGIN, 1.0 - _P_MARGIN)
    return numpy.log(p / (1.0 - p))


def combined_margin(weights: Sequence[float], probs: Sequence[float],
                    scores: Sequence[float]) -> numpy.ndarray:
    """w_p * logit(p) + w_s * score + bias: the "combined" rule keeps a candidate at >= 0."""
    p_weight, score_weight, bias = weights
    return p_weight * logit(probs) + score_weight * numpy.asarray(scores, numpy.float64) + bias


def nil_rule_rejects(settings: Dict, probs: Sequence[float],
                     scores: Sequence[float]) -> numpy.ndarray:
    """Which candidates the rule in `settings` (CandidateVerifier.nil_settings) rejects."""
    probs = numpy.asarray(probs, dtype=numpy.float64)
    scores = numpy.asarray(scores, dtype=numpy.float64)
    rule = settings["rule"]
    if rule == "verifier":
        return probs < settings["threshold"]
    if rule == "either":
        return (probs < settings["threshold"]) | (scores < settings["score_threshold"])
    if rule == "combined":
        return combined_margin(settings["weights"], probs, scores) < 0.0
    raise BioLinkError(Errors.E708.format(value=rule, options=", ".join(NIL_RULES)))
