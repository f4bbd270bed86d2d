"""Scores as probabilities of being right: a mention stage that rescales each candidate's
score, run last before the NIL rule, so that the linker's `threshold` (and kb_ents'
scores) mean the same in every pipeline whatever its retriever's scale (cosines, hybrid
sums, boosted scores).

The calibration is Platt scaling on two features of a candidate: its score s and its
margin m over the best other candidate of the same list (the second's score for the top
one, which is what tells a clear answer from a coin toss; negative for the others),
with one set of weights for a list's first candidate and one for the rest:

    p = sigmoid(w_score * s + w_margin * m + bias)

The weights are kept non-negative, so a higher score never means a lower probability,
and a list's order is kept (a candidate's probability is at most the one before it).
They are fitted on dev gold mentions (training/calibrate.py: whether each of a
mention's first candidates is right), so the top candidate's probability and the
others' are each calibrated, and saved with the pipeline as JSON (`stages/NAME`);
nothing of it is in the config beyond the method.
"""
import json
import math
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import numpy

from ...errors import BioLinkError, Errors
from . import Stage

METHODS = ("platt",)
FEATURES = ("score", "margin")
# The candidates each set of weights is for: a list's first, and the others.
GROUPS = ("top", "other")
# The file `load_trained` reads from a directory (training/calibrate.py writes it).
CALIBRATION_FILE = "calibration.json"


class ScoreCalibration(Stage):
    """Platt scaling of candidate scores into probabilities (module docstring)."""

    level = "mentions"
    k = 0

    def __init__(self, method: str = "platt"):
        if method not in METHODS:
            raise BioLinkError(Errors.E560.format(setting="method", value=method,
                                                  what=f"one of {', '.join(METHODS)}"))
        self.method = method
        self.weights: Optional[List[float]] = None
        # What the fit saw (sources, counts, reliability): saved beside the weights for
        # whoever reads the pipeline, never read back into the arithmetic.
        self.report: Dict = {}

    @property
    def is_fitted(self) -> bool:
        """Whether weights were fitted (or loaded)."""
        return self.weights is not None

    def probabilities(self, scores: numpy.ndarray, margins: numpy.ndarray,
                      tops: numpy.ndarray) -> numpy.ndarray:
        """The calibrated probability of each (score, margin, first or not) triple."""
        if self.weights is None:
            raise BioLinkError(Errors.E561.format(what="no fitted weights"))
        weights = numpy.array(self.weights).reshape(len(GROUPS), len(FEATURES) + 1)
        w = weights[numpy.where(numpy.asarray(tops) > 0, 0, 1)]
        z = w[:, 0] * numpy.asarray(scores, numpy.float64) \
            + w[:, 1] * numpy.asarray(margins, numpy.float64) + w[:, 2]
        return 1.0 / (1.0 + numpy.exp(-numpy.clip(z, -500.0, 500.0)))

    def calibrate(self, candidates) -> List:
        """One ranked candidate list, its scores replaced by probabilities (order kept)."""
        return self.calibrate_lists([candidates])[0]

    def calibrate_lists(self, lists: Sequence) -> List:
        """Ranked candidate lists, each one's scores replaced by probabilities (order kept:
        a candidate's probability is at most the one before it). The lists are scored
        together: one numpy pass for a batch costs less than a few numpy calls per list."""
        scores: List[float] = []
        margins: List[float] = []
        tops: List[float] = []
        for candidates in lists:
            list_scores = [score for _, score in candidates]
            scores.extend(list_scores)
            margins.extend(_margins(list_scores))
            tops.extend([1.0] + [0.0] * (len(list_scores) - 1) if list_scores else [])
        if not scores:
            return [list(candidates) for candidates in lists]
        probs = self.probabilities(numpy.array(scores), numpy.array(margins),
                                   numpy.array(tops)).tolist()
        out, at = [], 0
        for candidates in lists:
            calibrated, running = [], 1.0
            for (concept, _), prob in zip(candidates, probs[at:at + len(candidates)]):
                running = min(running, prob)
                calibrated.append((concept, running))
            at += len(candidates)
            out.append(calibrated)
        return out

    def apply_to_mentions(self, linker, mentions: Sequence, links: Sequence) -> List:
        """Each mention's links with every candidate list calibrated (the batch at once)."""
        calibrated = iter(self.calibrate_lists(
            [candidates for parts in links for _, candidates in parts]))
        return [[(text, next(calibrated)) for text, _ in parts] for parts in links]

    # Weights ----------------------------------------------------------------

    def set_weights(self, weights: Sequence[float], report: Optional[Dict] = None) -> None:
        """Use these Platt weights, [w_score, w_margin, bias] for a list's first candidate
        then for the others, six numbers (and keep `report`)."""
        try:
            values = [float(v) for v in weights]
        except (TypeError, ValueError):
            values = []
        size = len(FEATURES) + 1
        if len(values) != len(GROUPS) * size or not all(math.isfinite(v) for v in values) \
                or any(v < 0 for i, v in enumerate(values) if i % size != size - 1):
            raise BioLinkError(Errors.E561.format(
                what=f"weights {list(weights) if weights is not None else None!r}: they "
                     "must be six finite numbers, [w_score, w_margin, bias] for a list's "
                     "first candidate then for the others, every w >= 0"))
        self.weights = values
        self.report = dict(report or {})

    def state_to_bytes(self) -> bytes:
        """The weights and the fit's report, as JSON."""
        if self.weights is None:
            raise BioLinkError(Errors.E561.format(what="nothing fitted to save"))
        return json.dumps({"method": self.method, "features": list(FEATURES),
                           "groups": list(GROUPS),
                           "weights": self.weights, "report": self.report},
                          indent=2, sort_keys=True).encode("utf8")

    def state_from_bytes(self, data: bytes) -> None:
        """Read what state_to_bytes wrote."""
        try:
            state = json.loads(data.decode("utf8"))
            weights, method = state["weights"], state.get("method", "platt")
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            raise BioLinkError(Errors.E561.format(what=f"not a saved calibration ({err})")) \
                from None
        if method != self.method:
            raise BioLinkError(Errors.E561.format(
                what=f"saved with method {method!r}, the config says {self.method!r}"))
        self.set_weights(weights, state.get("report"))

    def load_trained(self, path) -> None:
        """Read a calibration file, or the calibration.json of a directory."""
        path = Path(path)
        if path.is_dir():
            path = path / CALIBRATION_FILE
        if not path.is_file():
            raise BioLinkError(Errors.E562.format(path=path))
        self.state_from_bytes(path.read_bytes())


def list_margins(scores) -> numpy.ndarray:
    """Each score's margin over the best other of its list (0 stands in for a missing
    second): the top's lead over the second, the others' (negative) gap to the top."""
    return numpy.array(_margins([float(score) for score in scores]), numpy.float64)


def _margins(scores: List[float]) -> List[float]:
    """list_margins in plain Python: the lists are short, and a numpy call per list costs
    more than the arithmetic (the stage scores a batch's lists with one numpy pass)."""
    if not scores:
        return []
    best = max(scores)
    ties = sum(1 for score in scores if score == best)
    # The best's margin is over the next score (0 where it is tied with another).
    second = sorted(scores)[-2] if len(scores) > 1 else 0.0
    lead = best - second if ties == 1 else 0.0
    return [lead if score == best else score - best for score in scores]


def fit_platt(scores: numpy.ndarray, margins: numpy.ndarray, right: numpy.ndarray,
              l2: float = 1e-4) -> List[float]:
    """Platt weights [w_score, w_margin, bias] by Newton's method on the log-loss (a small
    L2 penalty on the two weights keeps separable data finite). A feature whose weight
    comes out negative is dropped and the rest fitted again, so the weights are >= 0."""
    x = numpy.column_stack([numpy.asarray(v, numpy.float64) for v in (scores, margins)])
    y = numpy.asarray(right, numpy.float64)
    if not len(y):
        raise BioLinkError(Errors.E563.format(reason="no mention to fit on"))
    active = list(range(x.shape[1]))
    while True:
        w = _newton(numpy.column_stack([x[:, active], numpy.ones(len(y))]), y, l2)
        negative = [f for f, v in zip(active, w[:-1]) if v < 0]
        if not negative:
            out = [0.0] * x.shape[1] + [float(w[-1])]
            for f, v in zip(active, w[:-1]):
                out[f] = float(v)
            return out
        active = [f for f in active if f not in negative]


def _newton(x: numpy.ndarray, y: numpy.ndarray, l2: float, steps: int = 100) -> numpy.ndarray:
    w = numpy.zeros(x.shape[1])
    penalty = numpy.full(x.shape[1], l2 * len(y))
    penalty[-1] = 0.0  # the bias is not penalized
    for _ in range(steps):
        p = 1.0 / (1.0 + numpy.exp(-numpy.clip(x @ w, -500.0, 500.0)))
        grad = x.T @ (p - y) + penalty * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + numpy.diag(penalty + 1e-9)
        step = numpy.linalg.solve(hess, grad)
        w -= step
        if numpy.abs(step).max() < 1e-10:
            break
    return w


def expected_calibration_error(probs: numpy.ndarray, right: numpy.ndarray,
                               bins: int = 10) -> float:
    """The expected calibration error: over `bins` equal-width probability bins, the
    mean |accuracy - mean probability| weighted by the bin's share of mentions."""
    probs = numpy.asarray(probs, numpy.float64)
    right = numpy.asarray(right, numpy.float64)
    if not len(probs):
        return 0.0
    which = numpy.minimum((probs * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        in_bin = which == b
        if in_bin.any():
            total += in_bin.sum() * abs(right[in_bin].mean() - probs[in_bin].mean())
    return float(total / len(probs))
