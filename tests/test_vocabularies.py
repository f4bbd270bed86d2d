"""UMLS and OBO readers, format detection, linker.kb, type_filter and id_preference."""
import gzip
import json
import warnings

import pytest
import spacy
from spacy.tokens import Span
from typer.testing import CliRunner

from spacy_biolink import ConceptDictionary, load_dictionary
from spacy_biolink.cli import app
from spacy_biolink.linker.policy import _check_id_preference, _check_type_filter
from spacy_biolink.kb.dictionary import Concept
from spacy_biolink.errors import BioLinkError
from spacy_biolink.kb.ids import namespace_of, normalize_xref
from spacy_biolink.kb.lookup import ConceptNotFound
from spacy_biolink.kb.readers import infer_format
from spacy_biolink.kb.readers.umls import expand_semantic_types, semantic_groups

from .conftest import TINY_MEDIC, make_linker_nlp
from .vocab_files import OBO, mrconso_row, write_meta, write_obo


@pytest.fixture
def meta(tmp_path):
    return write_meta(tmp_path / "META")


@pytest.fixture
def obo(tmp_path):
    return write_obo(tmp_path / "mondo.obo")


def concepts_by_id(dictionary):
    return {dictionary.primary_id(c): c for c in range(dictionary.n_concepts)}


# UMLS -----------------------------------------------------------------------

def test_umls_reads_concepts_types_definitions_with_default_filters(meta):
    d = load_dictionary(meta, "umls")
    by_id = concepts_by_id(d)
    # C9999999 has only a suppressed (E) string: left out with it.
    assert sorted(by_id) == ["C0009264", "C0009443", "C0011849", "C0011860", "C0025598"]
    c = by_id["C0011860"]
    # The preferred string (TS=P, STT=PF, ISPREF=Y) is canonical though it came second.
    assert d.canonical_name(c) == "Diabetes Mellitus, Non-Insulin-Dependent"
    names = set(d.names_of(c))
    assert {"Type 2 diabetes", "NIDDM"} <= names
    assert "Diabetes, adult onset (obsolete)" not in names  # SUPPRESS=O dropped by default
    assert d.types_of(c) == ("T047",)
    assert d.types_of(by_id["C0025598"]) == ("T109", "T121")
    # MRDEF: the suppressed definition is skipped for the current one.
    assert d.definitions[c] == "A subclass of diabetes mellitus."
    # German strings are out by default (languages = ["ENG"]).
    assert "Diabetes mellitus" not in d.names_of(by_id["C0011849"])
    # "cold" is shared, but each concept keeps its own canonical name.
    assert d.canonical_name(by_id["C0009443"]) == "Common Cold"


def test_umls_filters(meta):
    everything = load_dictionary(meta, "umls", languages=[], suppressed=True)
    by_id = concepts_by_id(everything)
    assert "C9999999" in by_id
    assert "Diabetes mellitus" in everything.names_of(by_id["C0011849"])
    assert "Diabetes, adult onset (obsolete)" in everything.names_of(by_id["C0011860"])
    snomed = load_dictionary(meta, "umls", sources=["SNOMEDCT_US"])
    assert [snomed.primary_id(c) for c in range(snomed.n_concepts)] == ["C0011860"]
    assert snomed.names_of(0) == ["NIDDM"]
    chem = load_dictionary(meta, "umls", semantic_types=["CHEM"])
    assert [chem.primary_id(c) for c in range(chem.n_concepts)] == ["C0025598"]
    by_tui = load_dictionary(meta, "umls", semantic_types=["T070", "T121"])
    assert sorted(concepts_by_id(by_tui)) == ["C0009264", "C0025598"]
    with pytest.raises(BioLinkError, match="E044"):
        load_dictionary(meta, "umls", semantic_types=["DISEASES"])


def test_umls_from_mrconso_file_and_gzip(meta, tmp_path):
    d = load_dictionary(meta / "MRCONSO.RRF", "umls")  # siblings MRSTY/MRDEF still found
    assert d.types_of(concepts_by_id(d)["C0011860"]) == ("T047",)
    gz = tmp_path / "gz"
    gz.mkdir()
    with gzip.open(gz / "MRCONSO.RRF.gz", "wt", encoding="utf8") as f:
        f.write((meta / "MRCONSO.RRF").read_text(encoding="utf8"))
    assert load_dictionary(gz).n_concepts == 5  # a directory is recognised as UMLS


def test_umls_errors_name_file_and_line(meta, tmp_path):
    with pytest.raises(BioLinkError, match="E045"):
        load_dictionary(write_meta(tmp_path / "nosty", with_sty=False), "umls",
                        semantic_types=["DISO"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(BioLinkError, match="E042"):
        load_dictionary(tmp_path / "empty", "umls")
    rows = (meta / "MRCONSO.RRF").read_text(encoding="utf8").splitlines()
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "MRCONSO.RRF").write_text("\n".join(rows[:3] + [rows[3][:-1] + "|extra|"] + rows[4:]),
                                     encoding="utf8")
    with pytest.raises(BioLinkError, match=r"MRCONSO.RRF:4: .*expected 18"):
        load_dictionary(bad, "umls")
    (bad / "MRCONSO.RRF").write_text("\n".join(rows[5:] + rows[:5]), encoding="utf8")
    with pytest.raises(BioLinkError, match=r"E043.*not sorted by CUI"):
        load_dictionary(bad, "umls")
    (bad / "MRCONSO.RRF").write_text(mrconso_row("C0000001", "bad\x07name") + "\n", encoding="utf8")
    with pytest.raises(BioLinkError, match=r"MRCONSO.RRF:1: .*control character"):
        load_dictionary(bad, "umls")


def test_semantic_groups_table_is_nlms():
    table = semantic_groups()
    assert len(table) == 127
    assert len({group for group, _, _ in table.values()}) == 15
    assert table["T047"] == ("DISO", "Disorders", "Disease or Syndrome")
    assert len(expand_semantic_types(["DISO"])) == 12
    assert expand_semantic_types(["chem", "T047"]) >= {"T121", "T047"}


# OBO ------------------------------------------------------------------------

def test_obo_terms_synonyms_xrefs_obsolete(obo):
    d = load_dictionary(obo, "obo")
    by_id = concepts_by_id(d)
    assert sorted(by_id) == ["MONDO:0005015", "MONDO:0005148", "MONDO:0007739"]  # no obsolete
    c = by_id["MONDO:0005148"]
    assert d.canonical_name(c) == "type 2 diabetes mellitus"
    assert set(d.names_of(c)) == {"type 2 diabetes mellitus", "NIDDM", "type 2 diabetes"}
    # xrefs to MeSH/OMIM/UMLS in the package's convention, alt_id too; DOID is no alt id.
    assert d.ids_of(c) == ("MONDO:0005148", "D003924", "OMIM:125853", "C0011860", "MONDO:0000001")
    assert d.concept_index("D003924") == c and d.concept_index("OMIM:125853") == c
    assert d.definitions[c].startswith("A type of diabetes mellitus")
    related = load_dictionary(obo, "obo", synonym_scopes=["EXACT", "RELATED"])
    assert "adult onset diabetes" in related.names_of(concepts_by_id(related)["MONDO:0005148"])
    bare = load_dictionary(obo, "obo", xref_prefixes=[])
    assert bare.ids_of(concepts_by_id(bare)["MONDO:0005148"]) == ("MONDO:0005148", "MONDO:0000001")
    with pytest.raises(BioLinkError, match="E047"):
        load_dictionary(obo, "obo", synonym_scopes=["EXACTLY"])


def test_obo_syntax_error_names_the_line(tmp_path):
    path = write_obo(tmp_path / "bad.obo", OBO.replace("xref: OMIM:143100\n", "xref OMIM 143100\n"))
    line = OBO.splitlines().index("xref: OMIM:143100") + 1
    with pytest.raises(BioLinkError, match=rf"E046.*bad.obo:{line}:"):
        load_dictionary(path, "obo")


def test_id_conventions():
    assert normalize_xref("MESH:D003924") == "D003924"
    assert normalize_xref("MSH:D003924") == "D003924"
    assert normalize_xref("UMLS_CUI:C0011860") == "C0011860"
    assert normalize_xref("OMIM:125853") == "OMIM:125853"
    assert normalize_xref("DOID:9352") == "DOID:9352"
    assert [namespace_of(i) for i in ["D003924", "C535662", "C000623891", "C0011860",
                                      "OMIM:125853", "MONDO:0005148", "xyz"]] == \
        ["MESH", "MESH", "MESH", "UMLS", "OMIM", "MONDO", ""]


# Format detection -------------------------------------------------------------

SAMPLES = {
    "medic": TINY_MEDIC,
    "ctd": "# CTD file\n# Fields:\n# DiseaseName\tDiseaseID\tAltDiseaseIDs\tDefinition\t"
           "ParentIDs\tTreeNumbers\tParentTreeNumbers\tSynonyms\tSlimMappings\n"
           "Type 2 diabetes\tMESH:D003924\tOMIM:125853\tA disease.\t\t\t\tNIDDM\t\n",
    "tsv": "Type 2 diabetes\tD003924\nNIDDM\tD003924\tT047\n",
    "jsonl": json.dumps({"concept_id": "C0011860", "canonical_name": "Type 2 diabetes",
                         "aliases": ["NIDDM"], "types": ["T047"]}) + "\n",
    "umls": mrconso_row("C0011860", "Type 2 diabetes") + "\n",
    "obo": OBO,
}


@pytest.mark.parametrize("fmt", sorted(SAMPLES))
def test_each_format_is_recognised_from_its_content(fmt, tmp_path):
    path = tmp_path / "dictionary.txt"  # the name says nothing
    path.write_text(SAMPLES[fmt], encoding="utf8")
    assert infer_format(path) == fmt
    assert load_dictionary(path).n_concepts >= 1


@pytest.mark.parametrize("content", sorted(SAMPLES))
@pytest.mark.parametrize("named", ["medic", "biosyn", "ctd", "tsv", "jsonl", "umls", "obo"])
def test_a_named_format_the_content_contradicts_stops(content, named, tmp_path):
    if {content, named} <= {"medic", "biosyn"} or content == named:
        return
    path = tmp_path / "dictionary.txt"
    path.write_text(SAMPLES[content], encoding="utf8")
    with pytest.raises(BioLinkError, match=rf"E040.*looks like {content} .*--format {content}"):
        load_dictionary(path, named)


def test_mrconso_given_to_init_linker_is_not_misread_as_medic(meta, tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["init-linker", str(tmp_path / "m"), "--dictionary",
                                 str(meta / "MRCONSO.RRF"), "--format", "medic"])
    assert result.exit_code == 1 and "E040" in result.output and "--format umls" in result.output
    assert not (tmp_path / "m").exists()
    with pytest.raises(BioLinkError, match="E041"):
        load_dictionary(meta, "medic")
    with pytest.raises(BioLinkError, match="E048"):
        load_dictionary(meta, "umls", synonym_scopes=["EXACT"])


# Linker: kb, type filter, id preference -------------------------------------------

def link(nlp, text, label="Disease"):
    doc = nlp.make_doc(text)
    doc.ents = [Span(doc, 0, len(doc), label=label)]
    ent = nlp(doc).ents[0]
    return ent.kb_id_, [c for c, _ in ent._.kb_ents]


def test_init_linker_umls_end_to_end(meta, tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["init-linker", str(tmp_path / "umls"), "--dictionary", str(meta),
                                 "--format", "umls", "--semantic-types", "DISO,CHEM"])
    assert result.exit_code == 0, result.output
    nlp = spacy.load(tmp_path / "umls")
    linker = nlp.get_pipe("bio_linker")
    record = linker.kb.cui_to_entity["C0011860"]
    assert record.concept_id == "C0011860"
    assert record.canonical_name == "Diabetes Mellitus, Non-Insulin-Dependent"
    assert "NIDDM" in record.aliases and record.canonical_name not in record.aliases
    assert record.types == ["T047"] and record.definition == "A subclass of diabetes mellitus."
    assert linker.kb["C0011860"] == record
    assert "C0009264" not in linker.kb  # Cold Temperature (PHEN) filtered out
    with pytest.raises(KeyError):
        linker.kb["C0009264"]
    assert link(nlp, "NIDDM")[0] == "C0011860"
    # "cold": a disease and a chemical's alias; k = 1 and a filter per label.
    typed = spacy.load(tmp_path / "umls", config={"components": {"bio_linker": {
        "k": 1, "threshold": 0.0,
        "type_filter": {"Chemical": ["CHEM"], "Disease": ["T047"]}}}})
    assert link(typed, "cold", "Chemical") == ("C0025598", ["C0025598"])
    assert link(typed, "cold", "Disease") == ("C0009443", ["C0009443"])
    assert link(typed, "cold", "Other")[0] == "C0009443"  # not filtered: the exact name


def test_init_linker_obo_end_to_end(obo, tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["init-linker", str(tmp_path / "obo"), "--dictionary", str(obo),
                                 "--synonym-scopes", "EXACT,RELATED"])
    assert result.exit_code == 0, result.output
    nlp = spacy.load(tmp_path / "obo")
    kb = nlp.get_pipe("bio_linker").kb
    assert kb["D003924"].concept_id == "MONDO:0005148"  # by its MeSH xref
    assert kb["OMIM:143100"].canonical_name == "Huntington disease"
    assert "D003924" in kb["MONDO:0005148"].ids
    assert kb["MONDO:0005148"].types == []
    # A MONDO term keeps its own id by default; listing MONDO after MESH reports the xref.
    assert link(nlp, "adult onset diabetes")[0] == "MONDO:0005148"
    mesh = spacy.load(tmp_path / "obo", config={"components": {"bio_linker": {
        "id_preference": ["MESH", "MONDO"]}}})
    assert link(mesh, "adult onset diabetes")[0] == "D003924"


def test_id_preference_reports_mesh_before_omim(tmp_path):
    medic = ConceptDictionary.from_concepts([
        Concept(["OMIM:125853", "D003924"], ["Diabetes Mellitus, Type 2", "type 2 diabetes"]),
        Concept(["C567755", "OMIM:613097"], ["STHAG6"])])
    nlp = make_linker_nlp(medic)
    assert link(nlp, "type 2 diabetes")[0] == "D003924"
    assert link(nlp, "STHAG6")[0] == "C567755"
    omim = make_linker_nlp(medic, id_preference=["OMIM", "MESH"])
    assert link(omim, "type 2 diabetes")[0] == "OMIM:125853"
    assert link(omim, "STHAG6")[0] == "OMIM:613097"
    # Either id finds the concept, whose record shows the id kb_id_ shows.
    assert nlp.get_pipe("bio_linker").kb["OMIM:125853"].concept_id == "D003924"
    assert omim.get_pipe("bio_linker").kb["D003924"].concept_id == "OMIM:125853"
    with pytest.raises(Exception, match="id_preference"):  # spaCy's config validation
        make_linker_nlp(medic, id_preference="MESH")
    with pytest.raises(BioLinkError, match="E162"):  # BioLinker built directly
        _check_id_preference("MESH")


def test_type_filter_applies_before_top_k(tmp_path):
    # Many close out-of-type names rank above the one in-type concept.
    concepts = [Concept([f"C{i:07d}"], [f"heart attack {i}"], type="T033") for i in range(30)]
    concepts.append(Concept(["C0027051"], ["myocardial infarction heart attack"], type="T047"))
    d = ConceptDictionary.from_concepts(concepts)
    # threshold 0: the best in-type concept may be a weak match; the filter is tested here.
    nlp = make_linker_nlp(d, k=1, threshold=0.0, type_filter={"Disease": ["T047"]})
    assert link(nlp, "heart attack", "Disease") == ("C0027051", ["C0027051"])
    assert link(nlp, "heart attack", "Finding")[0] != "C0027051"
    with pytest.raises(Exception, match="type_filter"):
        make_linker_nlp(d, type_filter={"Disease": "T047"})
    with pytest.raises(BioLinkError, match="E161"):
        _check_type_filter({"Disease": "T047"})
    with pytest.warns(UserWarning, match="W020"):
        none = make_linker_nlp(d, type_filter={"Disease": ["T999"]})
        assert link(none, "heart attack", "Disease")[0] == "NIL"


def test_evaluate_filters_each_mention_type_as_linking_does(tmp_path):
    from spacy_biolink.evaluation import evaluate_gold_mentions

    concepts = [Concept([f"C{i:07d}"], [f"heart attack {i}"], type="T033") for i in range(30)]
    concepts.append(Concept(["C0027051"], ["myocardial infarction heart attack"], type="T047"))
    nlp = make_linker_nlp(ConceptDictionary.from_concepts(concepts), k=1, threshold=0.0,
                          type_filter={"Disease": ["T047"]})
    corpus = tmp_path / "test.txt"
    corpus.write_text("7|t|A heart attack. A heart attack.\n"
                      "7\t2\t14\theart attack\tDisease\tC0027051\n"
                      "7\t18\t30\theart attack\tFinding\tC0027051\n\n", encoding="utf8")
    result = evaluate_gold_mentions(nlp, corpus)
    # The Disease mention searches T047 concepts only; the Finding one every concept.
    assert result["by_type"]["Disease"]["lenient acc@1"] == 1.0
    assert result["by_type"]["Finding"]["lenient acc@1"] == 0.0


def test_saved_pipeline_without_the_new_keys_still_loads(tmp_path):
    d = ConceptDictionary.from_concepts([Concept(["OMIM:125853", "D003924"], ["type 2 diabetes"])])
    nlp = make_linker_nlp(d)
    nlp.to_disk(tmp_path / "model")
    cfg = (tmp_path / "model" / "config.cfg").read_text(encoding="utf8")
    lines = [line for line in cfg.splitlines()
             if not line.startswith(("id_preference", "[components.bio_linker.type_filter]"))]
    (tmp_path / "model" / "config.cfg").write_text("\n".join(lines) + "\n", encoding="utf8")
    assert "id_preference" not in (tmp_path / "model" / "config.cfg").read_text(encoding="utf8")
    loaded = spacy.load(tmp_path / "model")
    assert link(loaded, "type 2 diabetes")[0] == "D003924"


def test_kb_needs_a_dictionary_and_survives_serialization(tmp_path):
    nlp = spacy.blank("en")
    linker = nlp.add_pipe("bio_linker")
    with pytest.raises(BioLinkError, match="E163"):
        linker.kb
    medic = tmp_path / "medic.txt"
    medic.write_text(TINY_MEDIC, encoding="utf8")
    with pytest.warns(UserWarning, match="W001"):
        linker.initialize(dictionary=load_dictionary(medic))
    loaded = spacy.blank("en")
    loaded.add_pipe("bio_linker").from_bytes(linker.to_bytes())
    kb = loaded.get_pipe("bio_linker").kb
    assert kb["OMIM:613097"].canonical_name == "Tooth Agenesis, Selective, 6"
    assert kb["D006527"].canonical_name == "Hirschsprung Disease"
    assert len(kb) == 6 and set(kb) >= {"D003924", "C567755"}
    with pytest.raises(ConceptNotFound, match="E160"):
        kb["D000000"]
    assert kb.get("D000000") is None


# Property tests: nothing a file holds makes a reader raise anything but BioLinkError,
# nor gives a concept an id or name with a control character or a BOM.

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from spacy_biolink.kb.readers.umls import BAD_CHARS  # noqa: E402

PROPERTY_SETTINGS = settings(max_examples=60, deadline=None,
                             suppress_health_check=[HealthCheck.function_scoped_fixture])


def _read_all(path, fmt):
    try:
        concepts = list(load_dictionary(path, fmt).iter_concepts())
    except BioLinkError:
        return []
    for concept in concepts:
        for text in concept.ids + concept.names:
            assert not BAD_CHARS.search(text), (concept, text)
    return concepts


# Mostly ordinary text, now and then a control character, a BOM or a non-ASCII letter.
_field = st.one_of(st.text(alphabet=st.sampled_from("ab cXYZ-é1\u00ad"), max_size=10),
                   st.text(alphabet=st.sampled_from("ab\x07\x00\t\ufeff"), max_size=4))
_cui = st.sampled_from(["C0000001", "C0000002", "C0000003", "\ufeffC0000004", "C\x0000005", ""])


@st.composite
def _rrf_lines(draw):
    rows = []
    for _ in range(draw(st.integers(0, 6))):
        cols = [draw(_cui), draw(st.sampled_from(["ENG", "GER", ""]))] + \
            [draw(_field) for _ in range(16)]
        cols[16] = draw(st.sampled_from(["N", "O", "E", ""]))
        rows.append("|".join(cols) + draw(st.sampled_from(["|"] * 6 + ["", "||"])))
    if draw(st.booleans()):
        rows.sort()  # UMLS order, so that most examples get past the order check
    return "\n".join(rows)


@PROPERTY_SETTINGS
@given(data=st.one_of(st.binary(max_size=400), _rrf_lines().map(lambda s: s.encode("utf8"))))
def test_umls_reader_on_arbitrary_content(tmp_path, data):
    directory = tmp_path / "META"
    directory.mkdir(exist_ok=True)
    (directory / "MRCONSO.RRF").write_bytes(data)
    _read_all(directory, "umls")


_obo_text = st.one_of(st.text(alphabet=st.sampled_from("ab cXYZ-é1\x07\x00\t\ufeff\"\\!{"),
                                      min_size=1, max_size=10),
                      st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=10))


@st.composite
def _obo_documents(draw):
    parts = [draw(st.sampled_from(["format-version: 1.2\n", "\ufeffformat-version: 1.2\n", ""]))]
    for i in range(draw(st.integers(0, 4))):
        name = draw(_obo_text).replace("\n", " ")
        parts.append(f"\n[Term]\nid: {draw(st.sampled_from(['X:1', 'X:2', 'Y', 'X:' + str(i)]))}\n"
                     f"name: {name}\n"
                     f"synonym: \"{draw(_obo_text)}\" {draw(st.sampled_from(['EXACT', 'RELATED', 'BAD']))} []\n"
                     f"xref: {draw(st.sampled_from(['MESH:D000001', 'UMLS:C0000001', 'OMIM:1', 'bad']))}\n"
                     + draw(st.sampled_from(["", "is_obsolete: true\n", "def: \"x\" []\n"])))
    return "".join(parts).encode("utf8")


@PROPERTY_SETTINGS
@given(data=st.one_of(st.binary(max_size=400), _obo_documents()))
def test_obo_reader_on_arbitrary_content(tmp_path, data):
    path = tmp_path / "x.obo"
    path.write_bytes(data)
    _read_all(path, "obo")


def test_link_jsonl_and_displacy_show_canonical_names(tmp_path, monkeypatch):
    from spacy_biolink.kb.lookup import ConceptLookup, ConceptNotFound
    from spacy_biolink.runners.local import link_documents, read_input_documents
    from spacy_biolink.runners.visualize import render_linked

    d = ConceptDictionary.from_concepts([
        Concept(["OMIM:125853", "D003924"], ["Diabetes Mellitus, Type 2", "type 2 diabetes"]),
        Concept(["D001943"], ["Breast Neoplasms", "breast cancer"])])
    nlp = make_linker_nlp(d)
    kb = nlp.get_pipe("bio_linker").kb
    for concept_id in ("D003924", "OMIM:125853", "D001943"):
        assert kb.canonical_name(concept_id) == kb[concept_id].canonical_name
    with pytest.raises(ConceptNotFound, match="E160"):
        kb.canonical_name("D000000")
    # Records read only each id's canonical name, not its aliases (a MeSH chemical can
    # have hundreds): benchmarks/exploration/record_names.py.
    monkeypatch.setattr(ConceptLookup, "record", lambda self, concept: pytest.fail(
        "link and visualize built a whole concept record for a name"))
    (tmp_path / "in.jsonl").write_text(json.dumps(
        {"text": "type 2 diabetes", "entities": [[0, 15, "Disease"]]}) + "\n", encoding="utf8")
    record = next(link_documents(nlp, read_input_documents(tmp_path / "in.jsonl")))
    entity = record["entities"][0]
    assert entity["kb_id"] == "D003924"
    assert entity["kb_names"]["D003924"] == "Diabetes Mellitus, Type 2"
    assert set(entity["kb_names"]) == {c for c, _ in entity["kb_ents"]}
    doc = nlp.make_doc("type 2 diabetes")
    doc.ents = [Span(doc, 0, 3, label="Disease")]
    html = render_linked(nlp(doc), page=False, kb=nlp.get_pipe("bio_linker").kb)
    assert ">D003924</a>" in html and "Diabetes Mellitus, Type 2</span>" in html
    assert "Diabetes Mellitus, Type 2" not in render_linked(nlp(doc), page=False)


def test_undecodable_bytes_and_unknown_filters_are_named(meta, tmp_path):
    from spacy_biolink.linker.pipeline import init_linker

    bad = tmp_path / "latin1"
    bad.mkdir()
    rows = (meta / "MRCONSO.RRF").read_bytes().splitlines()
    rows[2] = rows[2].replace(b"|ENG|", b"|ENG\xe9|")  # Latin-1, not UTF-8
    (bad / "MRCONSO.RRF").write_bytes(b"\n".join(rows))
    with pytest.raises(BioLinkError, match=r"E013.*MRCONSO.RRF:3"):  # the shared opener (files.py)
        load_dictionary(bad, "umls")
    obo = tmp_path / "latin1.obo"
    obo.write_bytes(OBO.encode("utf8").replace(b"Huntington disease", b"Huntington d\xe9sease"))
    line = OBO.splitlines().index("name: Huntington disease") + 1
    with pytest.raises(BioLinkError, match=rf"E013.*latin1.obo:{line}:"):
        load_dictionary(obo, "obo")
    with pytest.raises(BioLinkError, match="E050"):
        init_linker(None, meta, format="umls", dictionary_filters={"language": ["ENG"]})


def test_umls_source_codes_as_alternative_ids(meta, tmp_path):
    d = load_dictionary(meta, "umls", code_sources=["MSH", "SNOMEDCT_US"])
    c = concepts_by_id(d)["C0011860"]
    assert d.ids_of(c) == ("C0011860", "D003924", "SNOMEDCT_US:44054006")
    assert d.concept_index("D003924") == c
    plain = load_dictionary(meta, "umls")
    assert plain.ids_of(concepts_by_id(plain)["C0011860"]) == ("C0011860",)
    runner = CliRunner()
    with pytest.warns(UserWarning, match="W001"):  # "cold": two concepts
        result = runner.invoke(app, ["init-linker", str(tmp_path / "m"), "--dictionary",
                                     str(meta), "--code-sources", "MSH"])
    assert result.exit_code == 0, result.output
    kb = spacy.load(tmp_path / "m").get_pipe("bio_linker").kb
    assert kb["D003924"].concept_id == "C0011860"  # a CUI stays the reported id
