"""Scores of a pair classifier: precision, recall, F1 at a threshold, ROC AUC, and the
threshold of maximal F1 on a precision-recall curve (chosen on dev, never on test).

The baseline every verifier is compared with is a string similarity: the TF-IDF
character-trigram cosine of the two names (scispaCy's and the linker's default
candidate generator), on the same pairs, its threshold chosen on dev the same way."""
from pathlib import Path
from typing import Dict, Sequence, Tuple

import numpy


def pair_scores(labels: Sequence[float], probs: Sequence[float], threshold: float) -> Dict:
    """Pairs with probability >= threshold are predicted synonyms."""
    labels = numpy.asarray(labels) > 0.5
    predicted = numpy.asarray(probs) >= threshold
    tp = int(numpy.count_nonzero(predicted & labels))
    fp = int(numpy.count_nonzero(predicted & ~labels))
    fn = int(numpy.count_nonzero(~predicted & labels))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    accuracy = float(numpy.mean(predicted == labels)) if len(labels) else 0.0
    return {"threshold": float(threshold), "precision": precision, "recall": recall, "f1": f1,
            "accuracy": accuracy, "tp": tp, "fp": fp, "fn": fn, "n": int(len(labels)),
            "positives": int(labels.sum())}


def roc_auc(labels: Sequence[float], probs: Sequence[float]) -> float:
    """Probability that a random positive scores above a random negative (ties count half)."""
    from scipy.stats import rankdata

    labels = numpy.asarray(labels) > 0.5
    n_pos = int(labels.sum())
    n_neg = len(labels) - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = rankdata(numpy.asarray(probs, dtype=numpy.float64))
    return float((ranks[labels].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def auc_by_negative_kind(labels: Sequence[float], kinds: Sequence[str],
                         scores: Sequence[float]) -> Dict[str, float]:
    """ROC AUC of `scores` over all pairs ("auc") and, for each kind of negative pair
    (make_pairs' "jaccard", "similar", "random"), over the positives and that kind alone
    ("auc_KIND")."""
    labels, kinds, scores = numpy.asarray(labels), numpy.asarray(kinds), numpy.asarray(scores)
    out = {"auc": roc_auc(labels, scores)}
    for kind in sorted(set(kinds.tolist()) - {"positive"}):
        keep = (kinds == kind) | (kinds == "positive")
        out[f"auc_{kind}"] = roc_auc(labels[keep], scores[keep])
    return out


def best_f1_threshold(labels: Sequence[float], probs: Sequence[float]) -> Tuple[float, float]:
    """(threshold, F1) maximising F1 over every distinct probability as the cut-off;
    the threshold is the midpoint to the next lower probability, so scores between the
    two classes on held-out data fall on the sensible side."""
    labels = numpy.asarray(labels) > 0.5
    probs = numpy.asarray(probs, dtype=numpy.float64)
    n_pos = int(labels.sum())
    if n_pos == 0 or len(probs) == 0:
        return 0.5, 0.0
    order = numpy.argsort(-probs, kind="stable")
    sorted_probs, sorted_labels = probs[order], labels[order]
    tp = numpy.cumsum(sorted_labels)
    predicted = numpy.arange(1, len(probs) + 1)
    # Only the last position of each run of equal probabilities is a real cut-off.
    last = numpy.r_[sorted_probs[1:] != sorted_probs[:-1], True]
    f1 = numpy.where(last, 2 * tp / (predicted + n_pos), -1.0)
    best = int(numpy.argmax(f1))
    below = sorted_probs[best + 1] if best + 1 < len(probs) else 0.0
    return float((sorted_probs[best] + below) / 2), float(f1[best])


def evaluate_pairs(labels: Sequence[float], probs: Sequence[float], thresholds: Dict[str, float]
                   ) -> Dict:
    """{"auc": .., "at_<name>": pair_scores at each named threshold}."""
    out = {"auc": roc_auc(labels, probs)}
    for name, threshold in thresholds.items():
        out[f"at_{name}"] = pair_scores(labels, probs, threshold)
    return out


def saved_verifier_pairs(path, dictionary) -> Dict:
    """The {"train", "dev", "test"} pair sets a trained verifier was made and scored with:
    the dictionary split again with the seed and pair settings of its meta.json."""
    from ..io.files import read_json
    from .name_pairs import dictionary_pairs

    meta = read_json(Path(path) / "meta.json", "Verifier meta.json", type=dict)
    return dictionary_pairs(dictionary, seed=meta.get("seed", 0), **meta.get("pair_settings", {}))


def evaluate_saved_verifier(path, dictionary) -> Dict:
    """Rebuild the verifier's held-out pairs (the dictionary split with the seed and pair
    settings in its meta.json) and score them: dev chooses the threshold, test is reported
    at 0.5 and at that threshold, next to the threshold saved at training time."""
    from ..linker.stages.verifier import CandidateVerifier

    verifier = CandidateVerifier.from_trained(path)
    pairs = saved_verifier_pairs(path, dictionary)
    dev_probs = verifier.score_pairs(pairs["dev"].pairs)
    threshold, dev_f1 = best_f1_threshold(pairs["dev"].labels, dev_probs)
    test_probs = verifier.score_pairs(pairs["test"].pairs)
    thresholds = {"0.5": 0.5, "dev": threshold, "saved": verifier.threshold}
    out = {"model": str(path), "threshold_dev": threshold, "dev_best_f1": dev_f1,
           "dev": evaluate_pairs(pairs["dev"].labels, dev_probs, thresholds),
           "test": evaluate_pairs(pairs["test"].labels, test_probs, thresholds),
           "test_by_kind": {}}
    out["baselines"] = {"tfidf_cosine": tfidf_baseline(dictionary, pairs)}
    test = pairs["test"]
    for kind in sorted(set(test.kinds) - {"positive"}):
        rows = [i for i, k in enumerate(test.kinds) if k in (kind, "positive")]
        out["test_by_kind"][kind] = evaluate_pairs(
            [test.labels[i] for i in rows], test_probs[rows], {"dev": threshold})
    return out


def tfidf_baseline(dictionary, pairs) -> Dict:
    """The TF-IDF character-trigram cosine as a pair classifier on the dev and test pairs
    of `pairs` (dictionary_pairs' output): fitted on every name of `dictionary` (no label
    is used, as the TF-IDF linker is fitted), threshold = max F1 on dev."""
    from ..encoders.siamese import tfidf_cosines
    from ..encoders.tfidf import CharNgramTfidf

    vectorizer = CharNgramTfidf("char_wb", (3, 3)).fit(list(dictionary.names))
    dev_scores = tfidf_cosines(vectorizer, pairs["dev"].pairs)
    threshold, dev_f1 = best_f1_threshold(pairs["dev"].labels, dev_scores)
    thresholds = {"dev": threshold}
    return {"threshold_dev": threshold, "dev_best_f1": dev_f1,
            "dev": evaluate_pairs(pairs["dev"].labels, dev_scores, thresholds),
            "test": evaluate_pairs(pairs["test"].labels,
                                   tfidf_cosines(vectorizer, pairs["test"].pairs), thresholds)}
