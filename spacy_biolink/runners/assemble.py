"""One pipeline from a trained NER and a saved linker: entities found, then linked.

bio_linker links spans already in doc.ents, so on raw text it needs an NER before it.
The two are trained apart (`spacy train configs/ner.cfg`, `init-linker`), and joined here
by sourcing the linker, weights, dictionary and index, into the NER pipeline.

Each linker keeps the name it has in its own pipeline (or the one `name` gives), so a
second linker joins an assembled pipeline beside the first: assemble the NER with the
disease linker, then that output with a chemical linker under another name.
"""
import logging
import warnings
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from spacy import util
from spacy.language import Language

from ..errors import BioLinkError, Errors
from ..io.files import check_output_path, save_pipeline
from ..io.util import PathLike
from ..linker.drop_nil import DROP_NIL_NAME
from ..linker.find import configured_linkers, require_linkers
from ..linker.nothing_to_link import NothingToLinkCheck
from ..linker.pipeline import load_linker_pipeline, report_leftover_temp_dirs
from ..ner.propagate import PROPAGATE_NAME, PROPAGATE_RULES
from ..ner.type_choice import TYPES_NAME
from ..ner.variants import VARIANTS_NAME
from ..ner.term_patterns import TERM_RULER_NAME, add_term_ruler, read_term_patterns
from .local import entity_setting_pipes

logger = logging.getLogger(__name__)


def _load_linkers(linker_dir: PathLike, nil_threshold: Optional[float]
                  ) -> Tuple[Language, List[str]]:
    """LINKER_DIR's pipeline and the names of its linkers, their NIL threshold set to
    nil_threshold when given. The policy is built from config.cfg at load, so the
    threshold goes in as a config override (sourcing then copies it into the joined
    config); the linkers' names come from config.cfg first, so that the pipeline, which
    can be gigabytes, is loaded once."""
    def overrides(names):
        if nil_threshold is None:
            return None
        return {"components": {name: {"threshold": nil_threshold} for name in names}}

    named = []
    if nil_threshold is not None:
        try:
            named = configured_linkers(util.load_config(Path(linker_dir) / "config.cfg",
                                                        interpolate=False))
        except Exception:  # noqa: BLE001 - a config spaCy cannot read: the load says why
            named = []
    linker_nlp = load_linker_pipeline(linker_dir, config=overrides(named))
    linkers = [source for source, _ in require_linkers(linker_nlp, linker_dir)]
    if nil_threshold is not None and set(linkers) - set(named):
        # a linker made by another factory (a BioLinker subclass): config.cfg did not say
        del linker_nlp
        linker_nlp = load_linker_pipeline(linker_dir, config=overrides(linkers))
    return linker_nlp, linkers


def assemble_pipeline(ner_dir: PathLike, linker_dir: PathLike, output_dir: PathLike, *,
                      force: bool = False, name: Optional[str] = None,
                      patterns: Optional[PathLike] = None, drop_nil: bool = False,
                      nil_threshold: Optional[float] = None,
                      propagate: Optional[Sequence[str]] = None,
                      drop_nil_labels: Optional[Sequence[str]] = None,
                      drop_below: Optional[float] = None,
                      unlink_labels: Optional[Sequence[str]] = None,
                      type_choice: bool = False, variants: bool = False) -> Language:
    """Save NER_DIR's pipeline with LINKER_DIR's linkers added after it to OUTPUT_DIR.

    Each linker keeps its pipe name from LINKER_DIR; `name` renames the linker of a
    LINKER_DIR that has one. A pipe of the same name already in the NER pipeline is
    replaced; linkers of other names stay, so linkers can be added one at a time. The
    output appears complete or not at all; an existing non-empty OUTPUT_DIR is only
    replaced with force=True.

    patterns: a JSONL file of span_ruler patterns (`ner-patterns`), put after the NER as
    `term_ruler` (bio_term_ruler: spaCy's span_ruler, patterns tokenized alone), replacing
    one already there. drop_nil: end the
    pipeline with bio_drop_nil (linker/drop_nil.py); linkers added later go before it.
    nil_threshold: the added linkers' NIL threshold (their `threshold` setting) in the
    joined pipeline, LINKER_DIR's own when None. On raw text a higher one than on gold
    mentions pays with drop_nil: a span the linker is unsure of is more often no entity.
    propagate: put `bio_propagate` (ner/propagate.py) after the NER and its term ruler,
    replacing one already there, with these of its rules on: "abbreviations" (a defined
    short form takes its long form's label, everywhere), "repeats" (an entity's text,
    wherever it recurs untagged).
    drop_nil_labels: with drop_nil, drop only the NIL entities of these labels (the
        others stay, unlinked): where the NER is right about most of the spans the
        linker cannot link, as for chemicals the vocabulary does not hold. They must be
        labels the pipeline's NER sets (E480).
    drop_below: with drop_nil, also drop the entities whose best link scores under it
        (bio_drop_nil's `min_score`), while the linkers keep their own NIL threshold: a
        gold span the user hands the linker still gets its best concept and `kb_ents`.
        The raw-text cut that nil_threshold puts on the linkers, without that cost.
    unlink_labels: with drop_below, keep the entities of these labels whose best link
        scores under it, as NIL (bio_drop_nil's `unlink_labels`): their spans are right
        more often than their links. Labels the NER sets, none of drop_nil_labels.
    type_choice: put `bio_types` (ner/type_choice.py, `keep` empty: every type) after the
        NER and bio_propagate, before the linkers, so that a user restricts the types of
        the saved pipeline at load: spacy.load(path, config={"components": {"bio_types":
        {"keep": ["Disease", "Chemical"]}}}).
    variants: put `bio_variants` (ner/variants.py: variants in their written notations,
        kept where the variant rule table normalizes them) after the NER and its term
        ruler, before bio_propagate, replacing one already there.
    """
    if unlink_labels is not None and drop_below is None:
        raise BioLinkError(Errors.E480.format(option="--unlink-labels",
                                              value=",".join(unlink_labels),
                                              what="given with --drop-below"))
    for option, value in (("--drop-nil-labels", drop_nil_labels), ("--drop-below", drop_below)):
        if value is not None and not drop_nil:
            shown = ",".join(value) if isinstance(value, (list, tuple)) else value
            raise BioLinkError(Errors.E480.format(option=option, value=shown,
                                                  what="given with --drop-nil"))
    propagate_config = _propagate_config(propagate) if propagate is not None else None
    output_dir = check_output_path(output_dir, kind="dir", what="the joined pipeline",
                                   force=force)
    report_leftover_temp_dirs(output_dir)
    nlp = load_linker_pipeline(ner_dir)
    if not entity_setting_pipes(nlp):
        raise BioLinkError(Errors.E758.format(path=ner_dir, pipes=nlp.pipe_names))
    term_patterns = read_term_patterns(patterns) if patterns is not None else None
    linker_nlp, linkers = _load_linkers(linker_dir, nil_threshold)
    if name is not None and len(linkers) > 1:
        raise BioLinkError(Errors.E407.format(name=name, path=linker_dir, n=len(linkers),
                                              names=", ".join(linkers)))
    for source in linkers:
        target = name if name is not None else source
        if target in nlp.pipe_names:
            logger.info("%s already has a %s: replacing it with %s's %s", ner_dir, target,
                        linker_dir, source)
            nlp.remove_pipe(target)
        # Before the NIL drop when there is one: it judges the links of every linker.
        where = {"before": DROP_NIL_NAME} if DROP_NIL_NAME in nlp.pipe_names else {}
        with warnings.catch_warnings():
            # spaCy warns (W113) when the NER's static vectors differ from the linker
            # pipeline's; a linker never reads vocab.vectors, so the warning is no news.
            warnings.filterwarnings("ignore", message=r"\[W113\]")
            pipe = nlp.add_pipe(source, name=target, source=linker_nlp, **where)
        if getattr(pipe, "nothing_to_link", None) is not None:
            # The check sourced with the pipe watches the pipeline it came from.
            pipe.nothing_to_link = NothingToLinkCheck(nlp, target, pipe.cfg.get("spans_key"))
    if term_patterns is not None:
        ner_pipes = [p for p in entity_setting_pipes(nlp) if p not in (TERM_RULER_NAME, VARIANTS_NAME)]
        add_term_ruler(nlp, term_patterns, after=ner_pipes[-1] if ner_pipes else None)
    if variants:
        if VARIANTS_NAME in nlp.pipe_names:
            nlp.remove_pipe(VARIANTS_NAME)
        # entity_setting_pipes is not empty (E758 above); propagate and the linkers follow.
        nlp.add_pipe(VARIANTS_NAME, after=entity_setting_pipes(nlp)[-1])
    if propagate_config is not None:
        if PROPAGATE_NAME in nlp.pipe_names:
            nlp.remove_pipe(PROPAGATE_NAME)
        # entity_setting_pipes is not empty (E758 above); the linkers come after it.
        nlp.add_pipe(PROPAGATE_NAME, config=propagate_config,
                     after=entity_setting_pipes(nlp)[-1])
    if type_choice and TYPES_NAME not in nlp.pipe_names:
        after = PROPAGATE_NAME if PROPAGATE_NAME in nlp.pipe_names \
            else entity_setting_pipes(nlp)[-1]
        nlp.add_pipe(TYPES_NAME, after=after)
    if drop_nil_labels is not None:
        _check_entity_labels(nlp, drop_nil_labels)
    if unlink_labels is not None:
        _check_entity_labels(nlp, unlink_labels, "--unlink-labels")
    if (drop_nil_labels is not None or drop_below is not None) \
            and DROP_NIL_NAME in nlp.pipe_names:  # replaced, with its new settings, still last
        nlp.remove_pipe(DROP_NIL_NAME)
    if drop_nil and DROP_NIL_NAME not in nlp.pipe_names:
        nlp.add_pipe("bio_drop_nil", name=DROP_NIL_NAME,
                     config={"labels": list(drop_nil_labels or []),
                             "min_score": float(drop_below or 0.0),
                             "unlink_labels": list(unlink_labels or [])})
    # Settings the linker's pipeline keeps in its meta (e.g. kb_url_template) travel with it
    if "biolink" in linker_nlp.meta:
        nlp.meta["biolink"] = {**nlp.meta.get("biolink", {}), **linker_nlp.meta["biolink"]}
    save_pipeline(nlp, output_dir)
    logger.info("Saved %s (pipes: %s) to %s", ner_dir, nlp.pipe_names, output_dir)
    return nlp


def _check_entity_labels(nlp: Language, labels: Sequence[str],
                         option: str = "--drop-nil-labels") -> None:
    """E480 unless every one of `labels` is a label the pipeline's entity pipes set: a
    misspelt label would silently drop nothing."""
    known = set()
    for name in entity_setting_pipes(nlp):
        known.update(getattr(nlp.get_pipe(name), "labels", ()) or ())
    unknown = [label for label in labels if label not in known]
    if unknown or not labels:
        raise BioLinkError(Errors.E480.format(
            option=option, value=",".join(labels),
            what="a comma-separated list of the NER's labels (" + ", ".join(sorted(known)) + ")"))


def _propagate_config(rules: Sequence[str]) -> dict:
    """bio_propagate's config with `rules` on and the others off (E480 on an unknown one)."""
    unknown = [rule for rule in rules if rule not in PROPAGATE_RULES]
    if unknown or not rules:
        raise BioLinkError(Errors.E480.format(
            option="--propagate", value=",".join(rules),
            what="a comma-separated list of " + " and ".join(PROPAGATE_RULES)))
    return {rule: rule in rules for rule in PROPAGATE_RULES}
