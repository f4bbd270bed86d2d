"""bio_linker's settings are defined once (spacy_biolink/linker/settings.py), and the factory
signature, config validation, the step blocks, init-linker's default config and the
documented table all come from there."""
import inspect
import re
from pathlib import Path

import pytest
import spacy
from spacy.util import registry
from thinc.api import Config

from spacy_biolink.errors import BioLinkError
from spacy_biolink.linker.component import make_bio_linker
from spacy_biolink.linker.pipeline import DEFAULT_PIPELINE_CONFIG
from spacy_biolink.linker.settings import (BY_NAME, SETTINGS, chosen, chosen_settings,
                                           defaults, settings_table)

ROOT = Path(__file__).resolve().parent.parent

# A value each checked setting refuses, and the words of its E102.
REFUSED = {
    "split_margin": (1.5, "a number in [0, 1]"),
    "k": (0, "an integer >= 1"),
    "max_entities_per_mention": (0, "an integer >= 1"),
    "cache_size": (-1, "an integer >= 0"),
    "index_level": ("word", '"name" or "concept"'),
    "index_sources": ("X", '"O"'),
    "sieve_threshold": (2.0, "null (no sieve)"),
    "prior_weight": (1e308, "a number in [0, 1]"),
    "prior_mode": ("multiply", '"add"'),
    "corpus_margin": (2.0, "a number in [0, 1]"),
}


def test_the_factory_signature_is_the_settings():
    parameters = inspect.signature(make_bio_linker).parameters
    for setting in SETTINGS:
        assert parameters[setting.name].default == setting.default, setting.name
        assert parameters[setting.name].annotation == setting.annotation, setting.name
        assert parameters[setting.name].kind is inspect.Parameter.KEYWORD_ONLY


def test_a_blank_pipe_gets_every_default():
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("bio_linker")
    block = nlp.config["components"]["bio_linker"]
    for name, value in defaults().items():
        assert block[name] == value, name
    # type_filter and id_preference are kept in the forms the linker reads
    assert pipe.linker.type_filter == {} and pipe.linker.id_preference == ("MESH", "OMIM")
    for name in set(defaults()) - {"type_filter", "id_preference"}:
        assert pipe.cfg[name] == defaults()[name], name


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_value_its_check_refuses_is_an_error_naming_it(name):
    value, words = REFUSED[name]
    assert BY_NAME[name].check is not None
    with pytest.raises(BioLinkError, match=rf"E102.*`{name}`") as err:
        spacy.blank("en").add_pipe("bio_linker", config={name: value})
    assert words in str(err.value)


@pytest.mark.parametrize("name, value", [
    ("threshold", float("inf")), ("threshold", float("nan")), ("threshold", -float("inf")),
    ("prior_weight", float("inf")), ("prior_weight", float("nan")), ("prior_weight", -0.1),
    ("prior_weight", 1.5), ("split_margin", float("nan")), ("corpus_margin", float("inf")),
    ("sieve_threshold", float("nan"))])
def test_inf_and_nan_are_refused_where_python_can_pass_them(name, value):
    # A config cannot hold inf or nan (spaCy refuses them, E961), but configure() and the
    # Python API can: prior_weight = inf made every score inf, threshold = nan every
    # mention NIL.
    pipe = spacy.blank("en").add_pipe("bio_linker")
    with pytest.raises(BioLinkError, match=rf"E102.*`{name}`"):
        pipe.linker.configure(**{name: value})


def test_every_checked_setting_has_a_refused_value_here():
    checked = {s.name for s in SETTINGS if s.check is not None}
    # nil_id (any string), threshold (any finite number: a non-number is refused by
    # spaCy's validation, below, inf and nan above, one out of the encoder's range by
    # E125/E127) and id_preference (E162, its own message) are tested elsewhere
    assert checked - {"nil_id", "threshold", "id_preference"} == set(REFUSED)


def test_a_wrong_type_is_refused_by_spacys_validation():
    from confection import ConfigValidationError

    with pytest.raises(ConfigValidationError, match="threshold"):
        spacy.blank("en").add_pipe("bio_linker", config={"threshold": "high"})


def test_step_blocks_default_to_the_values_chosen_on_dev():
    prior = registry.misc.get("spacy-biolink.AnnotationPrior.v1")()
    assert prior.settings == {"prior_weight": chosen("prior_weight"),
                              "prior_mode": chosen("prior_mode")}
    nil_rule = registry.misc.get("spacy-biolink.ScoreThreshold.v1")()
    assert nil_rule.settings == {"threshold": 0.45, "max_entities_per_mention": 5}
    composites = registry.misc.get("spacy-biolink.CompositeSplitter.v1")()
    assert composites.settings == {"split_composites": True, "split_margin": 0.00001}


def test_init_linkers_default_config_writes_the_chosen_values():
    block = Config().from_str(DEFAULT_PIPELINE_CONFIG, interpolate=False)["components"]["bio_linker"]
    assert {key: value for key, value in block.items() if key != "factory"} == chosen_settings()
    assert chosen_settings() == {"split_margin": 0.00001, "prior_weight": 0.005,
                                 "prior_mode": "order", "corpus_margin": 0.1}


def test_a_default_is_written_in_one_place():
    """The NIL threshold's default, once written six times, now only in settings.py."""
    hits = [str(path.relative_to(ROOT)) for path in (ROOT / "spacy_biolink").rglob("*.py")
            if re.search(r"\b0\.45\b", path.read_text(encoding="utf8"))]
    assert hits == ["spacy_biolink/linker/settings.py"]


def test_the_documented_table_is_the_generated_one():
    page = (ROOT / "docs" / "settings.md").read_text(encoding="utf8")
    table = page.split("<!-- settings-table:start -->\n")[1].split("<!-- settings-table:end -->")[0]
    assert table == settings_table(), (
        "docs/settings.md's table is out of date: replace it with the output of "
        "python -c 'from spacy_biolink.linker.settings import settings_table; "
        "print(settings_table(), end=\"\")'")
