"""MeSH readers (mesh-tsv, mesh-ascii): both layouts, gzip, directories, branch filtering,
supplementary records taking their descriptors' branches, errors naming file:line, the
CLI and a linker's type_filter over branches; and the chemical linker's dev figure."""
import gzip
import shutil
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from spacy_biolink import load_dictionary
from spacy_biolink.cli import app
from spacy_biolink.errors import BioLinkError
from spacy_biolink.kb.readers import infer_format
from spacy_biolink.kb.readers.mesh import branch_types, check_branches

from .conftest import make_linker_nlp

DATA = Path(__file__).parent / "data" / "mesh"
ASCII = DATA / "ascii"  # d2024.bin plain, c2024.bin.gz gzipped
TSV = DATA / "tsv"  # descriptors gzipped, supplementary plain

# What both layouts of the test files hold: id -> (names, types).
EXPECTED = {
    "D000001": (["Calcimycin", "A-23187", "A23187", "Antibiotic A23187"], "D|D03|D04"),
    "D003920": (["Diabetes Mellitus", "Diabetes"], "C|C18|C19"),
    "D003866": (["Depressive Disorder", "Depression, Endogenous", "Melancholia"], "F|F03"),
    "D007328": (["Insulin", "Novolin"], "D|D06|D12"),
    "D005260": (["Female", "Females"], ""),
    "C000006": (["insulin, neutral", "neutral insulin"], "D|D06|D12"),
    "C000100": (["calcimycin diabetes conjugate", "conjugate 7"], "D|D03|D04|C|C18|C19"),
    "C000200": (["orphan compound"], ""),
}
LAYOUTS = [("mesh-ascii", ASCII, "d2024.bin", "c2024.bin.gz"),
           ("mesh-tsv", TSV, "mesh_descriptors.tsv.gz", "mesh_supplementary.tsv")]


def read(path, fmt, **filters):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_dictionary(path, fmt, **filters)


def as_dict(dictionary):
    return {dictionary.primary_id(c): (list(dictionary.names_of(c)), dictionary.types[c])
            for c in range(dictionary.n_concepts)}


@pytest.mark.parametrize("fmt,folder,desc,supp", LAYOUTS)
def test_both_layouts_read_the_same_concepts(fmt, folder, desc, supp):
    got = as_dict(read(folder, fmt))
    assert set(got) == set(EXPECTED)
    for ui, (names, types) in EXPECTED.items():
        assert sorted(got[ui][0]) == sorted(names), ui
        assert set(got[ui][1].split("|")) - {""} == set(types.split("|")) - {""}, ui
    # The same from the two files named apart, in either order, and inferred.
    for first, second in ((desc, supp), (supp, desc)):
        named = read(folder / first, None, mesh_supplementary=[str(folder / second)])
        assert as_dict(named).keys() == got.keys()
    assert infer_format(folder) == fmt
    assert infer_format(folder / desc) == infer_format(folder / supp) == fmt


@pytest.mark.parametrize("fmt,folder,desc,supp", LAYOUTS)
def test_branch_filter_keeps_descriptors_and_their_supplementary_records(fmt, folder, desc,
                                                                         supp):
    chemicals = as_dict(read(folder, fmt, mesh_branches=["D"]))
    assert set(chemicals) == {"D000001", "D007328", "C000006", "C000100"}
    diseases = as_dict(read(folder, fmt, mesh_branches=["C", "F03"]))
    assert set(diseases) == {"D003920", "D003866", "C000100"}
    # Deeper tree numbers match on dot boundaries.
    assert set(as_dict(read(folder, fmt, mesh_branches=["C18.452"]))) == {"D003920", "C000100"}
    assert set(as_dict(read(folder, fmt, mesh_branches=["C18.452.394.750"]))) == {
        "D003920", "C000100"}
    assert set(as_dict(read(folder, fmt, mesh_branches=["C18.452.394"]))) == {
        "D003920", "C000100"}
    with pytest.raises(BioLinkError, match="E005"):  # nothing under that branch
        read(folder, fmt, mesh_branches=["C18.452.395"])
    assert set(as_dict(read(folder, fmt, mesh_branches=["d06"]))) == {"D007328", "C000006"}


def test_unresolved_mapped_headings_are_counted_and_keep_no_branch():
    for fmt, folder in (("mesh-ascii", ASCII), ("mesh-tsv", TSV)):
        with pytest.warns(UserWarning, match=r"W954.*1 mapped heading.*C000200"):
            load_dictionary(folder, fmt)


def test_supplementary_alone_reads_without_types_but_refuses_a_branch_filter():
    got = read(TSV / "mesh_supplementary.tsv", "mesh-tsv")
    assert {got.primary_id(c) for c in range(got.n_concepts)} == {"C000006", "C000100",
                                                                  "C000200"}
    assert got.types is None  # no concept has a type
    with pytest.raises(BioLinkError, match="E054"):
        read(ASCII / "c2024.bin.gz", "mesh-ascii", mesh_branches=["D"])


def test_bad_branches_and_formats_are_refused(tmp_path):
    assert check_branches("d, C04 ,F03.600") == ("D", "C04", "F03.600")
    assert branch_types(["C04.588.274", "F03.600", "C04.1"]) == ["C", "C04", "F", "F03"]
    for bad in (["Chemicals"], ["C4"], ["D03."], ["DISO"], ["C18.45"]):
        with pytest.raises(BioLinkError, match="E052"):
            read(TSV, "mesh-tsv", mesh_branches=bad)
    with pytest.raises(BioLinkError, match="E048"):  # a MeSH filter on another format
        medic = tmp_path / "medic.txt"
        medic.write_text("D000001||Calcimycin\n", encoding="utf8")
        load_dictionary(medic, "medic", mesh_branches=["D"])
    with pytest.raises(BioLinkError, match="E040"):  # MeSH named, MEDIC content
        load_dictionary(medic, "mesh-tsv")
    empty = tmp_path / "empty_dir"
    empty.mkdir()
    (empty / "notes.txt").write_text("nothing here\n", encoding="utf8")
    with pytest.raises(BioLinkError, match="E053"):
        load_dictionary(empty, "mesh-ascii")
    # NLM's q2024.bin (subheadings) beside the d and c files is left out; alone, refused.
    qualifiers = "*NEWRECORD\nRECTYPE = Q\nSH = ADVERSE EFFECTS\nQA = AE\nUI = Q000009\n"
    folder = tmp_path / "nlm"
    folder.mkdir()
    for name in ("d2024.bin", "c2024.bin.gz"):
        shutil.copy(ASCII / name, folder)
    _write(folder / "q2024.bin", qualifiers)
    assert as_dict(read(folder, "mesh-ascii")).keys() == EXPECTED.keys()
    with pytest.raises(BioLinkError, match="E053"):
        read(folder / "q2024.bin", "mesh-ascii")


def _write(path: Path, text: str, gz: bool = False) -> Path:
    if gz:
        with gzip.open(path, "wt", encoding="utf8") as fileh:
            fileh.write(text)
    else:
        path.write_text(text, encoding="utf8")
    return path


@pytest.mark.parametrize("gz", [False, True])
def test_malformed_ascii_records_name_file_and_line(tmp_path, gz):
    head = (ASCII / "d2024.bin").read_text(encoding="utf8")
    n_lines = head.count("\n")
    cases = [
        ("*NEWRECORD\nMH = Aspirin\nthis is not a field\nUI = D001241\n", n_lines + 3,
         "expected `FIELD = value`"),
        ("*NEWRECORD\nMH = Aspirin\nMN = D02.xyz\nUI = D001241\n", n_lines + 3,
         "not a tree number"),
        ("*NEWRECORD\nMH = Aspirin\nMN = D02.065\n", n_lines + 1, "one non-empty `UI =`"),
        ("*NEWRECORD\nMH = Aspirin\nUI = C001241\n", n_lines + 3, "not a MeSH descriptor"),
    ]
    for i, (record, line, reason) in enumerate(cases):
        path = _write(tmp_path / (f"d{i}.bin" + (".gz" if gz else "")), head + record, gz)
        with pytest.raises(BioLinkError, match="E001") as err:
            read(path, "mesh-ascii")
        assert f"{path}:{line}: malformed mesh-ascii" in str(err.value)
        assert reason in str(err.value)
        # Skipping leaves out the broken record and keeps the others.
        with pytest.warns(UserWarning, match="W953"):
            skipped = load_dictionary(path, "mesh-ascii", on_bad_line="skip")
        assert skipped.n_concepts == 5
    before = _write(tmp_path / "before.bin", "MH = Aspirin\n" + head)
    with pytest.raises(BioLinkError, match=f"{before}:1: .*before the first"):
        read(before, "mesh-ascii")


def test_malformed_tsv_lines_name_file_and_line(tmp_path):
    good = gzip.open(TSV / "mesh_descriptors.tsv.gz", "rt", encoding="utf8").read()
    for text, reason in (("D001241\tAspirin\n", "expected 4 tab-separated columns"),
                         ("D001241\tAspirin\t\tD02.x\n", "not a tree number"),
                         ("C001241\tAspirin\t\tD02.065\n", "not a MeSH descriptor"),
                         ("D001241\t \t\tD02.065\n", "no name")):
        path = _write(tmp_path / "desc.tsv.gz", good + text, gz=True)
        with pytest.raises(BioLinkError, match="E001") as err:
            read(path, "mesh-tsv")
        assert f"{path}:6: malformed mesh-tsv" in str(err.value) and reason in str(err.value)
    supp = _write(tmp_path / "supp.tsv", "C000006\tinsulin, neutral\t\tD007328;D000001\n")
    with pytest.raises(BioLinkError, match=f"{supp}:1: .*not a descriptor UI"):
        read(supp, "mesh-tsv")


def test_a_quoted_synonym_field_with_a_tab_is_read_as_csv(tmp_path):
    # One record of the 2024 export quotes its synonyms, which hold a tab.
    supp = _write(tmp_path / "supp.tsv", 'C483025\tAckr1 protein mouse\t"Dfy protein, mouse|'
                  'ID: 1 ims\tDuffy protein, mouse"\tD007328,D000001\n')
    dictionary = read(TSV / "mesh_descriptors.tsv.gz", "mesh-tsv",
                      mesh_supplementary=[str(supp)])
    c = dictionary.concept_index("C483025")
    assert list(dictionary.names_of(c)) == ["Ackr1 protein mouse", "Dfy protein, mouse",
                                            "ID: 1 ims", "Duffy protein, mouse"]
    assert dictionary.types[c] == "D|D06|D12|D03|D04"


def test_type_filter_over_mesh_branches_links_by_span_label():
    from .test_vocabularies import link

    dictionary = read(TSV, "mesh-tsv")
    nlp = make_linker_nlp(dictionary, k=1, threshold=0.0,
                          type_filter={"Chemical": ["D"], "Disease": ["C", "F03"]})
    # "conjugate 7" is a D and C record; "Melancholia" only F03.
    assert link(nlp, "conjugate 7", "Chemical")[0] == "C000100"
    assert link(nlp, "conjugate 7", "Disease")[0] == "C000100"
    assert link(nlp, "Melancholia", "Disease")[0] == "D003866"
    assert link(nlp, "Melancholia", "Chemical")[0] != "D003866"


def test_init_linker_cli_reads_mesh_with_branches(tmp_path):
    ascii_dir = tmp_path / "ascii"
    ascii_dir.mkdir()
    shutil.copy(ASCII / "d2024.bin", ascii_dir)
    out = tmp_path / "chem"
    result = CliRunner().invoke(app, ["init-linker", str(out), "-d", str(ascii_dir / "d2024.bin"),
                                      "--format", "mesh-ascii", "--mesh-branches", "D",
                                      "--mesh-supplementary", str(ASCII / "c2024.bin.gz")])
    assert result.exit_code == 0, result.output
    config = (out / "config.cfg").read_text(encoding="utf8")
    assert 'spacy-biolink.load_dictionary.v4' in config and 'mesh_branches = ["D"]' in config
    import spacy

    linker = spacy.load(out).get_pipe("bio_linker")
    assert {linker.dictionary.primary_id(c) for c in range(linker.dictionary.n_concepts)} == \
        {"D000001", "D007328", "C000006", "C000100"}


# MEDIC extended by MeSH (kb/extend.py, init-linker --extend) ------------------------

MEDIC_LINES = [
    "D003920||Diabetes Mellitus|DM",  # MeSH's Diabetes Mellitus: its names join
    "D008881|D003866||Migraine|Hemicrania",  # D003866 only as an alternate id here
    "D009999|OMIM:100100||Made-up syndrome",  # nothing of MeSH's: stays as it is
]


def write_medic(tmp_path):
    path = tmp_path / "medic.txt"
    path.write_text("\n".join(MEDIC_LINES) + "\n", encoding="utf8")
    return path


def test_extending_medic_by_mesh_adds_names_to_shared_ids_and_joins_the_rest(tmp_path):
    from spacy_biolink.kb.extend import extend_dictionary

    medic = read(write_medic(tmp_path), "medic")
    diseases = read(TSV, "mesh-tsv", mesh_branches=["C", "F03"])
    extended = extend_dictionary(medic, diseases)
    got = as_dict(extended)
    # Shared primary id: MEDIC's names first, MeSH's new one after, MeSH's branches as the
    # type MEDIC lacked; "Diabetes Mellitus" is not repeated.
    assert got["D003920"] == (["Diabetes Mellitus", "DM", "Diabetes"], "C|C18|C19")
    # Shared alternate id: MEDIC's concept keeps its primary id and gains MeSH's names;
    # no concept of its own for D003866.
    assert got["D008881"][0] == ["Migraine", "Hemicrania", "Depressive Disorder",
                                 "Depression, Endogenous", "Melancholia"]
    assert "D003866" not in got
    assert extended.ids_of(extended.concept_index("D008881")) == ("D008881", "D003866")
    # Nothing shared: MEDIC's concept unchanged, MeSH's C record joins whole.
    assert got["D009999"] == (["Made-up syndrome"], "")
    assert got["C000100"] == (["calcimycin diabetes conjugate", "conjugate 7"],
                              "D|D03|D04|C|C18|C19")
    assert extended.n_concepts == medic.n_concepts + 1
    # Neither input is changed.
    assert list(medic.names_of(medic.concept_index("D003920"))) == ["Diabetes Mellitus", "DM"]


def test_init_linker_cli_extends_medic_by_mesh_from_its_config(tmp_path):
    import spacy

    from .test_vocabularies import link

    out = tmp_path / "diseases"
    result = CliRunner().invoke(app, ["init-linker", str(out), "-d", str(write_medic(tmp_path)),
                                      "--extend", str(TSV), "--extend-format", "mesh-tsv",
                                      "--extend-mesh-branches", "C,F03"])
    assert result.exit_code == 0, result.output
    config = (out / "config.cfg").read_text(encoding="utf8")
    assert '@misc = "spacy-biolink.extended_dictionary.v1"' in config
    assert "[initialize.components.bio_linker.dictionary.extensions.extension_1]" in config
    assert 'mesh_branches = ["C", "F03"]' in config
    nlp = spacy.load(out)
    assert link(nlp, "Diabetes", "Disease")[0] == "D003920"  # a name MEDIC lacks
    assert link(nlp, "conjugate 7", "Disease")[0] == "C000100"  # a concept MEDIC lacks
    assert link(nlp, "Melancholia", "Disease")[0] == "D008881"  # MEDIC's id kept
    # A branch that does not exist is refused before anything is written.
    bad = CliRunner().invoke(app, ["init-linker", str(tmp_path / "bad"), "-d",
                                   str(write_medic(tmp_path)), "--extend", str(TSV),
                                   "--extend-mesh-branches", "Diseases"])
    assert bad.exit_code != 0 and "E052" in bad.output and "Diseases" in bad.output
    assert not (tmp_path / "bad").exists()


def test_init_linker_extend_follows_on_bad_line(tmp_path):
    """--on-bad-line is the run's rule for the --extend dictionaries too: by default a
    malformed extension line stops the build at file:line with nothing written; with skip
    the line is left out, said in W953, and the rest extends the linker."""
    import spacy

    from .test_vocabularies import link

    good = gzip.open(TSV / "mesh_descriptors.tsv.gz", "rt", encoding="utf8").read()
    extension = _write(tmp_path / "extension_descriptors.tsv",
                       good + "D001241\tAspirin\t\tD02.x\n")
    args = ["-d", str(write_medic(tmp_path)), "--extend", str(extension),
            "--extend-format", "mesh-tsv"]
    stopped = CliRunner().invoke(app, ["init-linker", str(tmp_path / "stopped"), *args])
    assert stopped.exit_code != 0
    assert f"{extension}:6: malformed mesh-tsv" in stopped.output
    assert not (tmp_path / "stopped").exists()
    out = tmp_path / "skipped"
    with pytest.warns(UserWarning, match="W953"):
        result = CliRunner().invoke(app, ["init-linker", str(out), *args,
                                          "--on-bad-line", "skip"])
    assert result.exit_code == 0, result.output
    config = (out / "config.cfg").read_text(encoding="utf8")
    assert config.count('on_bad_line = "skip"') == 2  # the base loader and the extension
    assert link(spacy.load(out), "Diabetes", "Disease")[0] == "D003920"


# The shipped MeSH 2024 export (../shared/data/mesh2024) -------------------------------


def test_shipped_mesh_2024_export_reads_whole_with_its_branches(shared_data):
    mesh = shared_data / "mesh2024"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every mapped UI resolves: no W954
        chemicals = load_dictionary(mesh, "mesh-tsv", mesh_branches=["D"])
    assert (chemicals.n_concepts, chemicals.n_names) == (259_970, 565_526)
    insulin_neutral = chemicals.concept_index("C000006")  # an SCR mapped to Insulin (D06, D12)
    assert chemicals.types[insulin_neutral] == "D|D06|D12"
    assert chemicals.concept_index("D003920") is None  # Diabetes Mellitus is C18/C19


@pytest.mark.slow  # builds a 566k-name linker (~2 min) and links 5,347 dev mentions
def test_chemical_linker_dev_accuracy_under_biosyns_protocol(shared_data, tmp_path):
    from spacy_biolink.evaluation import evaluate_gold_mentions
    from spacy_biolink.linker.pipeline import init_linker

    bc5cdr = shared_data / "bc5cdr"
    nlp = init_linker(tmp_path / "chem", shared_data / "mesh2024", format="mesh-tsv",
                      augment=[bc5cdr / "CDR_TrainingSet.PubTator.txt.gz"],
                      dictionary_filters={"mesh_branches": ["D"]},
                      # chosen on this dev set (BENCHMARKS.md, issue 34)
                      overrides={"components.bio_linker.normalizer.strip_plurals": False})
    result = evaluate_gold_mentions(nlp, bc5cdr / "CDR_DevelopmentSet.PubTator.txt.gz",
                                    types={"Chemical"})
    assert result["n_evaluated"] == 5124
    assert result["acc@1"] == pytest.approx(0.9370, abs=0.005)


@pytest.mark.slow  # reads MeSH 2024 from the export and links 4,244 mentions (~17 s)
def test_medic_extended_by_mesh_dev_accuracy(shared_data, tmp_path):
    from spacy_biolink.evaluation import evaluate_gold_mentions
    from spacy_biolink.linker.pipeline import init_linker

    bc5cdr = shared_data / "bc5cdr"
    root = Path(__file__).parent.parent
    # the bc5cdr workflow's disease linker without the dev mentions (BENCHMARKS.md, issue 34)
    nlp = init_linker(tmp_path / "diseases", root / "assets" / "medic_06Jul2012.txt.gz",
                      augment=[bc5cdr / "CDR_TrainingSet.PubTator.txt.gz",
                               root / "assets" / "ncbi_disease" / "NCBItrainset_corpus.txt.gz"],
                      extend=[shared_data / "mesh2024"], extend_format="mesh-tsv",
                      extend_filters={"mesh_branches": ["C", "F03"]},
                      overrides={"components.bio_linker.labels": ["Disease"]})
    result = evaluate_gold_mentions(nlp, bc5cdr / "CDR_DevelopmentSet.PubTator.txt.gz",
                                    types={"Disease"})
    # MEDIC alone evaluates 4,179 (49 ids it lacks, Cardiotoxicity's among them)
    assert result["n_evaluated"] == 4228
    assert result["acc@1"] == pytest.approx(0.8817, abs=0.0005)
