"""The dictionary as evidence beside the NER (term_ruler patterns from training terms)
and the NIL drop after the linkers (bio_drop_nil)."""
import json
import os

import pytest
import spacy
from spacy.tokens import DocBin
from typer.testing import CliRunner

from spacy_biolink.cli import app
from spacy_biolink.errors import BioLinkError
from spacy_biolink.linker.drop_nil import DropNil
from spacy_biolink.ner.term_patterns import (add_term_ruler, read_term_patterns,
                                             term_patterns, write_term_patterns)
from spacy_biolink.ner.registry import build_read_term_patterns
from spacy_biolink.ner.registry import build_term_patterns

from .conftest import doc_with_ents, make_linker_nlp

# "naloxone" is annotated in each of its 2 occurrences; "cocaine" in 2 of 3 (0.67); "pain"
# once; "lithium" twice but as Chemical once and Disease once; "NO" is too short.
TEXTS = [
    ("Naloxone reversed the pain.", [("Naloxone", "Chemical"), ("pain", "Disease")]),
    ("naloxone and cocaine were given.", [("naloxone", "Chemical"), ("cocaine", "Chemical")]),
    ("Cocaine toxicity, not cocaine use.", [("Cocaine", "Chemical")]),
    ("NO and lithium, lithium.", [("NO", "Chemical"), ("lithium", "Chemical")]),
    ("Lithium was seen.", [("Lithium", "Disease")]),
]


def tagged_doc(nlp, text, ents):
    """`text` with `ents`, (mention, label) pairs, as its entities: each the mention's first
    occurrence."""
    doc = nlp.make_doc(text)
    spans = []
    for mention, label in ents:
        start = text.index(mention)
        spans.append(doc.char_span(start, start + len(mention), label=label))
    doc.ents = spans
    return doc


def training_docs():
    nlp = spacy.blank("en")
    return [tagged_doc(nlp, text, ents) for text, ents in TEXTS]


def test_term_patterns_keep_terms_annotated_often_and_consistently():
    assert term_patterns(training_docs()) == [{"label": "Chemical", "pattern": "naloxone"}]
    # cocaine's 2 of 3 passes a lower precision; lithium's 1 of 3 as Chemical does not
    assert term_patterns(training_docs(), min_precision=0.6) == [
        {"label": "Chemical", "pattern": "naloxone"}, {"label": "Chemical", "pattern": "cocaine"}]
    assert term_patterns(training_docs(), min_precision=0.3, min_count=1, min_length=2) == [
        {"label": "Chemical", "pattern": "naloxone"}, {"label": "Disease", "pattern": "pain"},
        {"label": "Chemical", "pattern": "cocaine"}, {"label": "Chemical", "pattern": "no"},
        {"label": "Chemical", "pattern": "lithium"}]
    assert term_patterns([]) == []


def write_corpus(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    DocBin(docs=training_docs()).to_disk(path)
    return path


def test_ner_patterns_command_writes_refuses_to_overwrite_and_is_atomic(tmp_path):
    corpus = write_corpus(tmp_path / "train" / "corpus.spacy")
    out = tmp_path / "patterns.jsonl"
    runner = CliRunner()
    result = runner.invoke(app, ["ner-patterns", str(out), "--corpus", str(tmp_path / "train"),
                                 "--min-precision", "0.6"])
    assert result.exit_code == 0, result.output
    assert "Wrote 2 patterns" in result.output
    assert [json.loads(line) for line in out.read_text().splitlines()] == [
        {"label": "Chemical", "pattern": "naloxone"}, {"label": "Chemical", "pattern": "cocaine"}]
    assert build_term_patterns([str(corpus)], min_precision=0.6) == read_term_patterns(out)

    result = runner.invoke(app, ["ner-patterns", str(out), "--corpus", str(corpus)])
    assert result.exit_code == 1 and "E763" in result.output
    assert len(out.read_text().splitlines()) == 2  # untouched
    result = runner.invoke(app, ["ner-patterns", str(out), "--corpus", str(corpus), "--force"])
    assert result.exit_code == 0, result.output
    assert len(out.read_text().splitlines()) == 1

    empty = tmp_path / "empty"
    empty.mkdir()
    result = runner.invoke(app, ["ner-patterns", str(tmp_path / "x.jsonl"), "--corpus", str(empty)])
    assert result.exit_code == 1 and "E762" in result.output
    assert not (tmp_path / "x.jsonl").exists()

    def failing():
        yield {"label": "Chemical", "pattern": "a"}
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        write_term_patterns(out, failing(), force=True)
    assert len(out.read_text().splitlines()) == 1  # the old file, whole
    assert sorted(os.listdir(tmp_path)) == ["empty", "patterns.jsonl", "train"]


def test_ner_patterns_never_replaces_its_corpus_and_names_a_bad_one(tmp_path):
    corpus = write_corpus(tmp_path / "corpus.spacy")
    before = corpus.read_bytes()
    runner = CliRunner()
    result = runner.invoke(app, ["ner-patterns", str(corpus), "--corpus", str(corpus), "--force"])
    assert result.exit_code == 1 and "E030" in result.output
    assert corpus.read_bytes() == before
    bad = tmp_path / "bad.spacy"
    bad.write_bytes(b"\xef\xbb\xbf" + before[:200])  # a BOM, then a truncated DocBin
    result = runner.invoke(app, ["ner-patterns", str(tmp_path / "p.jsonl"), "--corpus", str(bad)])
    assert result.exit_code == 1 and "E025" in result.output and "bad.spacy" in result.output
    assert not (tmp_path / "p.jsonl").exists()


def test_read_term_patterns_names_the_bad_line(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"label": "Chemical", "pattern": "naloxone"}\n\n{"label": "Chemical"}\n')
    with pytest.raises(BioLinkError, match=r"E764.*p.jsonl:3"):
        read_term_patterns(path)
    path.write_text('{"label": "Chemical", "pattern": [{"LOWER": "no"}]}\nnot json\n')
    with pytest.raises(BioLinkError, match=r"E764.*p.jsonl:2: bad pattern: not valid JSON"):
        build_read_term_patterns(str(path))


def test_term_ruler_adds_missed_terms_and_keeps_its_patterns_on_disk(tmp_path):
    nlp = spacy.blank("en")
    add_term_ruler(nlp, [{"label": "Chemical", "pattern": "naloxone"},
                         {"label": "Disease", "pattern": "heart failure"}])
    doc = nlp.make_doc("Naloxone helped in heart failure and pain.")
    doc.ents = [doc.char_span(37, 41, label="Disease")]  # what an NER found: "pain"
    doc = nlp.get_pipe("term_ruler")(doc)
    assert [(e.text, e.label_) for e in doc.ents] == [
        ("Naloxone", "Chemical"), ("heart failure", "Disease"), ("pain", "Disease")]
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    assert loaded.pipe_names == ["term_ruler"]
    assert [(e.text, e.label_) for e in loaded("HEART FAILURE after naloxone").ents] == [
        ("HEART FAILURE", "Disease"), ("naloxone", "Chemical")]


_TAGGED_TEXTS = []


@spacy.Language.component("test_tags_every_token")
def _tags_every_token(doc):
    """A pipe in front of the term ruler that tags (as bio_gazetteer does) and records what
    it was run on."""
    _TAGGED_TEXTS.append(doc.text)
    for token in doc:
        token.tag_ = "B-Chemical"
    return doc


def test_term_ruler_tokenizes_its_patterns_alone_at_add_and_at_load(tmp_path):
    """spaCy's span_ruler runs the pipes before it over its pattern texts (and warns, W012,
    when they tag); bio_term_ruler makes them with the tokenizer alone, the same matches."""
    import warnings

    nlp = spacy.blank("en")
    nlp.add_pipe("test_tags_every_token")
    _TAGGED_TEXTS.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # W012 would fail the test
        add_term_ruler(nlp, [{"label": "Chemical", "pattern": "Naloxone hydrochloride"}])
        assert _TAGGED_TEXTS == [] and nlp.get_pipe_meta("term_ruler").factory == "bio_term_ruler"
        assert [(e.text, e.label_) for e in nlp("We gave naloxone hydrochloride.").ents] == [
            ("naloxone hydrochloride", "Chemical")]
        nlp.to_disk(tmp_path / "model")
        _TAGGED_TEXTS.clear()
        loaded = spacy.load(tmp_path / "model")
        assert _TAGGED_TEXTS == [] and loaded.pipe_names == ["test_tags_every_token", "term_ruler"]
        assert [(e.text, e.label_) for e in loaded("NALOXONE HYDROCHLORIDE now").ents] == [
            ("NALOXONE HYDROCHLORIDE", "Chemical")]
    # spaCy's own ruler, for contrast: the pattern text went through the tagging pipe.
    _TAGGED_TEXTS.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nlp.add_pipe("span_ruler", name="plain", config={"phrase_matcher_attr": "LOWER"}
                     ).add_patterns([{"label": "Chemical", "pattern": "naloxone"}])
    assert _TAGGED_TEXTS == ["naloxone"]


def test_drop_nil_drops_unlinked_entities_of_its_labels(tmp_path):
    nlp = spacy.blank("en")
    doc = nlp.make_doc("Aspirin and xyzzy and foo and bar.")
    doc.ents = [doc.char_span(0, 7, label="Chemical", kb_id="D001241"),
                doc.char_span(12, 17, label="Chemical", kb_id="NIL"),
                doc.char_span(22, 25, label="Disease", kb_id="NIL"),
                doc.char_span(30, 33, label="Gene")]
    kept = [e.text for e in DropNil()(doc.copy()).ents]
    assert kept == ["Aspirin"]
    kept = [e.text for e in DropNil(labels=["Chemical"])(doc.copy()).ents]
    assert kept == ["Aspirin", "foo", "bar"]

    nlp.add_pipe("bio_drop_nil", config={"labels": ["Chemical"]})
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    assert loaded.pipe_names == ["bio_drop_nil"]
    assert loaded.get_pipe("bio_drop_nil").labels == {"Chemical"}
    assert [e.text for e in loaded.get_pipe("bio_drop_nil")(doc.copy()).ents] == [
        "Aspirin", "foo", "bar"]


def test_drop_nil_after_a_linker_drops_what_it_could_not_link(tiny_dictionary):
    nlp = make_linker_nlp(tiny_dictionary)
    nlp.add_pipe("bio_drop_nil")
    doc = doc_with_ents(nlp, "Breast cancer and xyzzy plugh.", ["Breast cancer", "xyzzy plugh"])
    doc = nlp.get_pipe("bio_drop_nil")(nlp.get_pipe("bio_linker")(doc))
    assert [(e.text, e.kb_id_) for e in doc.ents] == [("Breast cancer", "D001943")]


def test_term_ruler_from_a_config_reads_its_patterns_at_initialize(tmp_path):
    """spaCy's own [initialize] reads the patterns through the registered reader."""
    from thinc.api import Config

    from spacy_biolink.ner.term_patterns import TERM_RULER_CONFIG

    path = tmp_path / "patterns.jsonl"
    write_term_patterns(path, [{"label": "Chemical", "pattern": "naloxone"}])
    config = Config({
        "nlp": {"lang": "en", "pipeline": ["term_ruler"]},
        "components": {"term_ruler": {"factory": "span_ruler", **TERM_RULER_CONFIG}},
        "initialize": {"components": {"term_ruler": {"patterns": {
            "@misc": "spacy-biolink.read_term_patterns.v1", "path": str(path)}}}}})
    nlp = spacy.util.load_model_from_config(config, auto_fill=True)
    nlp.initialize()
    assert [(e.text, e.label_) for e in nlp("Then NALOXONE.").ents] == [("NALOXONE", "Chemical")]
