"""An NER and a linker trained apart, joined into one text-in, links-out pipeline."""
import pytest
import spacy
from spacy.training import Example
from typer.testing import CliRunner

from spacy_biolink.runners.assemble import assemble_pipeline
from spacy_biolink.cli import app
from spacy_biolink.errors import BioLinkError

from .conftest import make_linker_nlp

TRAIN = [("Type 2 diabetes was seen in them.", [(0, 15, "Disease")]),
         ("Patients with breast cancer and NIDDM.", [(14, 27, "Disease"), (32, 37, "Disease")]),
         ("Huntington disease runs in families.", [(0, 18, "Disease")])]


@pytest.fixture(scope="module")
def ner_dir(tmp_path_factory):
    """A blank-en NER overfitted on three sentences: enough to find their entities again."""
    spacy.util.fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("ner")
    examples = [Example.from_dict(nlp.make_doc(text), {"entities": ents}) for text, ents in TRAIN]
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(40):
        nlp.update(examples, sgd=optimizer, drop=0.0)
    assert [[e.text for e in nlp(text).ents] for text, _ in TRAIN] \
        == [["Type 2 diabetes"], ["breast cancer", "NIDDM"], ["Huntington disease"]]
    path = tmp_path_factory.mktemp("ner") / "model"
    nlp.to_disk(path)
    return path


@pytest.fixture
def linker_dir(tiny_dictionary, tmp_path):
    nlp = make_linker_nlp(tiny_dictionary)
    nlp.meta["biolink"] = {"kb_url_template": "https://kb.example/{}"}
    nlp.to_disk(tmp_path / "linker")
    return tmp_path / "linker"


def test_assembled_pipeline_finds_and_links_after_loading(ner_dir, linker_dir, tmp_path):
    assemble_pipeline(ner_dir, linker_dir, tmp_path / "full")
    nlp = spacy.load(tmp_path / "full")
    assert nlp.pipe_names == ["ner", "bio_linker"]
    assert nlp.meta["biolink"]["kb_url_template"] == "https://kb.example/{}"
    linked = [[(e.text, e.kb_id_) for e in doc.ents] for doc in nlp.pipe(t for t, _ in TRAIN)]
    assert linked == [[("Type 2 diabetes", "D003924")],
                      [("breast cancer", "D001943"), ("NIDDM", "D003924")],
                      [("Huntington disease", "D006816")]]
    assert nlp(TRAIN[1][0]).ents[0]._.kb_ents[0] == ("D001943", 1.0)


def test_assemble_cli_and_its_errors(ner_dir, linker_dir, tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["assemble", str(ner_dir), str(linker_dir), str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "bio_linker").is_dir() and (tmp_path / "out" / "ner").is_dir()

    result = runner.invoke(app, ["assemble", str(ner_dir), str(linker_dir), str(tmp_path / "out")])
    assert result.exit_code == 1 and "E403" in result.output
    result = runner.invoke(app, ["assemble", str(ner_dir), str(linker_dir), str(tmp_path / "out"),
                                 "--force"])
    assert result.exit_code == 0, result.output

    with pytest.raises(BioLinkError, match="E758"):  # the "NER" is a linker: nothing finds ents
        assemble_pipeline(linker_dir, linker_dir, tmp_path / "bad1")
    with pytest.raises(BioLinkError, match="E402"):
        assemble_pipeline(ner_dir, ner_dir, tmp_path / "bad2")
    with pytest.raises(BioLinkError, match="E401"):
        assemble_pipeline(tmp_path / "missing", linker_dir, tmp_path / "bad3")
    assert not any(p.name.startswith(("bad", ".bad")) for p in tmp_path.iterdir())


def test_ner_config_trains_on_one_label_or_the_corpus_types(tmp_path):
    """configs/ner.cfg as a user runs it: its corpora give every gold entity "Disease",
    unless the augmenter's label is set to null."""
    from pathlib import Path

    from spacy.tokens import DocBin
    from spacy.util import load_config, registry

    nlp = spacy.blank("en")
    doc = nlp.make_doc("Breast cancer and NIDDM.")
    doc.ents = [doc.char_span(0, 13, "SpecificDisease", kb_id="D001943"),
                doc.char_span(18, 23, "Modifier", kb_id="D003924")]
    DocBin(docs=[doc]).to_disk(tmp_path / "train.spacy")
    config_path = Path(__file__).resolve().parents[1] / "configs" / "ner.cfg"
    for label, expected in [("Disease", ["Disease", "Disease"]),
                            (None, ["SpecificDisease", "Modifier"])]:
        config = load_config(config_path, overrides={
            "paths.train": str(tmp_path / "train.spacy"), "paths.dev": str(tmp_path / "train.spacy"),
            "corpora.train.augmenter.label": label}, interpolate=True)
        corpus = registry.resolve(config["corpora"])["train"]
        [example] = list(corpus(nlp))
        assert [e.label_ for e in example.reference.ents] == expected
        assert [e.kb_id_ for e in example.reference.ents] == ["D001943", "D003924"]
        assert not example.predicted.ents


def test_assemble_adds_the_term_ruler_after_the_ner_and_the_nil_drop_last(ner_dir, linker_dir,
                                                                          tmp_path):
    patterns = tmp_path / "patterns.jsonl"
    patterns.write_text('{"label": "Disease", "pattern": "hirschsprung disease"}\n'
                        '{"label": "Disease", "pattern": "xyzzy plugh"}\n')
    runner = CliRunner()
    result = runner.invoke(app, ["assemble", str(ner_dir), str(linker_dir), str(tmp_path / "one"),
                                 "--patterns", str(patterns), "--drop-nil"])
    assert result.exit_code == 0, result.output
    # a second linker joins before the NIL drop, which judges every linker's links
    assemble_pipeline(tmp_path / "one", linker_dir, tmp_path / "two", name="second_linker")
    nlp = spacy.load(tmp_path / "two")
    assert nlp.pipe_names == ["ner", "term_ruler", "bio_linker", "second_linker", "bio_drop_nil"]
    text = "Hirschsprung disease and xyzzy plugh. Type 2 diabetes was seen in them."
    assert [(e.text, e.kb_id_) for e in nlp(text).ents] == [
        ("Hirschsprung disease", "D006527"), ("Type 2 diabetes", "D003924")]
    with nlp.select_pipes(disable=["bio_drop_nil"]):
        assert [(e.text, e.kb_id_) for e in nlp(text).ents] == [
            ("Hirschsprung disease", "D006527"), ("xyzzy plugh", "NIL"),
            ("Type 2 diabetes", "D003924")]
    patterns.write_text('{"pattern": "x"}\n')
    with pytest.raises(BioLinkError, match="E764"):
        assemble_pipeline(ner_dir, linker_dir, tmp_path / "bad", patterns=patterns)
    assert not (tmp_path / "bad").exists()


def test_drop_nil_labels_drops_only_those_labels_nil_entities(ner_dir, linker_dir, tmp_path):
    """--drop-nil-labels Disease: a Disease entity left NIL is dropped, a Chemical one stays,
    unlinked (no linking prediction, still an entity)."""
    patterns = tmp_path / "patterns.jsonl"
    patterns.write_text('{"label": "Chemical", "pattern": "xyzzy plugh"}\n'
                        '{"label": "Disease", "pattern": "frobnitz"}\n')
    text = "Hirschsprung disease and xyzzy plugh. Type 2 diabetes was seen in them and frobnitz."
    runner = CliRunner()
    base = ["assemble", str(ner_dir), str(linker_dir)]
    result = runner.invoke(app, base + [str(tmp_path / "one"), "--patterns", str(patterns),
                                        "--drop-nil", "--drop-nil-labels", "Disease"])
    assert result.exit_code == 0, result.output
    # a second linker joins before the NIL drop, which keeps its labels
    assemble_pipeline(tmp_path / "one", linker_dir, tmp_path / "two", name="second_linker")
    nlp = spacy.load(tmp_path / "two")
    assert nlp.pipe_names[-1] == "bio_drop_nil"
    assert nlp.get_pipe_config("bio_drop_nil")["labels"] == ["Disease"]
    assert [(e.text, e.label_, e.kb_id_) for e in nlp(text).ents] == [
        ("Hirschsprung disease", "Disease", "D006527"), ("xyzzy plugh", "Chemical", "NIL"),
        ("Type 2 diabetes", "Disease", "D003924")]
    # every label's NIL entities go without the setting
    nlp = assemble_pipeline(ner_dir, linker_dir, tmp_path / "all", patterns=patterns,
                            drop_nil=True)
    assert [e.text for e in nlp(text).ents] == ["Hirschsprung disease", "Type 2 diabetes"]
    # a label no entity pipe sets, or the setting without --drop-nil: E480, nothing written
    for extra in (["--drop-nil", "--drop-nil-labels", "Diseases"], ["--drop-nil-labels", "Disease"]):
        bad = runner.invoke(app, base + [str(tmp_path / "bad"), "--patterns", str(patterns)] + extra)
        assert bad.exit_code != 0 and "E480" in bad.output, bad.output
        assert not (tmp_path / "bad").exists()


def test_assemble_nil_threshold_drops_the_unsure_links(ner_dir, linker_dir, tmp_path):
    """--nil-threshold sets the joined linker's threshold: "diabetes" scores between the
    default and 0.8 against the tiny dictionary's names, so it is linked under the default
    and NIL, then dropped, under 0.8."""
    patterns = tmp_path / "patterns.jsonl"
    patterns.write_text('{"label": "Disease", "pattern": "diabetes"}\n')
    text = "Diabetes and breast cancer."
    runner = CliRunner()
    found = {}
    for threshold in [None, 0.8]:
        out = tmp_path / f"t{threshold}"
        args = ["assemble", str(ner_dir), str(linker_dir), str(out), "--patterns", str(patterns),
                "--drop-nil"] + ([] if threshold is None else ["--nil-threshold", str(threshold)])
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        nlp = spacy.load(out)
        assert nlp.get_pipe("bio_linker").cfg["threshold"] == (threshold or 0.45)
        found[threshold] = [(e.text, e.kb_id_) for e in nlp(text).ents]
    assert found[None] == [("Diabetes", "D003924"), ("breast cancer", "D001943")]
    assert found[0.8] == [("breast cancer", "D001943")]
    # the pipeline returned (before any reload) links with the same threshold
    nlp = assemble_pipeline(ner_dir, linker_dir, tmp_path / "direct", patterns=patterns,
                            drop_nil=True, nil_threshold=0.8)
    assert [(e.text, e.kb_id_) for e in nlp(text).ents] == [("breast cancer", "D001943")]
    result = runner.invoke(app, ["assemble", str(ner_dir), str(linker_dir), str(tmp_path / "bad"),
                                 "--nil-threshold", "1.5"])
    # TF-IDF's cosines stop at 1: the linker refuses it (a hybrid's would not), nothing written
    assert result.exit_code != 0 and "E125" in result.output, result.output
    assert not (tmp_path / "bad").exists()


DIABETES_TEXT = "Diabetes and breast cancer."


def _assemble_with_diabetes_pattern(ner_dir, linker_dir, out, *extra):
    """The NER + linker with a term pattern for "diabetes", assembled with --drop-nil
    --drop-below 0.8 (+ `extra`) into `out`, loaded."""
    patterns = out.parent / f"{out.name}_patterns.jsonl"
    patterns.write_text('{"label": "Disease", "pattern": "diabetes"}\n')
    result = CliRunner().invoke(app, ["assemble", str(ner_dir), str(linker_dir), str(out),
                                      "--patterns", str(patterns), "--drop-nil",
                                      "--drop-below", "0.8", *extra])
    assert result.exit_code == 0, result.output
    return spacy.load(out)


def test_drop_below_drops_the_span_but_keeps_the_link(ner_dir, linker_dir, tmp_path):
    """--drop-below puts the raw-text cut on bio_drop_nil, not on the linker: "Diabetes"
    (between the default threshold and 0.8) leaves doc.ents as under --nil-threshold 0.8,
    but the linker alone still gives it D003924 and its kb_ents, as a gold span deserves."""
    nlp = _assemble_with_diabetes_pattern(ner_dir, linker_dir, tmp_path / "below")
    text = DIABETES_TEXT
    assert nlp.get_pipe("bio_linker").cfg["threshold"] == 0.45
    assert nlp.get_pipe_config("bio_drop_nil")["min_score"] == 0.8
    assert [(e.text, e.kb_id_) for e in nlp(text).ents] == [("breast cancer", "D001943")]
    with nlp.select_pipes(disable=["bio_drop_nil"]):
        diabetes = nlp(text).ents[0]
    assert (diabetes.text, diabetes.kb_id_) == ("Diabetes", "D003924")
    assert 0.45 <= diabetes._.kb_ents[0][1] < 0.8
    # only with --drop-nil; a bad value is refused before anything is written
    for extra in (["--drop-below", "0.8"], ["--drop-nil", "--drop-below", "inf"]):
        bad = CliRunner().invoke(app, ["assemble", str(ner_dir), str(linker_dir),
                                       str(tmp_path / "bad")] + extra)
        assert bad.exit_code != 0 and "E480" in bad.output, bad.output
        assert not (tmp_path / "bad").exists()


def test_unlink_labels_keep_the_weak_span_as_nil(ner_dir, linker_dir, tmp_path):
    """--unlink-labels: an entity of those labels whose best link is under --drop-below
    stays, as NIL, with its kb_ents (on raw text such links were more often wrong than
    right, the spans not); the linker alone still links it. Misuse is refused."""
    nlp = _assemble_with_diabetes_pattern(ner_dir, linker_dir, tmp_path / "unlinked",
                                          "--unlink-labels", "Disease")
    text = DIABETES_TEXT
    assert nlp.get_pipe_config("bio_drop_nil")["unlink_labels"] == ["Disease"]
    ents = nlp(text).ents
    assert [(e.text, e.kb_id_) for e in ents] == [("Diabetes", "NIL"),
                                                  ("breast cancer", "D001943")]
    assert ents[0]._.kb_ents[0][0] == "D003924" and ents[0]._.kb_ents[0][1] < 0.8
    for extra in (["--drop-nil", "--unlink-labels", "Disease"],
                  ["--drop-nil", "--drop-below", "0.8", "--unlink-labels", "Chemical"],
                  ["--drop-nil", "--drop-below", "0.8", "--unlink-labels", "Disease",
                   "--drop-nil-labels", "Disease"]):
        bad = CliRunner().invoke(app, ["assemble", str(ner_dir), str(linker_dir),
                                       str(tmp_path / "bad")] + extra)
        assert bad.exit_code != 0 and "E480" in bad.output, (extra, bad.output)
        assert not (tmp_path / "bad").exists()


def test_an_ner_with_static_vectors_assembles_without_a_vectors_warning(ner_dir, linker_dir,
                                                                         tmp_path):
    """The `all` NER has static vectors and the linker pipeline none: spaCy's W113 (sourced
    pipe, other vectors) is a false alarm for a linker, which never reads them, so assemble
    shows none; the links are those of the NER without vectors."""
    import warnings

    import numpy

    nlp = spacy.load(ner_dir)
    for word in ["diabetes", "cancer"]:
        nlp.vocab.set_vector(word, numpy.ones(4, dtype="float32"))
    nlp.to_disk(tmp_path / "ner_vectors")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        joined = assemble_pipeline(tmp_path / "ner_vectors", linker_dir, tmp_path / "full")
    assert not [w for w in caught if "W113" in str(w.message)]
    assert joined.vocab.vectors.n_keys == 2 and joined.vocab.vectors.shape[1] == 4
    assert [(e.text, e.kb_id_) for e in joined(TRAIN[1][0]).ents] \
        == [("breast cancer", "D001943"), ("NIDDM", "D003924")]


def test_assemble_propagate_goes_after_the_ner_and_the_new_spans_are_linked(ner_dir, linker_dir,
                                                                           tmp_path):
    """bio_propagate (tests/test_propagate.py) after the NER and its term ruler, before the
    linkers, which link the abbreviations it tags."""
    patterns = tmp_path / "patterns.jsonl"
    patterns.write_text('{"label": "Disease", "pattern": "hirschsprung disease"}\n')
    text = "Hirschsprung disease (HSCR) runs in families. HSCR is rare."
    runner = CliRunner()
    result = runner.invoke(app, ["assemble", str(ner_dir), str(linker_dir), str(tmp_path / "out"),
                                 "--patterns", str(patterns), "--drop-nil",
                                 "--propagate", "abbreviations,repeats"])
    assert result.exit_code == 0, result.output
    nlp = spacy.load(tmp_path / "out")
    assert nlp.pipe_names == ["ner", "term_ruler", "bio_propagate", "bio_linker", "bio_drop_nil"]
    assert nlp.get_pipe("bio_propagate").repeats
    assert [(e.text, e.kb_id_) for e in nlp(text).ents] == [
        ("Hirschsprung disease", "D006527"), ("HSCR", "D006527"), ("HSCR", "D006527")]
    with nlp.select_pipes(disable=["bio_propagate"]):
        assert [e.text for e in nlp(text).ents] == ["Hirschsprung disease"]
    # a second linker goes after it; a term ruler added later goes before it
    assemble_pipeline(tmp_path / "out", linker_dir, tmp_path / "two", name="second_linker",
                      patterns=patterns)
    assert spacy.load(tmp_path / "two").pipe_names == [
        "ner", "term_ruler", "bio_propagate", "bio_linker", "second_linker", "bio_drop_nil"]
    with pytest.raises(BioLinkError, match="E480.*--propagate.*'abbreviations,typo'"):
        assemble_pipeline(ner_dir, linker_dir, tmp_path / "bad", propagate=["abbreviations",
                                                                            "typo"])
    result = runner.invoke(app, ["assemble", str(ner_dir), str(linker_dir), str(tmp_path / "bad"),
                                 "--propagate", ""])
    assert result.exit_code == 1 and "E480" in result.output
    assert not (tmp_path / "bad").exists()


def test_type_choice_lets_a_user_restrict_the_types_at_load(ner_dir, linker_dir, tmp_path):
    """--type-choice puts bio_types before the linkers; the saved pipeline then takes
    `keep` from spacy.load's config, as every spaCy setting: keeping only Chemical
    leaves no Disease entity, and the default keeps every type."""
    out = tmp_path / "typed"
    result = CliRunner().invoke(app, ["assemble", str(ner_dir), str(linker_dir), str(out),
                                      "--type-choice", "--propagate", "abbreviations"])
    assert result.exit_code == 0, result.output
    nlp = spacy.load(out)
    assert nlp.pipe_names == ["ner", "bio_propagate", "bio_types", "bio_linker"]
    text = TRAIN[1][0]
    assert [(e.text, e.kb_id_) for e in nlp(text).ents] == [("breast cancer", "D001943"),
                                                           ("NIDDM", "D003924")]
    chemicals_only = spacy.load(out, config={"components": {"bio_types": {"keep": ["Chemical"]}}})
    # this NER predicts no Chemical, and the pipe says so once
    with pytest.warns(UserWarning, match="W360"):
        assert list(chemicals_only(text).ents) == []


def test_assemble_variants_goes_after_the_ner_before_propagate(ner_dir, linker_dir, tmp_path):
    """bio_variants (tests/test_variant_finder.py) after the NER and its term ruler, before
    bio_propagate and the linkers; assembled again, it is replaced, not doubled."""
    patterns = tmp_path / "patterns.jsonl"
    patterns.write_text('{"label": "Disease", "pattern": "hirschsprung disease"}\n')
    result = CliRunner().invoke(app, ["assemble", str(ner_dir), str(linker_dir),
                                      str(tmp_path / "out"), "--variants",
                                      "--propagate", "repeats"])
    assert result.exit_code == 0, result.output
    nlp = spacy.load(tmp_path / "out")
    assert nlp.pipe_names == ["ner", "bio_variants", "bio_propagate", "bio_linker"]
    assert [(e.text, e.label_) for e in nlp("NIDDM with the G20210A variant. G20210A").ents] \
        == [("NIDDM", "Disease"), ("G20210A", "Variant"), ("G20210A", "Variant")]
    assemble_pipeline(tmp_path / "out", linker_dir, tmp_path / "two", name="second_linker",
                      patterns=patterns, variants=True)
    assert spacy.load(tmp_path / "two").pipe_names == [
        "ner", "term_ruler", "bio_variants", "bio_propagate", "bio_linker", "second_linker"]
