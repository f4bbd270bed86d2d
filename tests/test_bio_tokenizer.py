"""spacy-biolink.BioTokenizer.v1: mentions inside chemical names fall on token
boundaries, ordinary English tokenizes as spaCy's English tokenizer does, the tokenizer
survives a save and load, and `convert --config` tokenizes the DocBins with it."""
import json

import pytest
import spacy

from spacy_biolink.corpora import convert_pubtator
from spacy_biolink.corpora.docbin import tokenizer_nlp_from_config
from spacy_biolink.errors import BioLinkError

TOKENIZER = {"@tokenizers": "spacy-biolink.BioTokenizer.v1"}

# Gold mentions of BC5CDR test that spaCy's English tokenizer cuts through: (text, the
# mention's start, its end).
CUT_BY_DEFAULT = [
    ("Ca(2+) channels", 0, 2),
    ("(DOX)-induced cardiotoxicity", 1, 4),
    ("STZ- and alloxan-induced", 0, 3),
    ("[3H]GABA binding", 4, 8),
    ("Dexamethasone- (Dex-) treated", 16, 19),
    ("(bort)-dexamethasone", 7, 20),
    ("(GABA)A receptors", 1, 5),
    ("(0.2 g/day)-lovastatin", 12, 22),
    ("Na+/K+ ATPase", 0, 2),
    ("Na+/K+ ATPase", 4, 5),
    ("thallium-201 imaging", 0, 8),
    ("supplementation with vitamin D.", 21, 30),
    ("nephrotoxicity of AmB.", 18, 21),
    ("serum lithium=0.85 mmol", 6, 13),
]

# Ordinary English: every token as spaCy's English tokenizer gives it.
ENGLISH = [
    "I don't think we'll go; they're late, aren't they?",
    "The U.S. and the U.K. met on Jan. 5th, e.g. in New York-based offices at 5:30 p.m.",
    "It costs $5.00 (about 4.50 EUR) - see https://example.org/a/b?c=1 or mail a@b.com.",
    "A well-known, state-of-the-art method :) works 10x faster than 3.5 km/h walking!",
    "She said \"yes\" -- and left... Mr. Smith's dog wasn't there.",
]


@pytest.fixture(scope="module")
def bio_nlp():
    return spacy.blank("en", config={"nlp": {"tokenizer": TOKENIZER}})


@pytest.mark.parametrize("text,start,end", CUT_BY_DEFAULT)
def test_mentions_in_chemical_names_fall_on_token_boundaries(bio_nlp, text, start, end):
    assert spacy.blank("en").make_doc(text).char_span(start, end) is None
    span = bio_nlp.make_doc(text).char_span(start, end)
    assert span is not None and span.text == text[start:end]


def test_a_digit_before_a_bracket_is_no_emoticon(bio_nlp):
    # spaCy matches special cases again after splitting affixes: with its emoticon "8)",
    # the hyphen split would leave "8)" one token and the mention "CCK-8" off its end.
    assert [t.text for t in bio_nlp.make_doc("(CCK-8) was given")] == \
        ["(", "CCK", "-", "8", ")", "was", "given"]
    assert bio_nlp.make_doc("(CCK-8) was given").char_span(1, 6) is not None


def test_the_splits_of_the_issue_examples(bio_nlp):
    tokens = [t.text for t in bio_nlp.make_doc("Ca(2+) and (DOX)-induced [3H]GABA (GABA)A Na+/K+")]
    assert tokens == ["Ca", "(", "2", "+", ")", "and", "(", "DOX", ")", "-", "induced",
                      "[", "3H", "]", "GABA", "(", "GABA", ")", "A", "Na", "+", "/", "K", "+"]


@pytest.mark.parametrize("text", ENGLISH)
def test_ordinary_english_is_tokenized_as_spacy_does(bio_nlp, text):
    assert [t.text for t in bio_nlp.make_doc(text)] == \
        [t.text for t in spacy.blank("en").make_doc(text)]


def test_what_changes_for_english_initials_and_digit_emoticons(bio_nlp):
    # A capital's period ends the word, so initials split; emoticons made with a digit
    # are no special case ("(n = 8)" would end in the emoticon "8)").
    assert [t.text for t in bio_nlp.make_doc("J. Smith (n = 8)")] == \
        ["J", ".", "Smith", "(", "n", "=", "8", ")"]
    assert [t.text for t in spacy.blank("en").make_doc("J. Smith (n = 8)")] == \
        ["J.", "Smith", "(", "n", "=", "8)"]


def test_the_tokenizer_survives_to_disk_and_from_disk(bio_nlp, tmp_path):
    text = "Ca(2+)-induced (DOX)-toxicity in STZ- and [3H]GABA-treated rats (n = 8)."
    bio_nlp.to_disk(tmp_path / "nlp")
    loaded = spacy.load(tmp_path / "nlp")
    assert loaded.config["nlp"]["tokenizer"] == TOKENIZER
    assert [t.text for t in loaded.make_doc(text)] == [t.text for t in bio_nlp.make_doc(text)]
    # The saved rules are what the loaded tokenizer uses, not spaCy's defaults.
    assert [t.text for t in loaded.make_doc(text)] != \
        [t.text for t in spacy.blank("en").make_doc(text)]


CONFIG = """\
[nlp]
lang = "en"
pipeline = []

[nlp.tokenizer]
@tokenizers = "spacy-biolink.BioTokenizer.v1"
"""
CORPUS = """\
1|t|Ca(2+) overload.
1|a|(DOX)-induced cardiotoxicity.
1\t0\t2\tCa\tChemical\tD002118
1\t18\t21\tDOX\tChemical\tD004317
1\t31\t45\tcardiotoxicity\tDisease\tD066126
"""


def test_convert_with_a_config_tokenizes_as_the_config_does(tmp_path):
    (tmp_path / "ner.cfg").write_text(CONFIG)
    (tmp_path / "c.txt").write_text(CORPUS)
    nlp = tokenizer_nlp_from_config(tmp_path / "ner.cfg")
    assert nlp.pipe_names == [] and nlp.make_doc("Ca(2+)")[0].text == "Ca"
    default = convert_pubtator(tmp_path / "c.txt", tmp_path / "default.spacy")
    bio = convert_pubtator(tmp_path / "c.txt", tmp_path / "bio.spacy", nlp=nlp)
    assert (default.misaligned, bio.misaligned) == (2, 0)
    from spacy.tokens import DocBin

    doc = next(DocBin().from_disk(tmp_path / "bio.spacy").get_docs(nlp.vocab))
    assert [e.text for e in doc.ents] == ["Ca", "DOX", "cardiotoxicity"]


def test_convert_config_errors_say_what_is_wrong(tmp_path):
    with pytest.raises(BioLinkError, match="E306.*no such file"):
        tokenizer_nlp_from_config(tmp_path / "missing.cfg")
    (tmp_path / "bad.cfg").write_text(CONFIG.replace("BioTokenizer.v1", "NoTokenizer.v9"))
    with pytest.raises(BioLinkError, match="E306.*tokenizer could not be built"):
        tokenizer_nlp_from_config(tmp_path / "bad.cfg")
    (tmp_path / "nolang.cfg").write_text("[training]\nseed = 0\n")
    with pytest.raises(BioLinkError, match="E306.*no \\[nlp\\] lang"):
        tokenizer_nlp_from_config(tmp_path / "nolang.cfg")


def test_misalignment_on_bc5cdr_dev(shared_data, bio_nlp):
    """The figure the rules were chosen on (BENCHMARKS.md, issue 34, session 18): BC5CDR
    dev Chemical mentions off token boundaries, 126 of 5,347 with spaCy's tokenizer."""
    from spacy_biolink.corpora.pubtator import read_pubtator

    counts = {"default": 0, "bio": 0}
    n = 0
    default = spacy.blank("en")
    for document in read_pubtator(shared_data / "bc5cdr" / "CDR_DevelopmentSet.PubTator.txt.gz",
                                  types={"Chemical"}):
        for name, nlp in (("default", default), ("bio", bio_nlp)):
            doc = nlp.make_doc(document.text)
            counts[name] += sum(doc.char_span(m.start, m.end) is None for m in document.mentions)
        n += len(document.mentions)
    assert (n, counts["default"], counts["bio"]) == (5347, 126, 10)


def test_convert_cli_config_option(tmp_path):
    import subprocess
    import sys

    (tmp_path / "ner.cfg").write_text(CONFIG)
    (tmp_path / "c.txt").write_text(CORPUS)

    from .conftest import invoke_cli

    def convert(*flags):
        return invoke_cli("convert", tmp_path / "c.txt", tmp_path / "out.spacy", *flags)

    def misaligned(result):
        return [line.split()[-1] for line in result.stdout.splitlines()
                if line.strip().startswith("misaligned")]

    assert misaligned(convert()) == ["2"]
    assert misaligned(convert("--config", str(tmp_path / "ner.cfg"))) == ["0"]
    # the failure in a process of its own: no Traceback on its stderr
    failed = subprocess.run([sys.executable, "-m", "spacy_biolink", "convert", str(tmp_path / "c.txt"),
                             str(tmp_path / "out.spacy"), "--config", str(tmp_path / "missing.cfg")],
                            capture_output=True, text=True)
    assert failed.returncode == 1 and "E306" in failed.stdout and "Traceback" not in failed.stderr
