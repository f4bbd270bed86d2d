"""The cell-line linker: Cellosaurus's cellosaurus.txt reader, and a linker built from
configs/linker_cellline.cfg over it or over a corpus's names."""
from pathlib import Path
import warnings

import pytest
import spacy

from spacy_biolink.corpora.pubtator import read_pubtator
from spacy_biolink.errors import BioLinkError
from spacy_biolink.evaluation.gold_mentions import evaluate_gold_mentions
from spacy_biolink.kb.readers.cellosaurus import read_cellosaurus
from spacy_biolink.kb.readers.dictionaries import load_dictionary
from spacy_biolink.kb.readers.sniff import sniff
from spacy_biolink.linker.pipeline import init_linker

CONFIGS = Path(__file__).resolve().parents[1] / "configs"

# The shape of cellosaurus.txt: a preamble, then records ended by `//`.
CELLOSAURUS = """ --------------------------------------------------------------------------
        Title:        Cellosaurus: a knowledge resource on cell lines
        Version:      tiny test fixture
 --------------------------------------------------------------------------
___________________________________________________________________________
ID   HeLa
AC   CVCL_0030
AS   CVCL_1922; CVCL_2260
SY   HELA; Hela; He La; Henrietta Lacks cells
DR   ATCC; CCL-2
OX   NCBI_TaxID=9606; ! Homo sapiens (Human)
CA   Cancer cell line
//
ID   HeLa S3
AC   CVCL_0058
SY   HeLa-S3; HeLa.S3; S3
CA   Cancer cell line
//
ID   MCF-7
AC   CVCL_0031
SY   MCF7; MCF 7; Michigan Cancer Foundation-7
CA   Cancer cell line
//
ID   HEK293
AC   CVCL_0045
SY   HEK-293; 293; Human Embryonic Kidney 293
CA   Transformed cell line
//
"""

TEST = """1|t|HeLa, Hela S3 and MCF7 cells.
1|a|MCF-7 and HEK 293 cells.
1\t0\t4\tHeLa\tCellLine\tCVCL_0030
1\t6\t13\tHela S3\tCellLine\tCVCL_0058
1\t18\t22\tMCF7\tCellLine\tCVCL_0031
1\t30\t35\tMCF-7\tCellLine\tCVCL_0031
1\t40\t47\tHEK 293\tCellLine\tCVCL_0045

"""


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf8")
    return path


def test_cellosaurus_records_become_concepts(tmp_path):
    concepts = list(read_cellosaurus(write(tmp_path / "cellosaurus.txt", CELLOSAURUS)))
    assert [c.ids[0] for c in concepts] == ["CVCL_0030", "CVCL_0058", "CVCL_0031", "CVCL_0045"]
    hela = concepts[0]
    assert hela.ids == ("CVCL_0030", "CVCL_1922", "CVCL_2260")
    assert hela.names == ("HeLa", "HELA", "Hela", "He La", "Henrietta Lacks cells")
    assert hela.type == "Cancer cell line"


def test_cellosaurus_is_sniffed_past_its_preamble(tmp_path):
    path = write(tmp_path / "cellosaurus.txt", CELLOSAURUS)
    assert sniff(path)[0] == "cellosaurus"
    dictionary = load_dictionary(path)
    assert dictionary.concept_index("CVCL_1922") == dictionary.concept_index("CVCL_0030")


def test_cellosaurus_record_without_accession_names_its_lines(tmp_path):
    path = write(tmp_path / "cellosaurus.txt", "ID   HeLa\nSY   Hela\n//\n"
                 "ID   MCF-7\nAC   CVCL_0031\n//\n")
    with pytest.raises(BioLinkError, match=r"E321.*cellosaurus.txt:2.*an AC line.*line 1"):
        list(read_cellosaurus(path))
    with pytest.warns(UserWarning, match="W953"):
        assert [c.ids for c in read_cellosaurus(path, on_bad_line="skip")] == [("CVCL_0031",)]


def test_cellosaurus_malformed_line_inside_a_record(tmp_path):
    path = write(tmp_path / "cellosaurus.txt", "ID   HeLa\nAC   CVCL_0030\nnot a field\n//\n")
    with pytest.raises(BioLinkError, match=r"cellosaurus.txt:3"):
        list(read_cellosaurus(path))


def test_file_without_records_is_an_error(tmp_path):
    path = write(tmp_path / "cellosaurus.txt", " Cellosaurus preamble only\n")
    with pytest.raises(BioLinkError, match="E322"):
        list(read_cellosaurus(path))


def test_cell_line_linker_from_cellosaurus(tmp_path):
    out = tmp_path / "linker"
    init_linker(out, write(tmp_path / "cellosaurus.txt", CELLOSAURUS),
                config_path=CONFIGS / "linker_cellline.cfg")
    nlp = spacy.load(out)
    assert nlp.get_pipe("bio_linker").cfg["labels"] == ["CellLine"]
    errors = []
    result = evaluate_gold_mentions(nlp, write(tmp_path / "test.PubTator", TEST),
                                    types={"CellLine"}, errors=errors)
    assert result["n_evaluated"] == 5
    assert result["acc@1"] == 1.0, errors


def test_cell_line_linker_from_corpus_names(tmp_path):
    # The names of a corpus (BioID train) as a `name<TAB>id` file.
    names = write(tmp_path / "cell_lines.tsv", "HeLa\tCVCL_0030\nMCF-7\tCVCL_0031\n"
                  "HeLa S3\tCVCL_0058\n293\tCVCL_0045\n")
    out = tmp_path / "linker"
    init_linker(out, names, config_path=CONFIGS / "linker_cellline.cfg")
    linked = evaluate_gold_mentions(spacy.load(out), write(tmp_path / "test.PubTator", TEST),
                                    types={"CellLine"})
    assert linked["acc@1"] >= 0.8  # HEK 293 has no such name here


def test_bioid_ids_are_cellosaurus_accessions(shared_data):
    path = shared_data / "pubtator6" / "BioID_Train_revision.PubTator.gz"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # W002: one caption's offsets are off by design
        ids = {i for doc in read_pubtator(path, types={"CellLine"}) for m in doc.mentions
               for i in m.raw_ids.split("|")}
    assert ids and all(i.startswith("CVCL_") for i in ids)
