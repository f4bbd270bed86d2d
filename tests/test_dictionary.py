import gzip
import json

import pytest

from spacy_biolink import ConceptDictionary, load_dictionary
from spacy_biolink.kb.dictionary import Concept
from spacy_biolink.errors import BioLinkError
from spacy_biolink.kb.ids import normalize_medic_id, split_gold_ids
from spacy_biolink.kb.readers import infer_format


def test_medic_line_with_two_ids_is_one_concept(tiny_dictionary):
    c = tiny_dictionary.concept_index("C567755")
    assert c is not None
    assert tiny_dictionary.concept_index("OMIM:613097") == c
    assert tiny_dictionary.ids_of(c) == ("C567755", "OMIM:613097")
    assert tiny_dictionary.primary_id(c) == "C567755"
    assert sorted(tiny_dictionary.names_of(c)) == ["STHAG6", "Tooth Agenesis, Selective, 6"]
    assert tiny_dictionary.n_concepts == 6


def test_id_normalization():
    assert normalize_medic_id(" MESH:C535662 ") == "C535662"
    assert normalize_medic_id("613097") == "OMIM:613097"
    assert normalize_medic_id("OMIM:106210 ") == "OMIM:106210"
    assert normalize_medic_id("D008107") == "D008107"
    assert split_gold_ids("D003110|D009369") == ["D003110", "D009369"]
    assert split_gold_ids("D020279+D035583") == ["D020279", "D035583"]
    assert split_gold_ids("-1") == []


def test_shared_name_maps_to_both_concepts(tiny_dictionary):
    shared = dict(tiny_dictionary.shared_names())
    assert sorted(shared["HD"]) == ["D006527", "D006816"]


def test_readers_agree_across_formats(tmp_path):
    (tmp_path / "d.tsv").write_text("Type 2 diabetes\tD003924\nNIDDM\tD003924\tT047\n", encoding="utf8")
    (tmp_path / "d.biosyn.txt").write_text("D003924||type 2 diabetes\nD003924||niddm\n", encoding="utf8")
    (tmp_path / "d.jsonl").write_text(json.dumps({
        "concept_id": "D003924", "canonical_name": "Type 2 diabetes", "aliases": ["NIDDM"],
        "types": ["T047"], "definition": "A metabolic disease."}) + "\n", encoding="utf8")
    (tmp_path / "CTD_diseases.tsv").write_text(
        "# Comma-separated CTD file\n# Fields:\n# DiseaseName\tDiseaseID\tAltDiseaseIDs\tDefinition\t"
        "ParentIDs\tTreeNumbers\tParentTreeNumbers\tSynonyms\tSlimMappings\n"
        "Type 2 diabetes\tMESH:D003924\tOMIM:125853\tA metabolic disease.\t\t\t\tNIDDM\t\n",
        encoding="utf8")
    expected = {"tsv": "tsv", "biosyn.txt": "medic", "jsonl": "jsonl"}
    for suffix, fmt in expected.items():
        assert infer_format(tmp_path / f"d.{suffix}") == fmt
    assert infer_format(tmp_path / "CTD_diseases.tsv") == "ctd"
    for name in ["d.tsv", "d.biosyn.txt", "d.jsonl", "CTD_diseases.tsv"]:
        d = load_dictionary(tmp_path / name)
        assert d.n_concepts == 1, name
        assert d.primary_id(0) == "D003924"
        assert {n.lower() for n in d.names_of(0)} == {"type 2 diabetes", "niddm"}
    ctd = load_dictionary(tmp_path / "CTD_diseases.tsv")
    assert ctd.ids_of(0) == ("D003924", "OMIM:125853")
    assert ctd.definitions[0] == "A metabolic disease."
    assert load_dictionary(tmp_path / "d.jsonl").types[0] == "T047"


def test_gzipped_dictionary(tmp_path):
    path = tmp_path / "medic.txt.gz"
    with gzip.open(path, "wt", encoding="utf8") as f:
        f.write("D001||Alpha|Beta\n")
    assert load_dictionary(path).n_names == 2


@pytest.mark.parametrize("fmt,content,line,reason", [
    ("medic", "D1||Alpha\nD2 Beta\n", 2, "no '||'"),
    ("medic", "D1||Alpha\n||Beta\n", 2, "no concept id"),
    ("tsv", "Alpha\tD1\nBeta\n", 2, "expected name<TAB>id"),
    ("jsonl", '{"concept_id": "C1", "canonical_name": "a"}\n{broken\n', 2, "invalid JSON"),
])
def test_malformed_line_names_file_and_line(tmp_path, fmt, content, line, reason):
    path = tmp_path / f"dict.{fmt}"
    path.write_text(content, encoding="utf8")
    with pytest.raises(BioLinkError, match=reason) as err:
        load_dictionary(path, format=fmt)
    assert f"{path}:{line}:" in str(err.value)


def test_empty_dictionary_is_an_error(tmp_path):
    path = tmp_path / "empty.tsv"
    path.write_text("\n\n", encoding="utf8")
    with pytest.raises(BioLinkError, match="E00[35]"):
        load_dictionary(path, format="tsv")
    with pytest.raises(BioLinkError, match="E005"):
        ConceptDictionary.from_concepts([Concept(["D1"], ["  "])])


def test_missing_file_and_unknown_format(tmp_path):
    with pytest.raises(BioLinkError, match="E002"):
        load_dictionary(tmp_path / "nope.tsv")
    path = tmp_path / "d.tsv"
    path.write_text("a\tD1\n", encoding="utf8")
    with pytest.raises(BioLinkError, match="E004"):
        load_dictionary(path, format="owl")


def test_repeated_ids_merge_into_one_concept():
    d = ConceptDictionary.from_concepts([Concept(["D1"], ["alpha"]), Concept(["D2"], ["beta"]),
                                         Concept(["D1", "OMIM:1"], ["alpha", "alfa"])])
    assert d.n_concepts == 2
    assert d.ids_of(0) == ("D1", "OMIM:1")
    assert sorted(d.names_of(0)) == ["alfa", "alpha"]


def test_with_names_adds_synonyms_and_reports_unknown_ids(tiny_dictionary):
    bigger, unknown = tiny_dictionary.with_names([("T2DM", "D003924"), ("sthag 6", "OMIM:613097"),
                                                  ("mystery", "D999999")])
    assert unknown == [("mystery", "D999999")]
    assert "T2DM" in bigger.names_of(bigger.concept_index("D003924"))
    assert "sthag 6" in bigger.names_of(bigger.concept_index("C567755"))
    assert bigger.n_names == tiny_dictionary.n_names + 2


def test_disk_and_bytes_round_trip(tiny_dictionary, tmp_path):
    tiny_dictionary.to_disk(tmp_path / "d")
    for loaded in (ConceptDictionary.from_disk(tmp_path / "d"),
                   ConceptDictionary.from_bytes(tiny_dictionary.to_bytes())):
        assert list(loaded.names) == list(tiny_dictionary.names)
        assert list(loaded.concept_ids) == list(tiny_dictionary.concept_ids)
        assert (loaded.name_concepts == tiny_dictionary.name_concepts).all()
        assert loaded.shared_names() == tiny_dictionary.shared_names()


def test_truncated_dictionary_dir_is_a_clear_error(tiny_dictionary, tmp_path):
    tiny_dictionary.to_disk(tmp_path / "d")
    (tmp_path / "d" / "names.offsets.npy").unlink()
    with pytest.raises(BioLinkError, match="E104"):
        ConceptDictionary.from_disk(tmp_path / "d")
    tiny_dictionary.to_disk(tmp_path / "e")
    blob = tmp_path / "e" / "names.blob.npy"
    blob.write_bytes(blob.read_bytes()[:-10])
    with pytest.raises(BioLinkError, match="E104"):
        ConceptDictionary.from_disk(tmp_path / "e")


def test_medic_2012_counts(shared_data):
    d = load_dictionary(shared_data / "medic" / "medic_06Jul2012.txt.gz")
    assert d.n_concepts == 11915
    assert d.concept_index("OMIM:613097") == d.concept_index("C567755")


def _reference_lookups(d):
    """concept_index and names_of as dicts, the way they were built before the arrays."""
    ids, names = {}, {}
    for c, joined in enumerate(d.concept_ids):
        for i in joined.split("|"):
            ids.setdefault(i, c)
    for n in range(d.n_names):
        for c in d.concepts_of_name(n).tolist():
            names.setdefault(c, []).append(d.names[n])
    return ids, names


def test_array_lookups_agree_with_dicts(tmp_path, monkeypatch):
    import spacy_biolink.kb.dictionary as dictionary_module

    # Concepts sharing ids and names, merged lines, a concept whose names are all taken.
    concepts = [Concept(["D1", "OMIM:1"], ["alpha", "beta"]), Concept(["D2"], ["beta", "gamma"]),
                Concept(["D3", "OMIM:1"], ["delta"]), Concept(["D2", "OMIM:2"], ["epsilon"]),
                Concept(["D4"], ["alpha"])]
    concepts += [Concept([f"X{i}"], [f"name {i}", f"alias {i % 7}"]) for i in range(40)]
    d = ConceptDictionary.from_concepts(concepts)
    ids, names = _reference_lookups(d)
    for i, c in ids.items():
        assert d.concept_index(i) == c
        assert d.concept_index(f"  {i} ") == c
    assert d.concept_index("D999") is None and d.concept_index("") is None
    for c in range(d.n_concepts):
        assert d.names_of(c) == names.get(c, [])
        assert d.primary_id(c) == d.ids_of(c)[0]
    # Iteration slices the blob in chunks; a chunk edge must not cut a name.
    monkeypatch.setattr(dictionary_module, "ITER_CHUNK", 3)
    assert list(d.names) == [d.names[n] for n in range(d.n_names)]


def test_concept_index_survives_hash_collisions(monkeypatch, tiny_dictionary):
    # Every id hashed to one value: the lookup must still tell them apart by the ids.
    import builtins
    import spacy_biolink.kb.dictionary as dictionary_module

    monkeypatch.setattr(dictionary_module, "hash", lambda _: 7, raising=False)
    d = ConceptDictionary.from_state(*tiny_dictionary.to_state())
    ids, _ = _reference_lookups(d)
    for i, c in ids.items():
        assert d.concept_index(i) == c
    assert d.concept_index("nope") is None
    assert builtins.hash("x") == hash("x")


def test_from_disk_memory_maps_every_array(tiny_dictionary, tmp_path):
    import numpy

    tiny_dictionary.to_disk(tmp_path / "d")
    loaded = ConceptDictionary.from_disk(tmp_path / "d")
    meta, arrays = loaded.to_state()
    assert arrays and all(isinstance(a, numpy.memmap) for a in arrays.values())
    assert all(not a.flags.writeable for a in arrays.values())
    # Loaded, it answers as the original.
    assert [loaded.names_of(c) for c in range(loaded.n_concepts)] == \
        [tiny_dictionary.names_of(c) for c in range(tiny_dictionary.n_concepts)]


@pytest.mark.parametrize("line", ["flu\tD00\t7251\tT047", "flu\tD007251\t\tT047",
                                  "flu\tD007251|D0\t03924\tT047"])
def test_tsv_line_with_a_tab_inside_a_field_is_refused(tmp_path, line):
    # Issue 59: the pieces of an id split by a tab were read as the type and ignored.
    path = tmp_path / "names.tsv"
    path.write_text("cold\tD003139\tT047\n" + line + "\n", encoding="utf8")
    with pytest.raises(BioLinkError, match=r"E006\] .*names\.tsv:2: .*4 tab-separated columns"):
        load_dictionary(path, "tsv")
    with pytest.warns(UserWarning, match=r"W953.*line 2: malformed tsv dictionary line: 4 "
                                         r"tab-separated columns"):
        dictionary = load_dictionary(path, "tsv", on_bad_line="skip")
    assert dictionary.n_concepts == 1
