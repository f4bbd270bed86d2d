"""A pipeline with two linkers: a disease linker over a MEDIC-style dictionary and a
chemical linker over a TSV one, each given its `labels`, behind an entity ruler. Each
command links with both, or asks which one when it needs one."""
import json

import pytest
import spacy
from spacy.tokens import Span
from typer.testing import CliRunner

from spacy_biolink import load_dictionary
from spacy_biolink.cli import app
from spacy_biolink.errors import BioLinkError
from spacy_biolink.evaluation import evaluate_end_to_end, evaluate_gold_mentions
from spacy_biolink.runners.assemble import assemble_pipeline
from spacy_biolink.linker.find import linker_pipes, the_linker
from spacy_biolink.runners.distributed import check_model_dir, link_rows, link_shard
from spacy_biolink.runners.local import link_file

from .conftest import TINY_MEDIC

CHEMICALS = ("aspirin\tD001241\nacetylsalicylic acid\tD001241\nibuprofen\tD007052\n"
             "cisplatin\tD002945\n")
PATTERNS = [("Disease", "type 2 diabetes"), ("Disease", "breast cancer"),
            ("Disease", "zzqx vvkw"), ("Chemical", "aspirin"), ("Chemical", "cisplatin"),
            ("Chemical", "qqxz")]
TEXTS = ["Aspirin did not prevent type 2 diabetes.",
         "Cisplatin for breast cancer, qqxz for zzqx vvkw."]
EXPECTED = {"type 2 diabetes": ("D003924", "bio_linker"), "breast cancer": ("D001943", "bio_linker"),
            "zzqx vvkw": ("NIL", "bio_linker"), "Aspirin": ("D001241", "chemical_linker"),
            "Cisplatin": ("D002945", "chemical_linker"), "qqxz": ("CHEM_NIL", "chemical_linker")}
CORPUS = ("1|t|Aspirin did not prevent type 2 diabetes.\n"
          "1\t0\t7\tAspirin\tChemical\tD001241\n"
          "1\t24\t39\ttype 2 diabetes\tDisease\tD003924\n\n"
          "2|t|Ibuprofen and breast cancer.\n"
          "2\t0\t9\tIbuprofen\tChemical\tD007052\n"
          "2\t14\t27\tbreast cancer\tDisease\tD001943\n\n")


def build_nlp(tmp_path, *, ruler=True):
    """Ruler, disease linker (the default name), chemical linker with its own nil_id."""
    medic, chemicals = tmp_path / "medic.txt", tmp_path / "chemicals.tsv"
    medic.write_text(TINY_MEDIC, encoding="utf8")
    chemicals.write_text(CHEMICALS, encoding="utf8")
    nlp = spacy.blank("en")
    if ruler:
        nlp.add_pipe("entity_ruler", config={"phrase_matcher_attr": "LOWER"}).add_patterns(
            [{"label": label, "pattern": text} for label, text in PATTERNS])
    nlp.add_pipe("bio_linker", config={"labels": ["Disease"], "threshold": 0.5})
    nlp.add_pipe("bio_linker", name="chemical_linker",
                 config={"labels": ["Chemical"], "threshold": 0.5, "nil_id": "CHEM_NIL"})
    with pytest.warns(UserWarning, match="W001"):  # "HD" names two MEDIC concepts
        nlp.get_pipe("bio_linker").initialize(dictionary=load_dictionary(medic))
    nlp.get_pipe("chemical_linker").initialize(dictionary=load_dictionary(chemicals, "tsv"))
    return nlp


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("several")
    build_nlp(tmp_path).to_disk(tmp_path / "model")
    return tmp_path / "model"


@pytest.fixture(scope="module")
def nlp(model_dir):
    return spacy.load(model_dir)


def test_each_linker_links_the_spans_of_its_labels(nlp):
    assert [name for name, _ in linker_pipes(nlp)] == ["bio_linker", "chemical_linker"]
    linked = {ent.text: ent.kb_id_ for doc in nlp.pipe(TEXTS) for ent in doc.ents}
    assert linked == {text: kb_id for text, (kb_id, _) in EXPECTED.items()}
    doc = nlp(TEXTS[0])
    assert doc.ents[0]._.kb_ents == [("D001241", 1.0)]


def test_the_linker_names_the_linkers_when_it_cannot_tell(nlp):
    with pytest.raises(BioLinkError, match=r"E405.*2: bio_linker, chemical_linker.*--linker"):
        the_linker(nlp, command="evaluate")
    with pytest.raises(BioLinkError, match=r"E406.*'chemcal_linker'.*bio_linker, chemical_linker"):
        the_linker(nlp, "chemcal_linker")
    assert the_linker(nlp, "chemical_linker") is nlp.get_pipe("chemical_linker")
    with pytest.raises(BioLinkError, match="E402"):
        the_linker(spacy.blank("en"))


def check_records(records):
    entities = {e["text"]: e for record in records for e in record["entities"]}
    assert {text: (e["kb_id"], e["linker"]) for text, e in entities.items()} == EXPECTED
    # Names come from the dictionary of the linker that linked the entity.
    assert entities["Aspirin"]["kb_names"] == {"D001241": "aspirin"}
    assert entities["type 2 diabetes"]["kb_names"]["D003924"] == "Diabetes Mellitus, Type 2"


def test_link_writes_every_linkers_results(model_dir, tmp_path):
    (tmp_path / "in.txt").write_text("\n".join(TEXTS) + "\n", encoding="utf8")
    result = CliRunner().invoke(app, ["link", str(tmp_path / "in.txt"), "--model", str(model_dir),
                                      "--output", str(tmp_path / "out.jsonl")])
    assert result.exit_code == 0, result.output
    check_records([json.loads(line) for line in
                   (tmp_path / "out.jsonl").read_text(encoding="utf8").splitlines()])
    # Each linker's NIL counts, by its own nil_id
    stats = link_file(model_dir, tmp_path / "in.txt", tmp_path / "again.jsonl", progress=False)
    assert (stats.entities, stats.linked, stats.nil) == (6, 4, 2)


def test_link_in_two_processes_writes_what_one_process_writes(tmp_path):
    """`link --n-process 2` (what the README advises for the bc5cdr pipeline) through the
    bc5cdr shape: ruler, bio_propagate, two linkers, NIL drop for diseases only. Forked
    workers must find the abbreviations, link them and drop the same spans as one process."""
    nlp = build_nlp(tmp_path)
    nlp.add_pipe("bio_propagate", after="entity_ruler", config={"repeats": True})
    nlp.add_pipe("bio_drop_nil", config={"labels": ["Disease"]})
    nlp.to_disk(tmp_path / "model")
    texts = [f"Cisplatin (CP) for breast cancer in patient {i}; CP, zzqx vvkw and qqxz."
             for i in range(12)] + TEXTS
    (tmp_path / "in.txt").write_text("\n".join(texts) + "\n", encoding="utf8")
    outputs = {}
    for n_process in (1, 2):
        output = tmp_path / f"out{n_process}.jsonl"
        result = CliRunner().invoke(app, ["link", str(tmp_path / "in.txt"), "--model",
                                          str(tmp_path / "model"), "--output", str(output),
                                          "--n-process", str(n_process), "--batch-size", "2"])
        assert result.exit_code == 0, result.output
        outputs[n_process] = output.read_text(encoding="utf8")
    assert outputs[2] == outputs[1]
    first = json.loads(outputs[2].splitlines()[0])["entities"]
    assert [(e["text"], e["kb_id"], e["linker"]) for e in first] == [
        ("Cisplatin", "D002945", "chemical_linker"), ("CP", "D002945", "chemical_linker"),
        ("breast cancer", "D001943", "bio_linker"), ("CP", "D002945", "chemical_linker"),
        ("qqxz", "CHEM_NIL", "chemical_linker")]  # zzqx vvkw: a NIL disease, dropped


def test_ray_rows_and_shards_have_every_linkers_results(nlp, tmp_path):
    check_records(link_rows(nlp, [{"text": text} for text in TEXTS]))
    (tmp_path / "part-0.txt").write_text("\n".join(TEXTS) + "\n", encoding="utf8")
    result = link_shard(nlp, tmp_path / "part-0.txt", tmp_path / "out.jsonl")
    assert (result["entities"], result["linked"], result["nil"]) == (6, 4, 2)
    check_records([json.loads(line) for line in
                   (tmp_path / "out.jsonl").read_text(encoding="utf8").splitlines()])


def test_the_ray_driver_accepts_a_linker_of_any_name(tmp_path):
    nlp = build_nlp(tmp_path)
    nlp.remove_pipe("bio_linker")
    nlp.to_disk(tmp_path / "chemicals_only")
    assert check_model_dir(tmp_path / "chemicals_only") == (tmp_path / "chemicals_only").resolve()
    spacy.blank("en").to_disk(tmp_path / "none")
    with pytest.raises(BioLinkError, match="E402"):
        check_model_dir(tmp_path / "none")


def test_visualize_shows_every_linkers_results(model_dir, tmp_path):
    (tmp_path / "in.txt").write_text("\n".join(TEXTS) + "\n", encoding="utf8")
    result = CliRunner().invoke(app, ["visualize", str(model_dir), str(tmp_path / "in.txt"),
                                      "--output", str(tmp_path / "page.html")])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "page.html").read_text(encoding="utf8")
    for kb_id in ("D003924", "D001943", "D001241", "D002945", "CHEM_NIL"):
        assert kb_id in page
    assert "Diabetes Mellitus, Type 2" in page and "cisplatin" in page
    assert "chemical_linker: D001241" in page
    # The chemical NIL is shown as NIL, not linked to a MeSH page
    assert "ui=CHEM_NIL" not in page


def test_evaluate_needs_linker_when_there_are_several(model_dir, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(CORPUS, encoding="utf8")
    runner = CliRunner()
    result = runner.invoke(app, ["evaluate", str(model_dir), str(corpus)])
    assert result.exit_code == 1
    assert "E405" in result.output and "bio_linker, chemical_linker" in result.output
    assert "--linker" in result.output
    result = runner.invoke(app, ["evaluate", str(model_dir), str(corpus), "--linker",
                                 "chemical_linker", "--output", str(tmp_path / "m.json")])
    assert result.exit_code == 0, result.output
    metrics = json.loads((tmp_path / "m.json").read_text(encoding="utf8"))
    assert metrics["linker"]["name"] == "chemical_linker"
    assert (metrics["n_evaluated"], metrics["acc@1"]) == (2, 1.0)
    assert metrics["skipped"]["not_linker_label"] == 2  # the disease mentions
    disease = evaluate_gold_mentions(spacy.load(model_dir), corpus, linker="bio_linker")
    assert (disease["n_evaluated"], disease["acc@1"]) == (2, 1.0)


def test_end_to_end_scores_every_linker_or_one(nlp):
    gold = []
    for text, ents in [(TEXTS[0], [(0, 7, "Chemical", "D001241"), (24, 39, "Disease", "D003924")]),
                       ("Ibuprofen and breast cancer.", [(0, 9, "Chemical", "D007052"),
                                                         (14, 27, "Disease", "D001943")])]:
        doc = nlp.make_doc(text)
        doc.ents = [Span(doc, s.start, s.end, label=label, kb_id=kb_id) for start, end, label, kb_id
                    in ents for s in [doc.char_span(start, end)]]
        gold.append(doc)
    both = evaluate_end_to_end(nlp, gold)
    # the ruler misses ibuprofen: 3 of 4 found, each linked right
    assert (both["linking"]["n_gold"], both["linking"]["n_pred"], both["linking"]["n_correct"]) \
        == (4, 3, 3)
    chemical = evaluate_end_to_end(nlp, gold, linker="chemical_linker")
    assert (chemical["linking"]["n_gold"], chemical["linking"]["n_correct"]) == (2, 1)


def test_assemble_adds_a_second_linker_under_its_own_name(tmp_path):
    nlp = build_nlp(tmp_path)
    ruler = spacy.blank("en")
    ruler.add_pipe("entity_ruler", source=nlp)
    ruler.to_disk(tmp_path / "ruler")
    for name in ("bio_linker", "chemical_linker"):
        alone = spacy.blank("en")
        alone.add_pipe(name, source=nlp, name="bio_linker")  # as init-linker names it
        alone.to_disk(tmp_path / name)
    runner = CliRunner()
    result = runner.invoke(app, ["assemble", str(tmp_path / "ruler"), str(tmp_path / "bio_linker"),
                                 str(tmp_path / "step1")])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["assemble", str(tmp_path / "step1"),
                                 str(tmp_path / "chemical_linker"), str(tmp_path / "step2"),
                                 "--name", "chemical_linker"])
    assert result.exit_code == 0, result.output
    joined = spacy.load(tmp_path / "step2")
    assert joined.pipe_names == ["entity_ruler", "bio_linker", "chemical_linker"]
    linked = {ent.text: ent.kb_id_ for doc in joined.pipe(TEXTS) for ent in doc.ents}
    assert linked == {text: kb_id for text, (kb_id, _) in EXPECTED.items()}
    # A pipeline of several linkers joins whole, each under its name; --name cannot say which
    with pytest.raises(BioLinkError, match=r"E407.*bio_linker, chemical_linker"):
        assemble_pipeline(tmp_path / "ruler", tmp_path / "step2", tmp_path / "bad", name="x")
    both = assemble_pipeline(tmp_path / "ruler", tmp_path / "step2", tmp_path / "step3")
    assert both.pipe_names == ["entity_ruler", "bio_linker", "chemical_linker"]


def test_the_reranker_retriever_is_named_when_the_pipeline_has_several(model_dir):
    from spacy_biolink.training.rerank import load_retriever

    with pytest.raises(BioLinkError, match=r"E405.*--paths.retriever_linker"):
        load_retriever({"paths": {"retriever": str(model_dir)}})
    nlp, linker = load_retriever({"paths": {"retriever": str(model_dir),
                                            "retriever_linker": "chemical_linker"}})
    assert linker is nlp.get_pipe("chemical_linker")
