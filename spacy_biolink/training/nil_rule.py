"""Fitting the verifier's NIL rules on a dev corpus (seed 004; the rules themselves are in
linker/stages/verifier.py).

fit_nil_rules picks, for each rule, the setting that makes the most mentions NIL for at
most a given loss of acc@1; "combined" also fits the mix of logit(p) and the retrieval
score with a small logistic regression. choose_nil_rule keeps the best of them.
"""
from typing import Dict, Optional, Sequence

import numpy

from ..linker.stages.verifier import NIL_RULES, logit


def fit_logistic(features: numpy.ndarray, labels: Sequence[bool], *, l2: float = 1e-3,
                 iterations: int = 50) -> numpy.ndarray:
    """Weights (one per feature column, then the bias) of an L2-regularised logistic
    regression of `labels` on `features`, by Newton's method on standardised columns."""
    x = numpy.asarray(features, dtype=numpy.float64)
    y = numpy.asarray(labels, dtype=numpy.float64)
    mean, std = x.mean(axis=0), x.std(axis=0)
    std[std == 0] = 1.0
    z = numpy.hstack([(x - mean) / std, numpy.ones((len(x), 1))])
    w = numpy.zeros(z.shape[1])
    penalty = l2 * len(x) * numpy.diag([1.0] * (z.shape[1] - 1) + [0.0])
    for _ in range(iterations):
        p = 1.0 / (1.0 + numpy.exp(-(z @ w)))
        gradient = z.T @ (p - y) + penalty @ w
        hessian = (z * (p * (1 - p))[:, None]).T @ z + penalty + 1e-9 * numpy.eye(len(w))
        step = numpy.linalg.solve(hessian, gradient)
        w -= step
        if numpy.abs(step).max() < 1e-8:
            break
    weights = w[:-1] / std
    return numpy.r_[weights, w[-1] - float(weights @ mean)]


def nil_curve(confidence: Sequence[float], correct: Sequence[bool], linkable: Sequence[bool],
              is_nil: Sequence[bool], always_nil: Optional[Sequence[bool]] = None
              ) -> Dict[str, numpy.ndarray]:
    """Answering NIL for every mention whose `confidence` is below t, for every t that
    makes a difference (the midpoints between distinct values, and below all of them):
    {"threshold", "accuracy_lost" (share of linkable mentions right at acc@1 that are
    lost), "nil_recall" (share of the is_nil mentions answered NIL)}, from rejecting
    the fewest upwards. `always_nil` mentions (no candidate, or rejected by another
    part of a rule) are NIL at every point."""
    conf = numpy.asarray(confidence, dtype=numpy.float64)
    forced = 0
    if always_nil is not None:
        always_nil = numpy.asarray(always_nil, dtype=bool)
        conf = numpy.where(always_nil, -numpy.inf, conf)
        forced = int(always_nil.sum())
    correct = numpy.asarray(correct, dtype=bool)
    linkable = numpy.asarray(linkable, dtype=bool)
    is_nil = numpy.asarray(is_nil, dtype=bool)
    order = numpy.argsort(conf, kind="stable")
    values = conf[order]
    lost = numpy.r_[0, numpy.cumsum((correct & linkable)[order])] / max(int(linkable.sum()), 1)
    nil = numpy.r_[0, numpy.cumsum(is_nil[order])] / max(int(is_nil.sum()), 1)
    # Cut after position j (reject the j lowest) only where values[j-1] < values[j].
    cuts = numpy.r_[0, numpy.flatnonzero(values[1:] > values[:-1]) + 1, len(values)]
    cuts = numpy.unique(cuts[cuts >= forced])
    below = numpy.r_[values, numpy.inf]
    above = numpy.r_[-numpy.inf, values]
    thresholds = numpy.where(numpy.isinf(below[cuts]), above[cuts] + 1e-6,
                             numpy.where(numpy.isinf(above[cuts]), below[cuts] - 1e-6,
                                         (above[cuts] + below[cuts]) / 2))
    return {"threshold": thresholds, "accuracy_lost": lost[cuts], "nil_recall": nil[cuts]}


def best_point(curve: Dict[str, numpy.ndarray], max_accuracy_loss: float) -> int:
    """The point of a curve with the highest NIL recall among those losing at most
    `max_accuracy_loss` acc@1 (the least loss among equals)."""
    allowed = curve["accuracy_lost"] <= max_accuracy_loss + 1e-12
    recall = numpy.where(allowed, curve["nil_recall"], -1.0)
    best = recall.max()
    candidates = numpy.flatnonzero(recall == best)
    return int(candidates[numpy.argmin(curve["accuracy_lost"][candidates])])


def fit_nil_rules(probs: Sequence[float], scores: Sequence[float], correct: Sequence[bool],
                  linkable: Sequence[bool], is_nil: Sequence[bool],
                  has_candidate: Optional[Sequence[bool]] = None, *,
                  max_accuracy_loss: float = 0.02, grid: int = 40) -> Dict[str, Dict]:
    """Each NIL rule's settings fitted on dev mentions: per mention, the top candidate's
    p(synonym) and retrieval score, whether it is right, whether the mention is linkable
    or NIL, and whether it has a candidate at all. Each rule answers NIL as often as it
    can on the NIL mentions while losing at most `max_accuracy_loss` (a share, 0.02 = 2
    points) of acc@1 on the linkable ones; "combined" also chooses the direction of its
    margin (see below). Also "score" (the score alone, bio_linker's
    `threshold`), for comparison. Each entry has its dev "accuracy_lost" and
    "nil_recall"."""
    probs = numpy.asarray(probs, dtype=numpy.float64)
    scores = numpy.asarray(scores, dtype=numpy.float64)
    none = (numpy.zeros(len(probs), dtype=bool) if has_candidate is None
            else ~numpy.asarray(has_candidate, dtype=bool))
    args = (correct, linkable, is_nil, none)
    out: Dict[str, Dict] = {}

    def point(curve, **settings):
        i = best_point(curve, max_accuracy_loss)
        return {**settings, "accuracy_lost": float(curve["accuracy_lost"][i]),
                "nil_recall": float(curve["nil_recall"][i]), "_i": i}

    p_curve = nil_curve(probs, *args)
    fitted = point(p_curve)
    out["verifier"] = {"threshold": float(numpy.clip(p_curve["threshold"][fitted["_i"]], 0, 1)),
                       **fitted}
    curve = nil_curve(scores, *args)
    fitted = point(curve)
    out["score"] = {"score_threshold": float(curve["threshold"][fitted["_i"]]), **fitted}
    # "either": t1 among the p cuts that lose little enough on their own (`grid` of them,
    # evenly spaced, and always the last), then the best t2 for each.
    best = None
    feasible = numpy.flatnonzero(p_curve["accuracy_lost"] <= max_accuracy_loss + 1e-12)
    picks = numpy.unique(numpy.r_[feasible[numpy.linspace(0, len(feasible) - 1, grid)
                                           .round().astype(int)], feasible[-1]])
    for t1 in numpy.clip(p_curve["threshold"][picks], 0.0, 1.0):
        curve = nil_curve(scores, correct, linkable, is_nil, none | (probs < t1))
        fitted = point(curve)
        if fitted["accuracy_lost"] > max_accuracy_loss + 1e-12:
            continue  # t1 alone loses too much
        key = (fitted["nil_recall"], -fitted["accuracy_lost"])
        if best is None or key > best[0]:
            best = (key, {"threshold": float(t1),
                          "score_threshold": float(curve["threshold"][fitted["_i"]]), **fitted})
    out["either"] = best[1]
    # "combined": the margin's direction is the logistic regression's ("is the top
    # candidate right?") or one of `grid` + 1 mixes of the standardised logit(p) and
    # score, whichever answers NIL most often within the budget; its bias is the cut.
    features = numpy.c_[logit(probs), scores]
    std = features[~none].std(axis=0) if (~none).any() else numpy.ones(2)
    std[std == 0] = 1.0
    fitted_lr = fit_logistic(features[~none], numpy.asarray(correct, dtype=bool)[~none])
    angles = numpy.linspace(0.0, numpy.pi / 2, grid + 1)
    directions = [fitted_lr[:2]] + [numpy.array([numpy.cos(a), numpy.sin(a)]) / std
                                    for a in angles]
    best = None
    for direction in directions:
        curve = nil_curve(features @ direction, *args)
        fitted = point(curve)
        key = (fitted["nil_recall"], -fitted["accuracy_lost"])
        if best is None or key > best[0]:
            cut = float(curve["threshold"][fitted["_i"]])
            best = (key, {"weights": [float(direction[0]), float(direction[1]), -cut],
                          **fitted})
    out["combined"] = best[1]
    for settings in out.values():
        del settings["_i"]
    return out


def choose_nil_rule(fitted: Dict[str, Dict]) -> str:
    """The rule of fit_nil_rules' output with the most dev NIL answers (the simpler one,
    in NIL_RULES order, among equals): what nil_rule = "auto" applies."""
    return max(NIL_RULES, key=lambda r: (fitted[r]["nil_recall"], -NIL_RULES.index(r)))
