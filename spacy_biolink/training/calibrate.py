"""Fit a linker's score calibration (linker/stages/calibration.py) on dev gold mentions.

Each gold mention of the dev corpora is linked as the pipeline links it (its own
abbreviation, composite and stage rules) up to the calibration stage; its top candidate
is right when one of that concept's ids is a gold id (every part right, for a split
composite), and so is each of its first FIT_DEPTH candidates. Mentions whose ids are not in the dictionary, or that have none, stay in: a
linker meets them in use, and for them a NIL is the right answer. Fitted: Platt weights
on those candidates' (score, margin over the best other), one set for the first
candidates and one for the rest; chosen: the NIL threshold, the highest
probability under which the mentions made NIL were wrong links at least `nil_precision`
of the time in each corpus (so a NIL rarely costs a good link, on any of them). `calibrate_pipeline` writes a copy of
the pipeline with the stage and that threshold.
"""
import copy
from pathlib import Path
from typing import AbstractSet, Dict, List, Optional, Sequence, Tuple

import numpy
from spacy.language import Language

from ..corpora.pubtator import read_pubtator
from ..corpora.types import corpus_types_for, gold_id_parts, six_type_label
from ..errors import BioLinkError, Errors
from ..io.files import atomic_directory
from ..io.util import PathLike
from ..linker.find import the_linker_pipe
from ..linker.policy import Mention
from ..linker.stages.calibration import (ScoreCalibration, expected_calibration_error,
                                         fit_platt, list_margins)
from ..text.docs import make_doc

STAGE_NAME = "calibration"
# How many of a mention's candidates the fit sees (bio_linker's max_entities_per_mention
# default: what kb_ents shows).
FIT_DEPTH = 5
STAGE_BLOCK = {"@misc": "spacy-biolink.ScoreCalibration.v1", "method": "platt"}


def mention_rows(nlp: Language, corpus: PathLike, *, linker: Optional[str] = None,
                 types: Optional[Sequence[str]] = None, batch_size: int = 256,
                 exclude_pmids: AbstractSet[str] = frozenset()) -> Dict[str, numpy.ndarray]:
    """One row per gold mention of `corpus` that the linker takes (its labels; `types`
    keeps those types only): the top candidate's score and margin before the calibration
    stage, whether it is right, whether a gold id is in the dictionary, and whether the
    linker found any candidate (a mention with none is NIL whatever the threshold); and
    under "candidates", one row per candidate of the first FIT_DEPTH of each mention
    (score, margin, first or not, right), what the weights are fitted on."""
    _, pipe = the_linker_pipe(nlp, linker, command="calibrate")
    policy = pipe.linker
    stop = STAGE_NAME if STAGE_NAME in policy.stages else None
    dictionary = pipe.dictionary
    labels = set(pipe.cfg.get("labels") or ())
    wanted = set(types) | corpus_types_for(types) if types else None
    rows: List[Tuple[float, float, bool, bool, bool]] = []
    candidate_rows: List[Tuple[float, float, float, bool]] = []
    mentions: List[Mention] = []
    golds: List[set] = []

    def flush() -> None:
        for gold, parts in zip(golds, policy.link(mentions, stop_before=stop)):
            row, candidates = _rows(dictionary, gold, parts)
            rows.append(row)
            candidate_rows.extend(candidates)
        mentions.clear()
        golds.clear()

    for pdoc in read_pubtator(corpus, types=wanted):
        if pdoc.pmid in exclude_pmids:
            continue
        doc = make_doc(nlp, pdoc.text, f"{corpus}: PMID {pdoc.pmid}")
        for m in pdoc.mentions:
            label = (six_type_label(m.type) or m.type) if labels and m.type not in labels \
                else m.type
            if labels and label not in labels:
                continue
            mentions.append(Mention(doc, m.start, m.end, m.text, label))
            golds.append({i for part in gold_id_parts(m.raw_ids, m.type) for i in part})
        if len(mentions) >= batch_size:
            flush()
    if mentions:
        flush()
    names = ("score", "margin", "right", "linkable", "found")
    table = numpy.array(rows, dtype=numpy.float64).reshape(-1, len(names))
    out = {name: table[:, i] for i, name in enumerate(names)}
    for name in ("right", "linkable", "found"):
        out[name] = out[name].astype(bool)
    table = numpy.array(candidate_rows, dtype=numpy.float64).reshape(-1, 4)
    out["candidates"] = {"score": table[:, 0], "margin": table[:, 1], "top": table[:, 2],
                         "right": table[:, 3].astype(bool)}
    return out


def _rows(dictionary, gold: set, parts) -> Tuple[Tuple, List[Tuple]]:
    """The mention's row and its candidates' rows (mention_rows)."""
    linkable = any(dictionary.concept_index(i) is not None for i in gold)
    lists = [candidates[:FIT_DEPTH] for _, candidates in parts if candidates]
    if len(lists) < len(parts) or not lists:
        return (0.0, 0.0, False, linkable, False), []

    def hits(c) -> bool:
        return bool(gold & ({c} if isinstance(c, str) else set(dictionary.ids_of(c))))

    right = all(hits(candidates[0][0]) for candidates in lists)
    # A split composite is as sure as its least sure part.
    weakest = min(lists, key=lambda candidates: candidates[0][1])
    scores = numpy.array([score for _, score in weakest], numpy.float64)
    margins = list_margins(scores)
    candidates = [(float(s), float(m), float(i == 0), hits(c))
                  for i, ((c, _), s, m) in enumerate(zip(weakest, scores, margins))]
    return (float(scores[0]), float(margins[0]), right, linkable, True), candidates


def nil_threshold_for(probs: numpy.ndarray, right: numpy.ndarray, precision: float) -> float:
    """The highest threshold t such that the mentions with probability < t are wrong links
    at least `precision` of the time (0.0, no NIL, if even the least sure one is right)."""
    return nil_threshold_for_each([(probs, right)], precision)


def nil_threshold_for_each(corpora: Sequence[Tuple[numpy.ndarray, numpy.ndarray]],
                           precision: float) -> float:
    """The highest threshold t such that, in each of `corpora` ((probabilities, right)
    pairs), the mentions with probability < t are none or wrong links at least
    `precision` of the time: one corpus's many sure NILs cannot pay for another's good
    links made NIL."""
    pooled = numpy.concatenate([probs for probs, _ in corpora])
    if not len(pooled):
        return 0.0
    # Each distinct probability makes the ones under it NIL; past the highest, all are.
    candidates = numpy.append(numpy.unique(pooled),
                              numpy.nextafter(pooled.max(), numpy.inf))
    # A threshold that makes nothing NIL is 0.0.
    allowed = candidates > pooled.min()
    for probs, right in corpora:
        order = numpy.argsort(probs, kind="stable")
        n_nil = numpy.searchsorted(probs[order], candidates, side="left")
        wrong_nil = numpy.concatenate([[0], numpy.cumsum(~right[order])])[n_nil]
        allowed &= (n_nil == 0) | (wrong_nil >= precision * n_nil)
    return float(candidates[allowed].max()) if allowed.any() else 0.0


def reliability(probs: numpy.ndarray, right: numpy.ndarray, threshold: float) -> Dict:
    """How far the probabilities can be trusted: ECE, accuracy against mean probability,
    and at `threshold` the share of mentions made NIL and how many of those were wrong
    links (NIL precision) and how many of the answered ones were right."""
    nil = probs < threshold
    return {"n": int(len(probs)), "accuracy": float(right.mean()) if len(right) else 0.0,
            "mean_probability": float(probs.mean()) if len(probs) else 0.0,
            "ece": expected_calibration_error(probs, right), "threshold": float(threshold),
            "nil_rate": float(nil.mean()) if len(nil) else 0.0,
            "nil_precision": float((~right[nil]).mean()) if nil.any() else None,
            "answered_precision": float(right[~nil].mean()) if (~nil).any() else None}


def row_probabilities(stage: ScoreCalibration, rows: Dict) -> numpy.ndarray:
    """Each mention's top candidate's calibrated probability; a mention with no candidate
    is NIL whatever the threshold: 0."""
    probs = stage.probabilities(rows["score"], rows["margin"], numpy.ones(len(rows["score"])))
    return numpy.where(rows["found"], probs, 0.0)


def fit_calibration(nlp: Language, corpora: Sequence[Tuple[PathLike, Optional[Sequence[str]]]],
                    *, linker: Optional[str] = None, nil_precision: float = 0.95,
                    exclude_pmids: AbstractSet[str] = frozenset()
                    ) -> Tuple[ScoreCalibration, float, Dict]:
    """The fitted stage (on all `corpora` together: (path, types or None) pairs; documents
    of `exclude_pmids` left out), the NIL threshold that keeps NIL precision on each
    corpus (nil_threshold_for_each) and a report with each corpus's reliability and the
    pooled one."""
    return fit_rows(corpus_rows(nlp, corpora, linker=linker, exclude_pmids=exclude_pmids),
                    nil_precision=nil_precision)


def corpus_rows(nlp: Language, corpora: Sequence[Tuple[PathLike, Optional[Sequence[str]]]],
                *, linker: Optional[str] = None,
                exclude_pmids: AbstractSet[str] = frozenset()) -> Dict[str, Dict]:
    """mention_rows of each of `corpora` ((path, types or None) pairs) by `nlp`'s linker,
    keyed by path: what fit_rows takes."""
    return {str(path): mention_rows(nlp, path, linker=linker, types=types,
                                    exclude_pmids=exclude_pmids)
            for path, types in corpora}


def fit_rows(per_corpus: Dict[str, Dict[str, numpy.ndarray]], *, nil_precision: float = 0.95
             ) -> Tuple[ScoreCalibration, float, Dict]:
    """fit_calibration on rows already read (corpus name -> mention_rows' arrays)."""
    if not 0.0 < nil_precision < 1.0:
        raise BioLinkError(Errors.E560.format(setting="nil_precision", value=nil_precision,
                                              what="a share in (0, 1)"))
    pooled = {key: numpy.concatenate([rows[key] for rows in per_corpus.values()])
              for key in ("score", "margin", "right", "found")}
    fit = {key: numpy.concatenate([rows["candidates"][key] for rows in per_corpus.values()])
           for key in ("score", "margin", "top", "right")}
    if not pooled["found"].any():
        raise BioLinkError(Errors.E563.format(
            reason=f"no gold mention of {', '.join(per_corpus)} got a candidate"))
    weights = []
    for first in (True, False):
        group = (fit["top"] > 0) == first
        # Lists of one candidate leave the others' weights nothing: the first's serve.
        group = group if group.any() else fit["top"] > 0
        weights += fit_platt(fit["score"][group], fit["margin"][group], fit["right"][group])
    stage = ScoreCalibration()
    stage.set_weights(weights)

    probs = row_probabilities(stage, pooled)
    threshold = nil_threshold_for_each(
        [(row_probabilities(stage, rows), rows["right"]) for rows in per_corpus.values()],
        nil_precision)
    report = {"weights": weights, "features": ["score", "margin"], "groups": ["top", "other"],
              "nil_precision_target": nil_precision, "threshold": threshold,
              "pooled": reliability(probs, pooled["right"], threshold),
              "corpora": {path: {**reliability(row_probabilities(stage, rows), rows["right"],
                                               threshold),
                                 "ece_other_candidates": _other_candidates_ece(stage, rows),
                                 "not_in_dictionary": int((~rows["linkable"]).sum()),
                                 "no_candidate": int((~rows["found"]).sum())}
                          for path, rows in per_corpus.items()}}
    stage.set_weights(weights, report)
    return stage, threshold, report


def _other_candidates_ece(stage: ScoreCalibration, rows: Dict) -> float:
    """The calibration error of the candidates after each mention's first."""
    c = rows["candidates"]
    other = c["top"] == 0
    return expected_calibration_error(
        stage.probabilities(c["score"][other], c["margin"][other], c["top"][other]),
        c["right"][other])


def calibrate_pipeline(model: PathLike, output: PathLike,
                       corpora: Sequence[Tuple[PathLike, Optional[Sequence[str]]]], *,
                       linker: Optional[str] = None, nil_precision: float = 0.95,
                       fit_with: Optional[PathLike] = None,
                       unseen: Sequence[Tuple[PathLike, Optional[Sequence[str]]]] = (),
                       exclude_pmids: AbstractSet[str] = frozenset()) -> Dict:
    """Load `model`, fit its linker's calibration on `corpora` and save a copy in `output`
    with the `calibration` stage (its weights in stages/calibration, JSON) and the chosen
    NIL threshold as the linker's `threshold`, swapped in whole (an existing `output` is
    replaced: the command line checks it first). Returns the fit's report.

    fit_with: a pipeline whose linker is `model`'s (the same component settings) over
        names that hold none of the dev corpora's mentions: the fit runs on it and the
        calibration is written into `model`'s copy. A linker whose names include the dev
        mentions (the packaged one, built on train + dev) would find each of them by its
        own text there, and be calibrated as surer than it is on new text.
    unseen: dev corpora none of whose mentions `model`'s names hold (none of its
        `--augment` corpora): their rows come from `model`'s linker itself, even with
        `fit_with`, so that on them the calibration and the NIL threshold are fitted on
        the linker as shipped (a fit linker with fewer names gives other margins).
    exclude_pmids: documents of `corpora` to leave out (those measured elsewhere, where a
        corpus new to this linker holds another corpus's test documents)."""
    from ..linker.pipeline import load_linker_pipeline

    # a missing or damaged directory is named, as by every command that loads one
    nlp = load_linker_pipeline(model)
    name, pipe = the_linker_pipe(nlp, linker, command="calibrate", path=model)
    _check_unseen(nlp, name, model, corpora, unseen)
    fit_nlp, fit_name = nlp, name
    if fit_with is not None:
        fit_nlp = load_linker_pipeline(fit_with)
        fit_name, _ = the_linker_pipe(fit_nlp, linker, command="calibrate", path=fit_with)
        _check_same_linker(nlp, name, model, fit_nlp, fit_name, fit_with)
    per_corpus = {**corpus_rows(fit_nlp, corpora, linker=fit_name, exclude_pmids=exclude_pmids),
                  **corpus_rows(nlp, unseen, linker=name, exclude_pmids=exclude_pmids)}
    stage, threshold, report = fit_rows(per_corpus, nil_precision=nil_precision)
    if fit_with is not None:
        report["fitted_with"] = str(fit_with)
    if unseen:
        report["fitted_on_the_model"] = [str(path) for path, _ in unseen]
    stage.set_weights(stage.weights, report)  # the saved report says what each corpus used
    with atomic_directory(output, force=True) as tmp:
        _write_calibrated(nlp, name, stage, threshold, tmp)
    return report


def _check_unseen(nlp: Language, name: str, model: PathLike,
                  corpora: Sequence[Tuple[PathLike, Optional[Sequence[str]]]],
                  unseen: Sequence[Tuple[PathLike, Optional[Sequence[str]]]]) -> None:
    """E565 for a corpus given twice, or given as unseen though `model` was built with
    its mentions among its names (its init config's `augment` list names it)."""
    given = [Path(path).resolve() for path, _ in list(corpora) + list(unseen)]
    twice = sorted({str(path) for path in given if given.count(path) > 1})
    if twice:
        raise BioLinkError(Errors.E565.format(
            corpus=twice[0], reason="given twice (as --corpus or --unseen-corpus): each "
                                    "corpus is one set of rows, so give it once"))
    init = nlp.config.get("initialize", {}).get("components", {}).get(name, {}) or {}
    augmented = {Path(str(path)).resolve() for path in (init.get("augment") or ())}
    for path, _ in unseen:
        if Path(path).resolve() in augmented:
            raise BioLinkError(Errors.E565.format(
                corpus=path, reason=f"given as --unseen-corpus, but {model} was built with "
                                    "its mentions among its names "
                                    "(init-linker --augment), so they are not new text to it: "
                                    "pass it as --corpus with --fit-with"))


def _linker_settings(nlp: Language, name: str) -> Dict:
    """The linker component's settings that shape its scores (all but its threshold)."""
    block = copy.deepcopy(dict(nlp.config["components"][name]))
    block.pop("threshold", None)
    stages = dict(block.get("stages") or {})
    stages.pop(STAGE_NAME, None)  # a calibrated fit pipeline is as good as a raw one
    for stage_block in stages.values():
        if isinstance(stage_block, dict):
            stage_block.pop("threshold", None)
    block["stages"] = stages
    return block


def _check_same_linker(nlp: Language, name: str, model: PathLike, fit_nlp: Language,
                       fit_name: str, fit_with: PathLike) -> None:
    """E564 unless both linkers score alike (same component settings but the threshold)."""
    ours, theirs = _linker_settings(nlp, name), _linker_settings(fit_nlp, fit_name)
    if ours != theirs:
        keys = sorted(k for k in set(ours) | set(theirs) if ours.get(k) != theirs.get(k))
        raise BioLinkError(Errors.E564.format(model=model, fit_with=fit_with,
                                              settings=", ".join(keys)))


def _write_calibrated(nlp: Language, name: str, stage: ScoreCalibration, threshold: float,
                      output: Path) -> None:
    """`nlp` saved in `output` with `stage` as linker `name`'s last stage and `threshold`
    as its NIL threshold (config.cfg and the stage's state)."""
    from spacy.util import load_config

    nlp.to_disk(output)
    config = load_config(output / "config.cfg", interpolate=False)
    block = config["components"][name]
    stages = dict(block.get("stages") or {})
    stages.pop(STAGE_NAME, None)  # a refit goes last again
    stages[STAGE_NAME] = dict(STAGE_BLOCK)
    for stage_block in stages.values():
        # The NIL rule written as a block holds the threshold itself (E175 otherwise).
        if stage_block.get("@misc", "").startswith("spacy-biolink.ScoreThreshold."):
            stage_block["threshold"] = threshold
    block["stages"] = stages
    block["threshold"] = threshold
    config.to_disk(output / "config.cfg", interpolate=False)
    (output / name / "stages").mkdir(parents=True, exist_ok=True)
    (output / name / "stages" / STAGE_NAME).write_bytes(stage.state_to_bytes())
