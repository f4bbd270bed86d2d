"""bio_linker's settings, each defined once: name, type, default, check and one line of help.

Everything else reads them from here: the factory's signature and default config
(component.py), the linker's checks (policy.py), the defaults of the step blocks that
stand for them (stages/registry.py), the values init-linker's default config writes
(pipeline.py) and the settings table of the documentation (`settings_table`).

`default` is what a config that does not name the setting gets, so a pipeline saved
before a setting existed links as it did; `chosen` is the value chosen on dev that
init-linker's default config writes and a step block written without it gets.
"""
import inspect
import math
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

import numpy

from ..errors import BioLinkError, Errors
from .retriever import INDEX_SOURCES

_UNSET = object()
# What the annotation prior does with its boost (stages/prior.py).
PRIOR_MODES = ("add", "order")


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _finite(value) -> bool:
    """A number that is not inf or nan (which pass `_number`, and then every comparison
    of the NIL rule or the prior's sum goes wrong)."""
    return _number(value) and math.isfinite(value)


def _integer(minimum: int) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, int) and not isinstance(value, bool) and \
        value >= minimum


def _in_range(lo: float, hi: float) -> Callable[[Any], bool]:
    return lambda value: _number(value) and lo <= value <= hi


def _string_list(value) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)


class Setting(NamedTuple):
    """One flat setting of bio_linker."""

    name: str
    annotation: Any
    default: Any
    help: str
    # The check, and what the value must be when it fails (E102); None: the type alone.
    check: Optional[Callable[[Any], bool]] = None
    must_be: str = ""
    # The step block (linker/stages/registry.py) that stands for it, if any.
    step: Optional[str] = None
    chosen: Any = _UNSET

    @property
    def chosen_value(self) -> Any:
        """The value chosen on dev (init-linker's, a step block's), else the default."""
        return self.default if self.chosen is _UNSET else self.chosen


SETTINGS: Tuple[Setting, ...] = (
    Setting("resolve_abbreviations", bool, True,
            "link a short form its document defines (\"HTN\") as its long form",
            step="abbreviations"),
    Setting("split_composites", bool, True,
            "link \"A and B C\" as \"A C\" and \"B C\" when the parts match better",
            step="composites"),
    Setting("split_margin", float, 0.0,
            "a composite is split only when each part beats the whole by more than this",
            _in_range(0, 1), "a number in [0, 1] by which each part of a composite must beat "
            "the whole to be split (0: any gain; init-linker's default is 0.00001, float noise)",
            step="composites", chosen=0.00001),
    Setting("k", int, 10, "concepts retrieved per mention (a concept scores as its best name)", _integer(1), "an integer >= 1"),
    Setting("threshold", float, 0.45,
            "candidates scoring under it are dropped; a mention with none gets nil_id (chosen for TF-IDF cosines)",
            _finite, "a finite number", step="nil_rule"),
    Setting("max_entities_per_mention", int, 5, "the most concepts kept in kb_ents",
            _integer(1), "an integer >= 1", step="nil_rule"),
    Setting("nil_id", str, "NIL", "the kb_id_ of a mention linked to nothing",
            lambda value: isinstance(value, str), "a string"),
    Setting("spans_key", Optional[str], None,
            "link doc.spans[key] instead of doc.ents (null: doc.ents)"),
    Setting("labels", List[str], [], "span labels linked (empty: all)"),
    Setting("cache_size", int, 100000, "distinct mention texts whose candidates are remembered across batches",
            _integer(0), "an integer >= 0"),
    Setting("index_level", str, "name",
            "\"name\": one index row per name; \"concept\": one per concept, its names' mean vector",
            lambda value: value in ("name", "concept"), "\"name\" or \"concept\""),
    Setting("index_sources", str, "OD",
            "names searched: \"O\" the dictionary's, \"D\" corpus mentions (--augment, add_names), \"OD\" both",
            lambda value: value in INDEX_SOURCES,
            "\"O\" (the dictionary's names), \"D\" (corpus mentions added by augment or "
            "add_names) or \"OD\" (both)"),
    Setting("sieve_threshold", Optional[float], None,
            "answer a mention from the corpus (D) names alone when its best scores at least "
            "this (null: no sieve)",
            lambda value: value is None or _in_range(-1.0, 1.0)(value),
            "null (no sieve) or a cosine in [-1, 1] that a mention's best D name must reach "
            "to be answered from the D names (Triplet-Search uses 0.95)", step="sieve"),
    Setting("prior_weight", float, 0.0,
            "near ties go to the concept the augmenting corpora annotated most: + weight * ln(1 + n)",
            _in_range(0, 1),
            "a number in [0, 1] (0: no annotation prior; init-linker's default is 0.005; "
            "it adds weight * ln(1 + count) to scores of at most 1, so a weight near 1 "
            "already outweighs the similarity)",
            step="prior", chosen=0.005),
    Setting("prior_mode", str, "add",
            "\"order\": the prior only orders the candidates, scores stay similarities; \"add\": it adds to them",
            lambda value: value in PRIOR_MODES,
            "\"add\" (the prior is added to the score, as released) or \"order\" (it only "
            "orders the candidates; the score stays the similarity)",
            step="prior", chosen="order"),
    Setting("corpus_margin", float, 0.0,
            "taken off the score of a name only a corpus gave that does not match the mention exactly",
            _in_range(0, 1), "a number in [0, 1] taken off the score of a corpus-only name "
            "that does not match exactly (0: none; init-linker's default is 0.1)", chosen=0.1),
    Setting("type_filter", Dict[str, List[str]], {},
            "span label -> allowed types (TUIs, semantic groups such as \"DISO\", the "
            "dictionary's types)", step="type_filter"),
    Setting("id_preference", List[str], ["MESH", "OMIM"],
            "which of a concept's ids kb_id_ reports, by namespace", _string_list,
            "a list of id namespaces"),
)

BY_NAME: Dict[str, Setting] = {setting.name: setting for setting in SETTINGS}
# The linker's own settings (policy.py); spans_key and labels are the pipe's.
PIPE_ONLY = ("spans_key", "labels")


def defaults() -> Dict[str, Any]:
    """Every setting's default, as a fresh dict (a list default is copied)."""
    return {s.name: (list(s.default) if isinstance(s.default, list) else
                     dict(s.default) if isinstance(s.default, dict) else s.default)
            for s in SETTINGS}


def step_settings() -> Dict[str, Dict[str, Any]]:
    """Step name -> the settings its block stands for, with their defaults."""
    out: Dict[str, Dict[str, Any]] = {}
    for setting in SETTINGS:
        if setting.step is not None:
            out.setdefault(setting.step, {})[setting.name] = setting.default
    return out


def chosen(name: str) -> Any:
    """The value chosen on dev for `name` (a step block's default, init-linker's)."""
    return BY_NAME[name].chosen_value


def chosen_settings() -> Dict[str, Any]:
    """The settings whose chosen value differs from the default: what init-linker's
    default config writes."""
    return {s.name: s.chosen for s in SETTINGS if s.chosen is not _UNSET}


def check_settings(values: Dict[str, Any]) -> None:
    """E102 for the first value in `values` that its setting's check refuses."""
    for name, value in values.items():
        setting = BY_NAME.get(name)
        if setting is not None and setting.check is not None and not setting.check(value):
            raise BioLinkError(Errors.E102.format(key=name, what=setting.must_be, value=value))


def with_settings_signature(factory: Callable) -> Callable:
    """`factory(nlp, name, *, <its own keyword-only blocks>, **settings)` with a signature
    naming every setting, its type and its default, so that spaCy fills and validates
    [components.NAME] from SETTINGS."""
    signature = inspect.signature(factory)
    own = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    flat = [inspect.Parameter(s.name, inspect.Parameter.KEYWORD_ONLY, default=s.default,
                              annotation=s.annotation) for s in SETTINGS]
    factory.__signature__ = signature.replace(parameters=own + flat)
    factory.__annotations__ = {**factory.__annotations__,
                               **{s.name: s.annotation for s in SETTINGS}}
    return factory


def settings_table() -> str:
    """The settings as a Markdown table (docs/settings.md): name, default, chosen, help."""
    def shown(value) -> str:
        if value is None:
            return "null"
        if isinstance(value, bool):
            return str(value).lower()
        if isinstance(value, str):
            return f'"{value}"'
        if isinstance(value, float):
            return numpy.format_float_positional(value, trim="0")
        return str(value).replace("'", '"')

    rows = ["| setting | default | chosen on dev (init-linker, step blocks) | step block | what it does |",
            "|---|---|---|---|---|"]
    for s in SETTINGS:
        picked = "" if s.chosen is _UNSET else f"`{shown(s.chosen)}`"
        step = f"`{s.step}`" if s.step else ""
        rows.append(f"| `{s.name}` | `{shown(s.default)}` | {picked} | {step} | "
                    f"{s.help.replace('|', '/')} |")
    return "\n".join(rows) + "\n"
