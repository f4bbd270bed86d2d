"""Settings and inputs that are legal in form but leave the linker doing nothing, or
nonsense, without a word: each is now refused with a coded error or warned about once.
Each test fails on the code before its fix (issue 59, round three)."""
import warnings

import pytest
import spacy
from spacy.tokens import Span

from spacy_biolink.errors import BioLinkError

from .conftest import make_linker_nlp


# The NIL threshold at the lowest score: it drops nothing ----------------------------


@pytest.mark.parametrize("threshold", [-1.0, -1])
def test_a_threshold_at_the_lowest_cosine_is_refused(threshold):
    with pytest.raises(BioLinkError, match=r"E127.*threshold = -1(\.0)?\b.*-1\.0.*cosine"):
        spacy.blank("en").add_pipe("bio_linker", config={"threshold": threshold})


def test_a_threshold_just_above_the_lowest_cosine_and_zero_are_kept():
    nlp = spacy.blank("en")
    nlp.add_pipe("bio_linker", config={"threshold": -0.99})
    # init-linker writes 0.0 for trained encoders and rerankers, meaning "no NIL"
    nlp.add_pipe("bio_linker", name="zero", config={"threshold": 0.0})


def test_configure_refuses_the_lowest_cosine_too(linker_nlp):
    with pytest.raises(BioLinkError, match="E127"):
        linker_nlp.get_pipe("bio_linker").linker.configure(threshold=-1.0)


# A type filter naming no type of the dictionary --------------------------------------


def test_a_type_filter_of_unknown_types_warns_naming_the_dictionarys_types(tmp_path):
    from spacy_biolink import load_dictionary

    path = tmp_path / "typed.tsv"
    path.write_text("flu\tD007251\tT047\ncolon cancer\tD003110\tT191\nheadache\tD006261\tT184\n")
    nlp = spacy.blank("en")
    nlp.add_pipe("bio_linker", config={"type_filter": {"Disease": ["T999"]}})
    with pytest.warns(UserWarning) as caught:
        nlp.get_pipe("bio_linker").initialize(dictionary=load_dictionary(path))
    said = [str(w.message) for w in caught if "W020" in str(w.message)]
    assert len(said) == 1, said
    assert "'Disease'" in said[0] and "'T999'" in said[0]
    assert "'T047', 'T184', 'T191'" in said[0]


def test_a_type_filter_on_an_untyped_dictionary_says_it_has_no_types(tiny_dictionary):
    with pytest.warns(UserWarning, match=r"W020.*'Disease'.*types are none"):
        make_linker_nlp(tiny_dictionary, type_filter={"Disease": ["T999"]})


# spans_key naming a key the docs do not have ---------------------------------------


def _doc_with_spans(nlp, key: str):
    doc = nlp.make_doc("Patients with NIDDM and breast cancer.")
    doc.spans[key] = [Span(doc, 2, 3, label="Disease"), Span(doc, 4, 6, label="Disease")]
    return doc


def test_a_spans_key_the_doc_lacks_warns_once_naming_the_keys_it_has(tiny_dictionary):
    nlp = make_linker_nlp(tiny_dictionary, spans_key="sc")
    with pytest.warns(UserWarning, match=r"W901.*'sc'.*its span keys: 'ruler'") as caught:
        docs = [nlp(_doc_with_spans(nlp, "ruler")) for _ in range(3)]
    assert sum("W901" in str(w.message) for w in caught) == 1
    assert not any("W900" in str(w.message) for w in caught)
    assert all(s.kb_id_ == "" for doc in docs for s in doc.spans["ruler"])


def test_the_right_spans_key_links_without_a_warning(tiny_dictionary):
    nlp = make_linker_nlp(tiny_dictionary, spans_key="sc")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        doc = nlp(_doc_with_spans(nlp, "sc"))
    assert [s.kb_id_ for s in doc.spans["sc"]] == ["D003924", "D001943"]


# A saved pipeline with a component or tokenizer that is not ours --------------------


@pytest.fixture(scope="module")
def saved_linker(tmp_path_factory):
    from spacy_biolink import load_dictionary

    base = tmp_path_factory.mktemp("saved")
    (base / "d.txt").write_text("D007251||flu|influenza\nD003110||colon cancer\n")
    nlp = spacy.blank("en")
    nlp.add_pipe("bio_linker")
    nlp.get_pipe("bio_linker").initialize(dictionary=load_dictionary(base / "d.txt"))
    nlp.to_disk(base / "model")
    return base / "model"


def _edited(saved, tmp_path, edit):
    import shutil

    model = tmp_path / "model"
    shutil.copytree(saved, model)
    cfg = (model / "config.cfg").read_text(encoding="utf8")
    (model / "config.cfg").write_text(edit(model, cfg), encoding="utf8")
    return model


def _with_component(factory: str):
    def edit(model, cfg):
        (model / "x").mkdir()
        (model / "x" / "model").write_bytes(b"\x01 these bytes are not a tok2vec")
        cfg = cfg.replace('pipeline = ["bio_linker"]', 'pipeline = ["bio_linker","x"]')
        return cfg.replace("[components.bio_linker]",
                           f'[components.x]\nfactory = "{factory}"\n\n[components.bio_linker]', 1)
    return edit


def _japanese(model, cfg):
    assert '@tokenizers = "spacy.Tokenizer.v1"' in cfg
    return cfg.replace('@tokenizers = "spacy.Tokenizer.v1"',
                       '@tokenizers = "spacy.ja.JapaneseTokenizer"')


def _sudachi_missing() -> bool:
    import importlib.util

    return importlib.util.find_spec("sudachipy") is None


@pytest.mark.parametrize("factory, what", [
    ("tok2vec", r"cannot read its saved state in \S+/x \(ExtraData"),
    ("no_such_factory", "names a factory that no installed package registers")])
def test_a_foreign_component_that_fails_to_load_is_named(saved_linker, tmp_path, factory, what):
    from spacy_biolink.linker.pipeline import load_linker_pipeline

    model = _edited(saved_linker, tmp_path, _with_component(factory))
    # spaCy's own load says only "unpack(b) received extra data" (or its E002)
    with pytest.raises(Exception) as plain:
        spacy.load(model)
    assert "E197" not in str(plain.value)
    with pytest.raises(BioLinkError, match=rf"E197.*component 'x' \(factory '{factory}'.*{what}"
                       r".*remove 'x' from \[nlp\] pipeline"):
        load_linker_pipeline(model)


@pytest.mark.parametrize("command", ["link", "evaluate"])
def test_the_cli_names_the_foreign_component_too(saved_linker, tmp_path, command):
    from .conftest import invoke_cli

    model = _edited(saved_linker, tmp_path, _with_component("tok2vec"))
    (tmp_path / "in.txt").write_text("flu\n")
    (tmp_path / "c.txt").write_text("1|t|flu\n1|a|\n1\t0\t3\tflu\tDisease\tD007251\n\n")
    args = (["link", tmp_path / "in.txt", "-m", model, "-o", tmp_path / "out.jsonl"]
            if command == "link" else ["evaluate", model, tmp_path / "c.txt"])
    result = invoke_cli(*args, check=False)
    said = result.stdout + result.stderr
    assert result.returncode == 1 and "E197" in said and "'x'" in said, said


@pytest.mark.skipif(not _sudachi_missing(), reason="SudachiPy is installed here")
def test_a_tokenizer_needing_a_missing_package_is_named(saved_linker, tmp_path):
    from spacy_biolink.linker.pipeline import load_linker_pipeline
    from .conftest import invoke_cli

    model = _edited(saved_linker, tmp_path, _japanese)
    with pytest.raises(ImportError):
        spacy.load(model)
    with pytest.raises(BioLinkError, match=r"E198.*config\.cfg.*spacy\.ja\.JapaneseTokenizer"
                                           r".*pip install sudachipy"):
        load_linker_pipeline(model)
    (tmp_path / "in.txt").write_text("flu\n")
    result = invoke_cli("link", tmp_path / "in.txt", "-m", model, "-o", tmp_path / "o.jsonl",
                        check=False)
    said = result.stdout + result.stderr
    assert result.returncode == 1 and "E198" in said and "JapaneseTokenizer" in said, said
