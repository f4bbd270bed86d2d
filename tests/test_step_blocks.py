"""The steps every linker has (abbreviations, composites, sieve, prior, type filter, NIL
rule) as config blocks under [components.NAME.stages.*], beside their flat settings."""
import pytest
import spacy
from spacy import util
from thinc.api import Config

from spacy_biolink.errors import BioLinkError
from spacy_biolink.kb.dictionary import Concept, ConceptDictionary

from .conftest import doc_with_ents

ONTOLOGY = [Concept(["D001"], ["Huntington Disease", "Huntington's chorea"], type="C10"),
            Concept(["D002"], ["Breast Neoplasms", "breast cancer"], type="C04"),
            Concept(["D003"], ["Ovarian Neoplasms", "ovarian cancer"], type="C04"),
            Concept(["D004"], ["Huntington Disease Type 2"], type="C10"),
            Concept(["D005"], ["Breast cancer drug"], type="D27")]

CORPUS = ("1|t|Huntington disease (HD) and breast cancer.\n"
          "1|a|Huntington disease again.\n"
          "1\t0\t18\tHuntington disease\tDisease\tD001\n"
          "1\t28\t41\tbreast cancer\tDisease\tD002\n"
          "1\t43\t61\tHuntington disease\tDisease\tD001\n"
          "\n")

TEXT = ("Huntington disease (HD) runs in families. HD and breast and ovarian cancer, "
        "and a sugar headache, and huntington chorea disease.")
MENTIONS = ["Huntington disease", "HD", "breast and ovarian cancer", "sugar headache",
            "huntington chorea disease"]

FLAT = {"resolve_abbreviations": True, "split_composites": True, "split_margin": 0.00001,
        "sieve_threshold": 0.9, "prior_weight": 0.01, "prior_mode": "order",
        "type_filter": {"Disease": ["C10", "C04"]}, "threshold": 0.3,
        "max_entities_per_mention": 2}

BLOCKS = """
[components.bio_linker.stages]

[components.bio_linker.stages.abbreviations]
@misc = "spacy-biolink.Abbreviations.v1"

[components.bio_linker.stages.composites]
@misc = "spacy-biolink.CompositeSplitter.v1"
margin = 0.00001

[components.bio_linker.stages.sieve]
@misc = "spacy-biolink.CorpusSieve.v1"
threshold = 0.9

[components.bio_linker.stages.prior]
@misc = "spacy-biolink.AnnotationPrior.v1"
weight = 0.01
mode = "order"

[components.bio_linker.stages.types]
@misc = "spacy-biolink.TypeFilter.v1"

[components.bio_linker.stages.types.types]
Disease = ["C10", "C04"]

[components.bio_linker.stages.nil]
@misc = "spacy-biolink.ScoreThreshold.v1"
threshold = 0.3
max_entities_per_mention = 2
"""


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text(CORPUS, encoding="utf8")
    return path


def initialized(nlp, corpus):
    nlp.get_pipe("bio_linker").initialize(
        nlp=nlp, dictionary=ConceptDictionary.from_concepts(ONTOLOGY), augment=[corpus])
    return nlp


def flat_nlp(corpus, **overrides):
    nlp = spacy.blank("en")
    nlp.add_pipe("bio_linker", config={**FLAT, **overrides})
    return initialized(nlp, corpus)


def block_config() -> Config:
    config = Config().from_str("""
[nlp]
lang = "en"
pipeline = ["bio_linker"]

[components]

[components.bio_linker]
factory = "bio_linker"
""" + BLOCKS)
    return config


def block_nlp(corpus):
    return initialized(util.load_model_from_config(block_config(), auto_fill=True), corpus)


def links(nlp):
    doc = nlp(doc_with_ents(nlp, TEXT, MENTIONS))
    return [(ent.text, ent.kb_id_, ent._.kb_ents) for ent in doc.ents]


def test_blocks_link_as_their_flat_settings_do(corpus):
    flat, blocks = flat_nlp(corpus), block_nlp(corpus)
    expected = links(flat)
    assert links(blocks) == expected
    by_text = {text: kb_id for text, kb_id, _ in expected}
    # Each step is at work in the expected answers: "HD" spelled out, the composite
    # split, the drug kept out of a Disease mention, junk under the threshold.
    assert by_text["HD"] == "D001"
    assert by_text["breast and ovarian cancer"] == "D002|D003"
    assert by_text["sugar headache"] == "NIL"
    assert all(len(kb_ents) <= 2 for _, _, kb_ents in expected)
    linker = blocks.get_pipe("bio_linker").linker
    assert linker.cfg["threshold"] == 0.3 and linker.cfg["sieve_threshold"] == 0.9
    assert linker.sieve.active and linker.prior.boosts is not None
    # Step blocks are not trained stages: nothing to load, nothing saved under stages/.
    assert linker.stages == {}


def test_blocks_change_the_answers(corpus):
    """Not just parsed: each block's setting is the one used."""
    base = {text: kb_id for text, kb_id, _ in links(block_nlp(corpus))}
    off = block_config()
    off["components"]["bio_linker"]["stages"]["abbreviations"]["enabled"] = False
    off["components"]["bio_linker"]["stages"]["composites"]["enabled"] = False
    off["components"]["bio_linker"]["stages"]["nil"]["threshold"] = 0.99
    changed = {text: kb_id for text, kb_id, _ in
               links(initialized(util.load_model_from_config(off, auto_fill=True), corpus))}
    assert base["HD"] == "D001" and changed["HD"] == "NIL"
    assert changed["breast and ovarian cancer"] == "NIL"
    assert changed["Huntington disease"] == base["Huntington disease"] == "D001"


def test_blocks_round_trip_and_spacy_load_overrides_them(corpus, tmp_path):
    nlp = block_nlp(corpus)
    expected = links(nlp)
    nlp.to_disk(tmp_path / "nlp")
    assert links(spacy.load(tmp_path / "nlp")) == expected
    strict = spacy.load(tmp_path / "nlp", config={
        "components": {"bio_linker": {"stages": {"nil": {"threshold": 0.99}}}}})
    assert strict.get_pipe("bio_linker").cfg["threshold"] == 0.99
    # Its best candidate scores 0.815 (D001), the second 0.597: both go at 0.99.
    assert expected[-1][2] == [("D001", 0.814959), ("D004", 0.596999)]
    assert links(strict)[-1][1:] == ("NIL", [])
    assert links(strict)[:-1] == expected[:-1]
    assert links(spacy.load(tmp_path / "nlp", exclude=[])) == expected
    blocks = spacy.load(tmp_path / "nlp").config["components"]["bio_linker"]["stages"]
    assert blocks["prior"] == {"@misc": "spacy-biolink.AnnotationPrior.v1", "weight": 0.01,
                               "mode": "order"}


def test_a_block_and_a_flat_setting_that_disagree_are_refused(corpus):
    config = block_config()
    config["components"]["bio_linker"]["threshold"] = 0.6
    with pytest.raises(BioLinkError, match=r"E175.*`threshold` = 0.6.*nil_rule.*0.3"):
        util.load_model_from_config(config, auto_fill=True)
    # The same value in both places is one answer.
    config["components"]["bio_linker"]["threshold"] = 0.3
    util.load_model_from_config(config, auto_fill=True)


def test_two_blocks_of_one_step_are_refused():
    config = block_config()
    config["components"]["bio_linker"]["stages"]["nil2"] = {
        "@misc": "spacy-biolink.ScoreThreshold.v1", "threshold": 0.5}
    with pytest.raises(BioLinkError, match=r"E176.*nil, nil2.*nil_rule"):
        util.load_model_from_config(config, auto_fill=True)


def test_fill_config_writes_each_blocks_defaults():
    config = Config().from_str("""
[nlp]
lang = "en"
pipeline = ["bio_linker"]

[components]

[components.bio_linker]
factory = "bio_linker"

[components.bio_linker.stages]

[components.bio_linker.stages.prior]
@misc = "spacy-biolink.AnnotationPrior.v1"

[components.bio_linker.stages.composites]
@misc = "spacy-biolink.CompositeSplitter.v1"
""")
    filled = util.load_model_from_config(config, auto_fill=True).config
    stages = filled["components"]["bio_linker"]["stages"]
    assert stages["prior"]["weight"] == 0.005 and stages["prior"]["mode"] == "order"
    assert stages["composites"] == {"@misc": "spacy-biolink.CompositeSplitter.v1",
                                    "enabled": True, "margin": 0.00001}


def test_configure_changes_a_live_linker(corpus):
    nlp = flat_nlp(corpus)
    linker = nlp.get_pipe("bio_linker").linker
    assert [kb_id for _, kb_id, _ in links(nlp)][1] == "D001"
    linker.configure(resolve_abbreviations=False)
    assert [kb_id for _, kb_id, _ in links(nlp)][1] == "NIL"
    assert linker.abbreviations.enabled is False
    linker.configure(sieve_threshold=None)
    assert not linker.sieve.active
    with pytest.raises(BioLinkError, match="E102.*no_such_setting"):
        linker.configure(no_such_setting=1)
    with pytest.raises(BioLinkError, match="E102.*prior_mode"):
        linker.configure(prior_mode="sometimes")
    # A refused change changes nothing.
    assert linker.cfg["prior_mode"] == "order"
