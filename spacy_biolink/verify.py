"""A second opinion on retrieved candidates: the Siamese synonymy verifier (seed 004).

Retrieval ranks every concept, so a mention whose concept is not in the dictionary still
gets one. The verifier scores (mention, candidate's best-matching name) and drops the
candidate when p(synonym) < threshold: mode "nil" makes the mention NIL at once, mode
"next" tries the next candidate (up to `max_tries`).

Also the curation API: `CandidateVerifier.score_pairs([(name, name), ...])`.
"""
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy
import srsly

from .dictionary import ConceptDictionary
from .errors import BioLinkError, Errors
from .util import PathLike, atomic_directory

Candidates = List[Tuple[int, float]]
MODES = ("nil", "next")
VERIFIER_CFG = "verifier.json"


class CandidateVerifier:
    """The verifier Model (List[(str, str)] -> probabilities), its threshold and mode."""

    def __init__(self, model, threshold: float = 0.5, mode: str = "nil", max_tries: int = 3,
                 model_config: Optional[Dict] = None):
        if mode not in MODES:
            raise BioLinkError(Errors.E704.format(value=mode, options=", ".join(MODES)))
        if not 0.0 <= threshold <= 1.0:
            raise BioLinkError(Errors.E705.format(value=threshold))
        self.model = model
        self.threshold = float(threshold)
        self.mode = mode
        self.max_tries = int(max_tries)
        self.model_config = dict(model_config or {})
        self._best_name_of: Optional[Callable[[int, str], str]] = None
        self._best_name_source = None

    @classmethod
    def from_trained(cls, path: PathLike, *, threshold: Optional[float] = None,
                     mode: str = "nil", max_tries: int = 3) -> "CandidateVerifier":
        """A verifier directory written by `train configs/siamese.cfg` (encoder.cfg, model,
        meta.json); the threshold defaults to the dev-chosen one in meta.json."""
        from .encoders.saved import load_encoder, read_encoder_config

        model_config, _, meta = read_encoder_config(path)
        if meta.get("method") != "siamese":
            raise BioLinkError(Errors.E703.format(path=path, method=meta.get("method")))
        model, meta = load_encoder(path)
        if threshold is None:
            threshold = meta.get("threshold", 0.5)
        return cls(model, threshold, mode, max_tries, model_config)

    def score_pairs(self, pairs: Sequence[Tuple[str, str]]) -> numpy.ndarray:
        """p(synonym) of each (name, name) pair, float32."""
        if not pairs:
            return numpy.zeros((0,), numpy.float32)
        return numpy.asarray(self.model.predict(list(pairs)), dtype=numpy.float32)

    def verify(self, dictionary: ConceptDictionary, mention_texts: Sequence[str],
               candidates_per_mention: Sequence[Candidates],
               normalize: Callable[[str], str] = str.lower) -> List[Candidates]:
        """verify_links against `dictionary`, each candidate represented by its name
        closest to the mention (best_name_finder, kept while the dictionary is the same)."""
        if self._best_name_of is None or self._best_name_source is not dictionary:
            self._best_name_of = best_name_finder(dictionary, normalize)
            self._best_name_source = dictionary
        return verify_links(self, mention_texts, candidates_per_mention, self._best_name_of)

    # Saved inside a pipeline (the bio_linker's `verifier` part): the same files as a
    # trained verifier directory plus the linking settings.
    def to_disk(self, path: PathLike) -> None:
        from .encoders.saved import save_encoder

        with atomic_directory(path, force=True) as tmp:
            save_encoder(tmp, self.model, self.model_config, meta={"method": "siamese",
                                                                    "threshold": self.threshold})
            srsly.write_json(tmp / VERIFIER_CFG, {"threshold": self.threshold, "mode": self.mode,
                                                  "max_tries": self.max_tries})

    def to_bytes(self) -> bytes:
        from thinc.api import Config

        return srsly.msgpack_dumps({"model_config": Config({"model": self.model_config}).to_str(),
                                    "model": self.model.to_bytes(), "threshold": self.threshold,
                                    "mode": self.mode, "max_tries": self.max_tries})

    @classmethod
    def from_bytes(cls, data: bytes) -> "CandidateVerifier":
        from spacy import util
        from thinc.api import Config

        msg = srsly.msgpack_loads(data)
        model_config = dict(Config().from_str(msg["model_config"], interpolate=False)["model"])
        model = util.registry.resolve({"model": model_config})["model"]
        model.from_bytes(msg["model"])
        return cls(model, msg["threshold"], msg["mode"], msg["max_tries"], model_config)

    @classmethod
    def from_disk(cls, path: PathLike) -> "CandidateVerifier":
        settings_path = Path(path) / VERIFIER_CFG
        settings = srsly.read_json(settings_path) if settings_path.is_file() else {}
        return cls.from_trained(path, threshold=settings.get("threshold"),
                                mode=settings.get("mode", "nil"),
                                max_tries=settings.get("max_tries", 3))


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
    All (mention, best name) pairs of a batch are scored in one model call.
    """
    if len(mention_texts) != len(candidates_per_mention):
        raise ValueError(f"{len(mention_texts)} mention texts but "
                         f"{len(candidates_per_mention)} candidate lists")
    tries = 1 if verifier.mode == "nil" else max(verifier.max_tries, 1)
    pairs: List[Tuple[str, str]] = []
    slots: List[Tuple[int, int]] = []
    for m, (text, candidates) in enumerate(zip(mention_texts, candidates_per_mention)):
        for position, (concept, _) in enumerate(candidates[:tries]):
            pairs.append((text, best_name_of(concept, text)))
            slots.append((m, position))
    probs = verifier.score_pairs(pairs)
    passed: Dict[Tuple[int, int], bool] = {
        slot: bool(p >= verifier.threshold) for slot, p in zip(slots, probs.tolist())}
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


def read_pair_file(path: PathLike) -> Tuple[List[Tuple[str, str]], List[Optional[int]]]:
    """name1<TAB>name2[<TAB>label] lines (blank lines and `#` comments skipped) ->
    pairs and labels (None where a line has no label)."""
    from .util import open_text

    path = Path(path)
    if not path.is_file():
        raise BioLinkError(Errors.E707.format(path=path))
    pairs: List[Tuple[str, str]] = []
    labels: List[Optional[int]] = []
    with open_text(path) as fileh:
        for line_number, line in enumerate(fileh, start=1):
            line = line.rstrip("\r\n")
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.split("\t")
            if (len(fields) not in (2, 3) or not fields[0].strip() or not fields[1].strip()
                    or (len(fields) == 3 and fields[2].strip() not in ("0", "1", ""))):
                raise BioLinkError(Errors.E706.format(path=path, line=line_number, text=line))
            pairs.append((fields[0], fields[1]))
            labels.append(int(fields[2]) if len(fields) == 3 and fields[2].strip() else None)
    return pairs, labels


def write_scored_pairs(path: PathLike, pairs: Sequence[Tuple[str, str]],
                       probs: Sequence[float]) -> None:
    """name1<TAB>name2<TAB>probability lines, written atomically."""
    from .util import atomic_file

    with atomic_file(path) as fileh:
        for (left, right), prob in zip(pairs, probs):
            fileh.write(f"{left}\t{right}\t{float(prob):.6f}\n")
