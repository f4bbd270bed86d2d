"""BioC XML and JSON in and out: corpora/bioc.py, and `convert`, `link` and `evaluate-e2e`
reading BioC files and `link` writing them."""
import gzip
import json

import pytest
import spacy

from spacy_biolink.corpora.bioc import bioc_format, read_bioc, read_corpus
from spacy_biolink.corpora.pubtator import read_pubtator
from spacy_biolink.errors import BioLinkError
from spacy_biolink.runners.local import link_file

from .conftest import invoke_cli, make_linker_nlp

TITLE = "Type 2 diabetes and breast cancer."
ABSTRACT = "We saw breast cancer, then type 2 diabetes."
# BioRED's layout: the abstract one space after the title; annotation offsets are document
# offsets; a passage holds several annotations.
XML = f"""<?xml version='1.0' encoding='UTF-8'?>
<collection><source>test</source><date>2026-01-01</date><key>k</key>
<document><id>7</id>
<passage><infon key="type">title</infon><offset>0</offset><text>{TITLE}</text>
<annotation id="0"><infon key="identifier">D003924</infon><infon key="type">DiseaseOrPhenotypicFeature</infon><location offset="0" length="15"/><text>Type 2 diabetes</text></annotation>
<annotation id="1"><infon key="identifier">D001943</infon><infon key="type">DiseaseOrPhenotypicFeature</infon><location offset="20" length="13"/><text>breast cancer</text></annotation>
</passage>
<passage><infon key="type">abstract</infon><offset>{len(TITLE) + 1}</offset><text>{ABSTRACT}</text>
<annotation id="2"><infon key="type">DiseaseOrPhenotypicFeature</infon><location offset="{len(TITLE) + 8}" length="13"/><text>breast cancer</text></annotation>
</passage>
</document>
</collection>
"""
PUBTATOR = (f"7|t|{TITLE}\n7|a|{ABSTRACT}\n"
            f"7\t0\t15\tType 2 diabetes\tDiseaseOrPhenotypicFeature\tD003924\n"
            f"7\t20\t33\tbreast cancer\tDiseaseOrPhenotypicFeature\tD001943\n"
            f"7\t{len(TITLE) + 8}\t{len(TITLE) + 21}\tbreast cancer\tDiseaseOrPhenotypicFeature\t-1\n\n")


def as_json(passages, **document):
    """A BioC JSON collection as BioRED ships it: no infons, sentences or relations keys."""
    return json.dumps({"source": "test", "date": "", "key": "",
                       "documents": [dict({"id": "7", "passages": passages}, **document)]})


def key(document):
    return (document.pmid, document.text,
            sorted((m.start, m.end, m.text, m.type, m.ids) for m in document.mentions))


@pytest.fixture
def model_dir(tiny_dictionary, tmp_path):
    """A linker over the tiny dictionary with a ruler that finds its diseases."""
    nlp = make_linker_nlp(tiny_dictionary, threshold=0.5)
    ruler = nlp.add_pipe("entity_ruler", before="bio_linker")
    ruler.add_patterns([{"label": "Disease", "pattern": [{"LOWER": "type"}, {"LOWER": "2"},
                                                         {"LOWER": "diabetes"}]},
                        {"label": "Disease", "pattern": [{"LOWER": "breast"},
                                                         {"LOWER": "cancer"}]}])
    path = tmp_path / "model"
    nlp.to_disk(path)
    return path


def test_xml_json_and_pubtator_give_the_same_documents(tmp_path):
    (tmp_path / "c.xml").write_text(XML, encoding="utf8")
    (tmp_path / "c.PubTator").write_text(PUBTATOR, encoding="utf8")
    passages = [{"offset": 0, "text": TITLE, "annotations": [
                    {"id": "0", "infons": {"identifier": "D003924", "type":
                                           "DiseaseOrPhenotypicFeature"},
                     "text": "Type 2 diabetes", "locations": [{"offset": 0, "length": 15}]},
                    {"id": "1", "infons": {"identifier": "D001943", "type":
                                           "DiseaseOrPhenotypicFeature"},
                     "text": "breast cancer", "locations": [{"offset": 20, "length": 13}]}]},
                {"offset": len(TITLE) + 1, "text": ABSTRACT, "annotations": [
                    {"id": "2", "infons": {"type": "DiseaseOrPhenotypicFeature"},
                     "text": "breast cancer",
                     "locations": [{"offset": len(TITLE) + 8, "length": 13}]}]}]
    with gzip.open(tmp_path / "c.json.gz", "wt", encoding="utf8") as fileh:
        fileh.write(as_json(passages))
    xml, = read_bioc(tmp_path / "c.xml")
    js, = read_bioc(tmp_path / "c.json.gz")
    pubtator, = read_pubtator(tmp_path / "c.PubTator")
    assert key(xml) == key(js) == key(pubtator)
    assert xml.text == f"{TITLE} {ABSTRACT}" and xml.title == TITLE
    assert [m.ids for m in xml.mentions] == [["D003924"], ["D001943"], []]  # no id: -1
    assert [(p.offset, p.start) for p in xml.passages] == [(0, 0), (len(TITLE) + 1,) * 2]
    assert bioc_format(tmp_path / "c.xml") == "bioc-xml"
    assert bioc_format(tmp_path / "c.json.gz") == "bioc-json"
    assert bioc_format(tmp_path / "c.PubTator") is None
    assert key(next(read_corpus(tmp_path / "c.json.gz"))) == key(pubtator)


def test_passages_without_room_are_placed_after_and_shifted_back(model_dir, tmp_path):
    """Offsets restarting at 0 in each passage: the text keeps the passages apart and
    the output gives the input's offsets back."""
    (tmp_path / "c.json").write_text(as_json([
        {"offset": 0, "text": "Type 2 diabetes", "annotations": []},
        {"offset": 0, "text": "Then breast cancer.", "annotations": []}]), encoding="utf8")
    document, = read_bioc(tmp_path / "c.json")
    assert document.text == "Type 2 diabetes Then breast cancer."
    assert [p.shift for p in document.passages] == [0, 16]
    link_file(model_dir, tmp_path / "c.json", tmp_path / "out.bioc.json", progress=False)
    out = json.loads((tmp_path / "out.bioc.json").read_text(encoding="utf8"))
    second = out["documents"][0]["passages"][1]
    annotation, = second["annotations"]
    location, = annotation["locations"]
    assert second["text"][location["offset"]:location["offset"] + location["length"]] == \
        "breast cancer"
    assert annotation["infons"]["identifier"] == "D001943"


def test_link_round_trips_a_collection_as_json_and_xml(model_dir, tmp_path):
    (tmp_path / "c.xml").write_text(XML, encoding="utf8")
    source, = read_bioc(tmp_path / "c.xml")
    for name in ("out.bioc.json", "out.xml", "out.bioc.json.gz"):
        stats = link_file(model_dir, tmp_path / "c.xml", tmp_path / name, progress=False)
        back, = read_bioc(tmp_path / name)
        assert (back.pmid, back.text) == (source.pmid, source.text)
        assert [(p.offset, p.length, p.infons) for p in back.passages] == \
            [(p.offset, p.length, p.infons) for p in source.passages]
        found = sorted((m.start, m.end, m.text, m.type, m.raw_ids) for m in back.mentions)
        assert found == [(0, 15, "Type 2 diabetes", "Disease", "D003924"),
                         (20, 33, "breast cancer", "Disease", "D001943"),
                         (len(TITLE) + 8, len(TITLE) + 21, "breast cancer", "Disease", "D001943"),
                         (len(TITLE) + 28, len(TITLE) + 43, "type 2 diabetes", "Disease",
                          "D003924")]
        assert back.offset_mismatches == [] and stats.entities == 4
    collection_head = json.loads((tmp_path / "out.bioc.json").read_text(encoding="utf8"))
    assert (collection_head["source"], collection_head["key"]) == ("test", "k")


def test_jsonl_in_bioc_out_and_bioc_in_jsonl_out(model_dir, tmp_path):
    (tmp_path / "in.jsonl").write_text(json.dumps({"id": "a1", "text": ABSTRACT}) + "\n",
                                       encoding="utf8")
    link_file(model_dir, tmp_path / "in.jsonl", tmp_path / "out.json", progress=False)
    document, = read_bioc(tmp_path / "out.json")
    assert (document.pmid, document.text, len(document.mentions)) == ("a1", ABSTRACT, 2)
    (tmp_path / "c.bioc").write_text(XML, encoding="utf8")
    link_file(model_dir, tmp_path / "c.bioc", tmp_path / "out.jsonl", progress=False)
    record = json.loads((tmp_path / "out.jsonl").read_text(encoding="utf8"))
    assert record["id"] == "7" and record["text"] == f"{TITLE} {ABSTRACT}"
    assert [e["start"] for e in record["entities"]] == [0, 20, len(TITLE) + 8, len(TITLE) + 28]


def test_cli_link_output_format_and_types(model_dir, tmp_path):
    (tmp_path / "c.xml").write_text(XML, encoding="utf8")
    invoke_cli("link", tmp_path / "c.xml", "--model", model_dir, "--output",
               tmp_path / "out.txt", "--output-format", "bioc-xml")
    assert len(next(read_bioc(tmp_path / "out.txt", format="bioc-xml")).mentions) == 4
    bad = invoke_cli("link", tmp_path / "c.xml", "--model", model_dir, "--output",
                     tmp_path / "o.jsonl", "--output-format", "parquet", check=False)
    assert bad.returncode == 1 and "E365" in bad.stdout + bad.stderr
    assert not (tmp_path / "o.jsonl").exists()


def test_convert_and_evaluate_e2e_read_bioc(model_dir, tmp_path):
    (tmp_path / "c.xml").write_text(XML, encoding="utf8")
    (tmp_path / "c.PubTator").write_text(PUBTATOR, encoding="utf8")
    invoke_cli("convert", tmp_path / "c.xml", tmp_path / "bioc.spacy")
    invoke_cli("convert", tmp_path / "c.PubTator", tmp_path / "pubtator.spacy")
    from spacy.tokens import DocBin

    nlp = spacy.blank("en")
    bioc_doc, = DocBin().from_disk(tmp_path / "bioc.spacy").get_docs(nlp.vocab)
    pubtator_doc, = DocBin().from_disk(tmp_path / "pubtator.spacy").get_docs(nlp.vocab)
    spans = lambda doc: [(s.start_char, s.end_char, s.label_, s.kb_id_)  # noqa: E731
                         for s in doc.spans["mentions"]]
    assert bioc_doc.text == pubtator_doc.text and spans(bioc_doc) == spans(pubtator_doc)
    assert [list(p) for p in bioc_doc.user_data["passages"]] == \
        [[0, 0, len(TITLE)], [len(TITLE) + 1, len(TITLE) + 1, len(ABSTRACT)]]
    scores = []
    for gold in ("c.xml", "pubtator.spacy"):
        invoke_cli("evaluate-e2e", model_dir, tmp_path / gold, "--output", tmp_path / "e2e.json")
        result = json.loads((tmp_path / "e2e.json").read_text(encoding="utf8"))
        scores.append((result["ner"], result["linking"]))
    assert scores[0] == scores[1]
    assert scores[0][0]["n_gold"] == 3 and scores[0][0]["n_pred"] == 4


@pytest.mark.parametrize("content,code", [
    ("<collection><document><id>1</id><passage><offset>0", "E361"),
    ("<collection><document><id>1</id><passage><offset>0</offset><text>ab</text>"
     "<annotation id=\"3\"><location offset=\"0\" length=\"2\"/><text>ab</text></annotation>"
     "</passage></document></collection>", "E362"),
    ("<collection><document><id>1</id><passage><offset>0</offset><text>ab</text>"
     "<annotation id=\"3\"><infon key=\"type\">Gene</infon><location offset=\"0\" "
     "length=\"0\"/><text>ab</text></annotation></passage></document></collection>", "E363"),
    ("<collection><document><id>1</id></document><document><id>1</id></document>"
     "</collection>", "E364"),
    ('{"documents": 3}', "E361"),
])
def test_malformed_bioc_names_the_file_and_what_is_wrong(tmp_path, content, code):
    path = tmp_path / ("c.json" if content.startswith("{") else "c.xml")
    path.write_text(content, encoding="utf8")
    with pytest.raises(BioLinkError, match=code) as err:
        list(read_bioc(path))
    assert str(path) in str(err.value)


def test_bioc_format_asked_for_a_file_that_is_not_bioc(model_dir, tmp_path):
    (tmp_path / "in.txt").write_text("Type 2 diabetes.\n", encoding="utf8")
    with pytest.raises(BioLinkError, match="E360"):
        link_file(model_dir, tmp_path / "in.txt", tmp_path / "o.jsonl", format="bioc",
                  progress=False)


def test_biored_dev_bioc_xml_json_and_pubtator_agree(shared_data):
    """BioRED dev as BioC XML, BioC JSON and PubTator: the same 100 documents, texts and
    mentions (offsets, texts, types, ids)."""
    biored = shared_data / "biored"
    xml = [key(d) for d in read_bioc(biored / "Dev.BioC.XML.gz")]
    js = [key(d) for d in read_bioc(biored / "Dev.BioC.JSON.gz")]
    pubtator = [key(d) for d in read_pubtator(biored / "Dev.PubTator.gz")]
    assert len(xml) == 100 and sum(len(k[2]) for k in xml) > 3000
    assert xml == js == pubtator


def test_biored_dev_round_trips_through_link(shared_data, model_dir, tmp_path):
    """Read BioRED dev BioC, link it, write BioC JSON and XML, read them back: the same
    documents, passages and texts, every annotation's text at its offsets."""
    dev = shared_data / "biored" / "Dev.BioC.XML.gz"
    source = list(read_bioc(dev))
    for name in ("out.bioc.json", "out.bioc.xml"):
        stats = link_file(model_dir, dev, tmp_path / name, progress=False)
        back = list(read_bioc(tmp_path / name))
        assert [(d.pmid, d.text, [(p.offset, p.length, p.infons) for p in d.passages])
                for d in back] == \
            [(d.pmid, d.text, [(p.offset, p.length, p.infons) for p in d.passages])
             for d in source]
        assert sum(len(d.mentions) for d in back) == stats.entities > 0
        assert all(not d.offset_mismatches for d in back)


def test_annotations_are_the_spans_a_pipeline_without_ner_links(tiny_dictionary, tmp_path):
    """As a .jsonl "entities" list: the annotations are linked, labelled with six types."""
    (tmp_path / "c.xml").write_text(XML, encoding="utf8")
    nlp = make_linker_nlp(tiny_dictionary, threshold=0.5, labels=["Disease"])
    stats = link_file(nlp, tmp_path / "c.xml", tmp_path / "out.jsonl", progress=False)
    record = json.loads((tmp_path / "out.jsonl").read_text(encoding="utf8"))
    assert [(e["start"], e["label"], e["kb_id"]) for e in record["entities"]] == \
        [(0, "Disease", "D003924"), (20, "Disease", "D001943"),
         (len(TITLE) + 8, "Disease", "D001943")]
    assert stats.linked == 3


def test_pubtator3_export_and_sentence_passages_are_read(tmp_path):
    """PubTator3's export wraps its documents in {"PubTator3": [...]}, with int ids and
    prefixed identifiers; a passage may hold its text in sentences only."""
    document = {"_id": "7|None", "id": 7, "infons": {}, "relations": [], "passages": [
        {"offset": 0, "infons": {"type": "title"}, "text": TITLE, "annotations": [
            {"id": 1, "infons": {"identifier": "MESH:D003924", "type": "Disease",
                                 "database": "ncbi_mesh"},
             "text": "Type 2 diabetes", "locations": [{"offset": 0, "length": 15}]}]},
        {"offset": len(TITLE) + 1, "infons": {"type": "abstract"}, "sentences": [
            {"offset": len(TITLE) + 1, "text": ABSTRACT, "annotations": [
                {"id": 2, "infons": {"type": "Disease"}, "text": "breast cancer",
                 "locations": [{"offset": len(TITLE) + 8, "length": 13}]}]}]}]}
    (tmp_path / "p3.json").write_text(json.dumps({"PubTator3": [document]}), encoding="utf8")
    read, = read_bioc(tmp_path / "p3.json")
    assert read.pmid == "7" and read.text == f"{TITLE} {ABSTRACT}"
    assert [(m.start, m.text, m.raw_ids) for m in read.mentions] == \
        [(0, "Type 2 diabetes", "MESH:D003924"), (len(TITLE) + 8, "breast cancer", "-1")]
    assert read.offset_mismatches == []
