"""Training the learned reranker (linker/stages/learned_reranker.py) on a linker's own
candidates: `python -m spacy_biolink train configs/rank.cfg --output DIR
--paths.linker LINKER --paths.train TRAIN.PubTator --paths.dev DEV.PubTator`.

Each single-id mention of the train corpus is linked through the saved linker's one
entry point (every stage before a learned reranker of its own, composites kept whole,
the mention's type as its label), its first k candidates become a LightGBM lambdarank
group (the gold concept relevant, the others not), and training stops when dev NDCG@1
stops rising. Then, on dev: the softmax temperature that makes the ranker's scores
probabilities (negative log-likelihood of the gold); the calibration of the top
candidate's probability (Platt scaling, fitted on whether it is right, every dev mention
with candidates counted: gold outside the k and no-id mentions are wrong answers), saved
with the dev curve it gives (calibration.json) so that `LearnedReranker.v3`'s
`nil_precision` can pick its threshold at load; and, with nil_precision here, the
superseded v1 stage's
nil_threshold: the lowest softmax probability of the top candidate at which answered dev
mentions reach that precision.

Train the ranker on a linker whose dictionary does not hold the train mentions
(init-linker without --augment of the train corpus): there every train mention would
match itself exactly and the ranker would learn nothing else.
"""
import logging
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Set, Tuple

import numpy

from ..errors import BioLinkError, Errors
from ..io.files import make_dir
from .run import require_path

logger = logging.getLogger("spacy_biolink")


class LearnedRerankerTrainer:
    """The learned reranker's trainer (`spacy-biolink.LearnedRerankerTrainer.v2`; see the
    module docstring)."""

    def __init__(self, *, k: int = 20, num_leaves: int = 15, learning_rate: float = 0.05,
                 max_rounds: int = 500, early_stopping_rounds: int = 50,
                 min_data_in_leaf: int = 20, nil_precision: Optional[float] = None,
                 threads: int = 0, linker_name: Optional[str] = None,
                 cross_fit_folds: int = 0, retriever_features: bool = False):
        for name, value, low in (("k", k, 2), ("num_leaves", num_leaves, 2),
                                 ("max_rounds", max_rounds, 1),
                                 ("early_stopping_rounds", early_stopping_rounds, 1),
                                 ("min_data_in_leaf", min_data_in_leaf, 1), ("threads", threads, 0),
                                 ("cross_fit_folds", cross_fit_folds, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise BioLinkError(Errors.E530.format(setting=name, value=value,
                                                      what=f"an integer >= {low}"))
        if nil_precision is not None and not 0.0 < nil_precision < 1.0:
            raise BioLinkError(Errors.E530.format(setting="nil_precision", value=nil_precision,
                                                  what="null or a precision in (0, 1)"))
        self.k = k
        self.num_leaves = num_leaves
        self.learning_rate = learning_rate
        self.max_rounds = max_rounds
        self.early_stopping_rounds = early_stopping_rounds
        self.min_data_in_leaf = min_data_in_leaf
        self.nil_precision = nil_precision
        self.threads = threads
        self.linker_name = linker_name
        self.cross_fit_folds = cross_fit_folds
        # .v2: the stage's FEATURES_V3 (each retriever's own score and rank).
        self.retriever_features = bool(retriever_features)

    def __call__(self, config, output_dir: Path, *, resume: bool = False) -> Dict:
        """Train into `output_dir`: model.txt, learned_reranker.json, label_types.json,
        meta.json (dev acc@1 before and after, feature importance) and importance.png."""
        import lightgbm

        from ..io.files import atomic_file, json_text
        from ..linker.find import the_linker
        from ..linker.pipeline import load_linker_pipeline
        from ..linker.stages.learned_reranker import (CALIBRATION_FILE,
                                                      LABEL_TYPES_FILE, MODEL_FILE,
                                                      SETTINGS_FILE, LearnedReranker,
                                                      nil_threshold_for, platt)
        from ..linker.stages.reranker import fit_temperature, softmax_rows

        started = time.perf_counter()
        nlp = load_linker_pipeline(require_path(config, "linker"))
        pipe = the_linker(nlp, self.linker_name, command="train configs/rank.cfg")
        stage = LearnedReranker(k=self.k, retriever_features=self.retriever_features)
        features = stage.feature_names
        train_mentions, train_golds = gold_mentions(nlp, pipe, require_path(config, "train"))
        dev_mentions, dev_golds = gold_mentions(nlp, pipe, require_path(config, "dev"),
                                                keep_nil=True)
        stage.label_types = label_type_rates(pipe.dictionary, train_mentions, train_golds)
        if self.cross_fit_folds > 1:
            train, dev = self._cross_fitted(stage, config, train_mentions, train_golds,
                                            dev_mentions, dev_golds)
        else:
            train = candidate_groups(stage, pipe, train_mentions, train_golds)
            dev = candidate_groups(stage, pipe, dev_mentions, dev_golds)
        logger.info("learned reranker: %d train and %d dev mentions, %d and %d candidates",
                    len(train_mentions), len(dev_mentions), len(train.features),
                    len(dev.features))
        params = {"objective": "lambdarank", "metric": "ndcg", "eval_at": [1],
                  "num_leaves": self.num_leaves, "learning_rate": self.learning_rate,
                  "min_data_in_leaf": self.min_data_in_leaf, "verbosity": -1,
                  "num_threads": self.threads, "deterministic": True, "seed": 0,
                  "lambdarank_truncation_level": self.k}
        fit, fit_dev = train.trainable(), dev.trainable()
        if not len(fit.sizes) or not len(fit_dev.sizes):
            raise BioLinkError(Errors.E533.format(
                path=config.get("paths", {}).get("linker"),
                reason="no train or dev mention has its gold concept among the linker's k "
                       "candidates"))
        booster = lightgbm.train(
            params, lightgbm.Dataset(fit.features, fit.labels, group=fit.sizes),
            num_boost_round=self.max_rounds,
            valid_sets=[lightgbm.Dataset(fit_dev.features, fit_dev.labels, group=fit_dev.sizes)],
            callbacks=[lightgbm.early_stopping(self.early_stopping_rounds, verbose=False)])
        stage.set_model(booster.model_to_string(), stage.label_types)
        raw = stage.scores(dev.features)
        rows = dev.split(raw)
        positives = dev.split(dev.labels > 0)
        stage.temperature = fit_temperature(rows, positives)
        probs = [softmax_rows(r, stage.temperature) if len(r) else r for r in rows]
        top_right = numpy.array([bool(len(p)) and bool(pos[int(numpy.argmax(p))])
                                 for p, pos in zip(probs, positives)])
        top_prob = numpy.array([float(p.max()) if len(p) else 0.0 for p in probs])
        before = numpy.array([bool(len(pos)) and bool(pos[0]) for pos in positives])
        linkable = numpy.array([bool(g) for g in dev.golds])
        if self.nil_precision is not None:
            stage.nil_threshold = nil_threshold_for(top_prob, top_right, self.nil_precision)
        answered = numpy.array([bool(len(p)) for p in probs])
        weights = fit_platt(top_prob[answered], top_right[answered])
        confidence = platt(top_prob[answered], *weights)
        calibration = {"platt": list(weights), "dev_confidence": confidence.tolist(),
                       "dev_right": top_right[answered].tolist()}
        importance = dict(zip(features, booster.feature_importance("gain").tolist()))
        meta = {"method": "learned_reranker", "features": list(features),
                "best_iteration": booster.best_iteration,
                "dev_acc@1_before": float(before[linkable].mean()) if linkable.any() else 0.0,
                "dev_acc@1": float(top_right[linkable].mean()) if linkable.any() else 0.0,
                "dev_mentions": int(linkable.sum()), "dev_nil_mentions": int((~linkable).sum()),
                "temperature": stage.temperature, "nil_threshold": stage.nil_threshold,
                "platt": list(weights),
                "dev_brier_softmax": _brier(top_prob[answered], top_right[answered]),
                "dev_brier_calibrated": _brier(confidence, top_right[answered]),
                "importance_gain": importance, "seconds": round(time.perf_counter() - started, 1),
                "settings": {key: value for key, value in vars(self).items()}}
        make_dir(output_dir)
        with atomic_file(output_dir / MODEL_FILE) as fileh:
            fileh.write(booster.model_to_string())
        with atomic_file(output_dir / LABEL_TYPES_FILE) as fileh:
            fileh.write(json_text(stage.label_types, indent=2))
        with atomic_file(output_dir / "meta.json") as fileh:
            fileh.write(json_text(meta, indent=2))
        with atomic_file(output_dir / CALIBRATION_FILE) as fileh:
            fileh.write(json_text(calibration))
        # Written last: a directory with it holds a complete ranker.
        with atomic_file(output_dir / SETTINGS_FILE) as fileh:
            fileh.write(json_text({"k": stage.k, "temperature": stage.temperature,
                                   "nil_threshold": stage.nil_threshold,
                                   "nil_precision": self.nil_precision,
                                   "features": list(features)}, indent=2))
        _plot_importance(importance, output_dir / "importance.png")
        logger.info("learned reranker: dev acc@1 %.4f -> %.4f in %.0f s (best round %d)",
                    meta["dev_acc@1_before"], meta["dev_acc@1"], meta["seconds"],
                    booster.best_iteration)
        return meta


    def _cross_fitted(self, stage, config, train_mentions, train_golds, dev_mentions, dev_golds
                      ) -> Tuple["CandidateGroups", "CandidateGroups"]:
        """Candidates as a linker augmented with corpus mentions gives them (BioSyn's
        protocol), without a mention finding itself: the train documents are cut into
        folds, and each fold is linked by the linker plus the other folds' mentions as
        names (as add_names adds them); dev by the linker plus every train mention. One
        linker serves every fold, its names encoded once (NameVectorCache): only the
        mentions new to it are encoded for each fold."""
        from ..linker.find import the_linker
        from ..linker.pipeline import load_linker_pipeline

        nlp = load_linker_pipeline(require_path(config, "linker"))
        pipe = the_linker(nlp, self.linker_name, command="train configs/rank.cfg")
        base = pipe.dictionary
        cache = NameVectorCache(pipe.linker.encode)

        def augmented(mentions, golds):
            pairs = [(" ".join(m.text.split()), base.primary_id(min(g)))
                     for m, g in zip(mentions, golds) if g and m.text.strip()]
            dictionary, _ = base.with_names(pairs, source="<add_names>")
            pipe.linker.index_names(dictionary, encode=cache)
            return pipe

        docs = {id(m.doc): i for i, m in enumerate(dict.fromkeys(m.doc for m in train_mentions))}
        fold_of = [docs[id(m.doc)] % self.cross_fit_folds for m in train_mentions]
        folds = []
        for fold in range(self.cross_fit_folds):
            inside = [i for i, f in enumerate(fold_of) if f == fold]
            others = [i for i, f in enumerate(fold_of) if f != fold]
            pipe = augmented([train_mentions[i] for i in others], [train_golds[i] for i in others])
            folds.append(candidate_groups(stage, pipe, [train_mentions[i] for i in inside],
                                          [train_golds[i] for i in inside]))
        train = CandidateGroups(numpy.concatenate([f.features for f in folds]),
                                numpy.concatenate([f.labels for f in folds]),
                                [s for f in folds for s in f.sizes],
                                [g for f in folds for g in f.golds])
        dev = candidate_groups(stage, augmented(train_mentions, train_golds), dev_mentions,
                               dev_golds)
        return train, dev


class NameVectorCache:
    """The vectors of normalized names, each encoded once: called with a list of names,
    it encodes those it has not seen (with `encode`) and gives every name's row, sparse
    or dense as the encoder gives them."""

    def __init__(self, encode):
        self.encode = encode
        self.rows: Dict[str, int] = {}
        self.parts: List = []

    def __call__(self, names: Sequence[str]):
        """The rows of `names` (in their order), encoding only those not seen before."""
        from scipy import sparse

        new = [n for n in dict.fromkeys(names) if n not in self.rows]
        if new:
            first = len(self.rows)
            self.rows.update((n, first + i) for i, n in enumerate(new))
            self.parts.append(self.encode(new))
            if len(self.parts) > 1:
                stack = sparse.vstack if sparse.issparse(self.parts[0]) else numpy.vstack
                self.parts = [stack(self.parts, format="csr") if stack is sparse.vstack
                              else stack(self.parts)]
        return self.parts[0][numpy.fromiter((self.rows[n] for n in names), numpy.int64,
                                            len(names))]


def gold_mentions(nlp, pipe, corpus, *, keep_nil: bool = False) -> Tuple[List, List[Set[int]]]:
    """The corpus' single-id mentions whose id is in the linker's dictionary (and, with
    keep_nil, those without an id, gold empty), as Mentions labelled by their type."""
    from ..corpora.pubtator import read_pubtator
    from ..kb.ids import split_gold_id_parts
    from ..linker.policy import Mention

    dictionary = pipe.dictionary
    mentions, golds = [], []
    for document in read_pubtator(corpus):
        doc = nlp.make_doc(document.text)
        for m in document.mentions:
            parts = split_gold_id_parts(m.raw_ids)
            if len(parts) > 1:
                continue
            gold = {dictionary.concept_index(i) for i in (parts[0] if parts else [])} - {None}
            if gold or (keep_nil and not (parts and parts[0])):
                mentions.append(Mention(doc, m.start, m.end, m.text, m.type))
                golds.append(gold)
    return mentions, golds


def label_type_rates(dictionary, mentions: Sequence, golds: Sequence[Set[int]]
                     ) -> Dict[str, Dict[str, float]]:
    """For each span label, the share of its training mentions whose gold concept has
    each type (empty when the dictionary has no types)."""
    if dictionary.types is None:
        return {}
    counts: Dict[str, Dict[str, int]] = {}
    totals: Dict[str, int] = {}
    for mention, gold in zip(mentions, golds):
        label = mention.label or ""
        totals[label] = totals.get(label, 0) + 1
        types = {t for c in gold for t in (dictionary.types[c] or "").split("|") if t}
        for t in types:
            counts.setdefault(label, {})[t] = counts.get(label, {}).get(t, 0) + 1
    return {label: {t: n / totals[label] for t, n in by_type.items()}
            for label, by_type in counts.items()}


class CandidateGroups:
    """Feature rows of every mention's candidates, their relevance, and group sizes."""

    def __init__(self, features: numpy.ndarray, labels: numpy.ndarray, sizes: List[int],
                 golds: List[Set[int]]):
        self.features = features
        self.labels = labels
        self.sizes = sizes
        self.golds = golds

    def split(self, values: numpy.ndarray) -> List[numpy.ndarray]:
        """`values` (one per feature row) cut into the groups."""
        bounds = numpy.cumsum([0] + self.sizes)
        return [values[a:b] for a, b in zip(bounds[:-1], bounds[1:])]

    def trainable(self) -> "CandidateGroups":
        """The groups lambdarank learns from: two candidates or more, one of them right."""
        keep = [len(r) > 1 and r.any() for r in self.split(self.labels)]
        rows = numpy.concatenate([numpy.full(size, k) for size, k in zip(self.sizes, keep)]) \
            if self.sizes else numpy.zeros(0, bool)
        return CandidateGroups(self.features[rows.astype(bool)], self.labels[rows.astype(bool)],
                               [s for s, k in zip(self.sizes, keep) if k],
                               [g for g, k in zip(self.golds, keep) if k])


def candidate_groups(stage, pipe, mentions: Sequence, golds: Sequence[Set[int]]
                     ) -> CandidateGroups:
    """Link `mentions` through the pipe (every stage before a learned reranker of its
    own, composites whole) and compute the stage's features of their first k candidates."""
    from ..linker.stages.learned_reranker import LearnedReranker

    stop = next((name for name, s in pipe.stages.items() if isinstance(s, LearnedReranker)), None)
    links = pipe.link(list(mentions), stage.k, parts=lambda i, text: [text], stop_before=stop)
    features = stage.features(pipe.linker, mentions, links)
    labels, sizes = [], []
    for (_, candidates), gold in zip((parts[0] for parts in links), golds):
        candidates = candidates[:stage.k]
        sizes.append(len(candidates))
        labels.extend(1 if c in gold else 0 for c, _ in candidates)
    return CandidateGroups(features, numpy.asarray(labels, dtype=numpy.int32), sizes, list(golds))


def fit_platt(top_prob: numpy.ndarray, right: numpy.ndarray) -> Tuple[float, float]:
    """Platt scaling: (a, b) of sigmoid(a * logit(p) + b) minimizing the log loss of
    whether each top candidate (softmax probability p) is right; (1, 0), the identity,
    where dev has only right or only wrong answers."""
    from scipy.optimize import minimize

    right = numpy.asarray(right, numpy.float64)
    if not len(right) or right.min() == right.max():
        return 1.0, 0.0
    p = numpy.clip(numpy.asarray(top_prob, numpy.float64), 1e-12, 1.0 - 1e-12)
    x = numpy.log(p / (1.0 - p))

    def loss(w):
        z = w[0] * x + w[1]
        # log(1 + e^z) - y z, and its gradient, without overflow
        value = numpy.logaddexp(0.0, z) - right * z
        residual = 1.0 / (1.0 + numpy.exp(-z)) - right
        return value.sum(), numpy.array([(residual * x).sum(), residual.sum()])

    found = minimize(loss, numpy.array([1.0, 0.0]), jac=True, method="L-BFGS-B")
    return float(found.x[0]), float(found.x[1])


def _brier(confidence: numpy.ndarray, right: numpy.ndarray) -> float:
    return float(numpy.mean((confidence - right) ** 2)) if len(right) else 0.0


def _plot_importance(importance: Dict[str, float], path: Path) -> None:
    """A bar chart of each feature's total gain, where matplotlib is installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    names = sorted(importance, key=importance.get)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.barh(names, [importance[n] for n in names])
    ax.set_xlabel("total gain")
    ax.set_title("Learned reranker: feature importance")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
