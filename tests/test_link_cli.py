"""`python -m spacy_biolink link`: documents in a file in, linked entities as JSON lines out."""
import gzip
import json

import pytest
import spacy
from typer.testing import CliRunner

from spacy_biolink.cli import app
from spacy_biolink.errors import BioLinkError
from spacy_biolink.runners.local import link_file, read_input_documents

from .conftest import invoke_cli, make_linker_nlp

TEXTS = ["Type 2 diabetes and breast cancer were found.",
         "Huntington's chorea in a zzqx vvkw family."]


@pytest.fixture
def model_dir(tiny_dictionary, tmp_path):
    """A linker over the tiny dictionary with a ruler that finds its entities: the
    stand-in for a trained NER. Unmatched mentions fall below the threshold: NIL."""
    nlp = make_linker_nlp(tiny_dictionary, threshold=0.5)
    ruler = nlp.add_pipe("entity_ruler", before="bio_linker")
    ruler.add_patterns([{"label": "Disease", "pattern": text} for text in
                        ["Type 2 diabetes", "breast cancer", "Huntington's chorea", "zzqx vvkw"]])
    path = tmp_path / "model"
    nlp.to_disk(path)
    return path


def read_jsonl(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf8") as fileh:
        return [json.loads(line) for line in fileh]


def test_txt_input_matches_nlp_pipe(model_dir, tmp_path):
    (tmp_path / "in.txt").write_text(f"{TEXTS[0]}\n\n   \n{TEXTS[1]}\n", encoding="utf8")
    result = invoke_cli("link", tmp_path / "in.txt", "--model", model_dir,
                        "--output", tmp_path / "out.jsonl", "--batch-size", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    records = read_jsonl(tmp_path / "out.jsonl")
    assert [r["text"] for r in records] == TEXTS
    nlp = spacy.load(model_dir)
    for record, doc in zip(records, nlp.pipe(TEXTS)):
        assert [(e["start"], e["end"], e["text"], e["label"], e["kb_id"]) for e in record["entities"]] \
            == [(e.start_char, e.end_char, e.text, e.label_, e.kb_id_) for e in doc.ents]
        assert [e["kb_ents"] for e in record["entities"]] \
            == [[list(pair) for pair in e._.kb_ents] for e in doc.ents]
    kb_ids = {e["text"]: e["kb_id"] for r in records for e in r["entities"]}
    assert kb_ids == {"Type 2 diabetes": "D003924", "breast cancer": "D001943",
                      "Huntington's chorea": "D006816", "zzqx vvkw": "NIL"}


def test_jsonl_passes_keys_through_and_takes_given_entities(tiny_dictionary, tmp_path):
    nlp = make_linker_nlp(tiny_dictionary)  # no NER: entities come with the input
    text = "Type 1 and type 2 diabetes, then NIDDM."
    lines = [{"id": "a1", "pmid": 7, "text": TEXTS[0], "entities": [[0, 15, "Disease"]]},
             {"text": text, "meta": {"x": [1]}, "entities": [
                 {"start": 0, "end": 26, "label": "CompositeMention"}, [33, 38, "Disease"]]}]
    path = tmp_path / "in.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf8") as fileh:
        fileh.write("\n".join(json.dumps(line) for line in lines) + "\n\n")
    stats = link_file(nlp, path, tmp_path / "out.jsonl.gz", progress=False)
    first, second = read_jsonl(tmp_path / "out.jsonl.gz")
    assert list(first) == ["id", "pmid", "text", "entities"]
    assert (first["id"], first["pmid"], second["meta"]) == ("a1", 7, {"x": [1]})
    assert [(e["text"], e["kb_id"]) for e in first["entities"]] == [("Type 2 diabetes", "D003924")]
    assert "kb_parts" not in first["entities"][0]
    composite, niddm = second["entities"]
    assert niddm["kb_id"] == "D003924" and "kb_parts" not in niddm
    assert composite["kb_id"] == "D003922|D003924"
    assert [(part["text"], part["kb_ents"][0]) for part in composite["kb_parts"]] \
        == [("Type 1 diabetes", ["D003922", 1.0]), ("type 2 diabetes", ["D003924", 1.0])]
    assert (stats.docs, stats.entities) == (2, 3)


def test_pipeline_without_ner_warns_instead_of_silently_writing_nothing(linker_nlp, tmp_path):
    (tmp_path / "in.txt").write_text(TEXTS[0] + "\n", encoding="utf8")
    with pytest.warns(UserWarning, match="W750") as caught:
        stats = link_file(linker_nlp, tmp_path / "in.txt", tmp_path / "out.jsonl", progress=False)
    # Said once: the linker's own W900 does not repeat it.
    assert not any("W900" in str(w.message) for w in caught)
    assert stats.entities == 0 and read_jsonl(tmp_path / "out.jsonl")[0]["entities"] == []


@pytest.mark.parametrize("content,code,where", [
    ('{"text": "fine"}\n{"text": "broken"\n', "E752", "in.jsonl:2"),
    ('{"text": "fine"}\n\n{"id": "x"}\n', "E753", "in.jsonl:3"),
    ('["not", "an object"]\n', "E753", "in.jsonl:1"),
    ('{"text": 5}\n', "E753", "in.jsonl:1"),
    ('{"text": "short", "entities": [[0, 99, "Disease"]]}\n', "E754", "in.jsonl:1"),
    ('{"text": "a b c", "entities": [[0, 3, "X"], [2, 5, "X"]]}\n', "E754", "in.jsonl:1"),
])
def test_bad_input_names_file_and_line_and_leaves_no_output(linker_nlp, tmp_path, content,
                                                              code, where):
    folder = tmp_path / "io"
    folder.mkdir()
    (folder / "in.jsonl").write_text(content, encoding="utf8")
    output = folder / "out.jsonl"
    output.write_text("previous run\n")
    with pytest.raises(BioLinkError, match=code) as err:
        link_file(linker_nlp, folder / "in.jsonl", output, progress=False)
    assert where in str(err.value)
    assert output.read_text() == "previous run\n"
    assert sorted(p.name for p in folder.iterdir()) == ["in.jsonl", "out.jsonl"]


def test_cli_errors_are_one_clear_line(model_dir, tmp_path):
    (tmp_path / "in.jsonl").write_text('{"text": "ok"}\n{oops}\n', encoding="utf8")
    result = CliRunner().invoke(app, ["link", str(tmp_path / "in.jsonl"), "--model", str(model_dir),
                                      "--output", str(tmp_path / "out.jsonl")])
    assert result.exit_code == 1
    assert "E752" in result.output and "in.jsonl:2" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not (tmp_path / "out.jsonl").exists()


def test_missing_inputs_and_models(linker_nlp, tmp_path):
    with pytest.raises(BioLinkError, match="E750"):
        list(read_input_documents(tmp_path / "nope.txt"))
    (tmp_path / "in.csv").write_text("a\n")
    with pytest.raises(BioLinkError, match="E751"):
        list(read_input_documents(tmp_path / "in.csv"))
    (tmp_path / "in.txt").write_text("a\n")
    with pytest.raises(BioLinkError, match="E401"):
        link_file(tmp_path / "no_model", tmp_path / "in.txt", tmp_path / "o.jsonl")
    with pytest.raises(BioLinkError, match="E402"):
        link_file(spacy.blank("en"), tmp_path / "in.txt", tmp_path / "o.jsonl")
