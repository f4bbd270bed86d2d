"""Small UMLS and OBO files in their real layouts, written by the tests that need them."""
from pathlib import Path


def mrconso_row(cui, string, *, lat="ENG", ts="S", stt="VO", ispref="N", sab="MSH",
                tty="ET", code="D003924", suppress="N", n=[0]) -> str:
    """One MRCONSO.RRF line: the 18 columns, each ended by '|'."""
    n[0] += 1
    aui = f"A{n[0]:08d}"
    cols = [cui, lat, ts, f"L{n[0]:07d}", stt, f"S{n[0]:07d}", ispref, aui, "", "", code,
            sab, tty, code, string, "0", suppress, "256"]
    assert len(cols) == 18
    return "|".join(cols) + "|"


def write_meta(directory: Path, *, with_sty: bool = True, with_def: bool = True) -> Path:
    """A META directory: diabetes (DISO), metformin (CHEM), a cold (two senses), a German
    string, a suppressed string, an obsolete-only concept."""
    directory.mkdir(parents=True, exist_ok=True)
    rows = [
        mrconso_row("C0011849", "Diabetes Mellitus", ts="P", stt="PF", ispref="Y", tty="MH",
                    code="D003920"),
        mrconso_row("C0011849", "diabetes", code="D003920"),
        mrconso_row("C0011849", "Diabetes mellitus", lat="GER", sab="MSHGER", code="D003920"),
        mrconso_row("C0011860", "Type 2 diabetes", code="D003924"),
        mrconso_row("C0011860", "Diabetes Mellitus, Non-Insulin-Dependent", ts="P", stt="PF",
                    ispref="Y", tty="MH", code="D003924"),
        mrconso_row("C0011860", "NIDDM", sab="SNOMEDCT_US", tty="SY", code="44054006"),
        mrconso_row("C0011860", "Diabetes, adult onset (obsolete)", suppress="O"),
        mrconso_row("C0025598", "Metformin", ts="P", stt="PF", ispref="Y", tty="MH",
                    code="D008687"),
        mrconso_row("C0025598", "cold remedy metformin", code="D008687"),
        mrconso_row("C0009443", "Common Cold", ts="P", stt="PF", ispref="Y", tty="MH",
                    code="D003139"),
        mrconso_row("C0009443", "cold", code="D003139"),
        mrconso_row("C0009264", "Cold Temperature", ts="P", stt="PF", ispref="Y", tty="MH",
                    code="D003080"),
        mrconso_row("C0009264", "cold", code="D003080"),
        mrconso_row("C9999999", "Withdrawn thing", ts="P", stt="PF", ispref="Y", suppress="E"),
    ]
    rows.sort(key=lambda row: row.split("|", 1)[0])  # UMLS ships it sorted by CUI
    (directory / "MRCONSO.RRF").write_text("\n".join(rows) + "\n", encoding="utf8")
    if with_sty:
        sty = [("C0009264", "T070", "Natural Phenomenon or Process"),
               ("C0009443", "T047", "Disease or Syndrome"),
               ("C0011849", "T047", "Disease or Syndrome"),
               ("C0011860", "T047", "Disease or Syndrome"),
               ("C0025598", "T109", "Organic Chemical"),
               ("C0025598", "T121", "Pharmacologic Substance")]
        (directory / "MRSTY.RRF").write_text(
            "".join(f"{c}|{t}|A1.2|{name}|AT{i:07d}|256|\n" for i, (c, t, name) in enumerate(sty)),
            encoding="utf8")
    if with_def:
        defs = [("C0011849", "MSH", "A heterogeneous group of disorders.", "N"),
                ("C0011860", "CSP", "An old definition.", "O"),
                ("C0011860", "MSH", "A subclass of diabetes mellitus.", "N")]
        (directory / "MRDEF.RRF").write_text(
            "".join(f"{c}|A{i:08d}|AT{i:07d}||{sab}|{text}|{sup}|256|\n"
                    for i, (c, sab, text, sup) in enumerate(defs)), encoding="utf8")
    return directory


OBO = """\
format-version: 1.2
data-version: mondo/releases/2024-01-01/mondo.obo
ontology: mondo

[Term]
id: MONDO:0005148
name: type 2 diabetes mellitus
def: "A type of diabetes mellitus that is characterized by insulin resistance." [PMID:1]
synonym: "NIDDM" EXACT []
synonym: "type 2 diabetes" EXACT [MONDO:equivalentTo]
synonym: "adult onset diabetes" RELATED []
xref: MESH:D003924 {source="MONDO:equivalentTo"}
xref: OMIM:125853
xref: UMLS:C0011860
xref: DOID:9352
alt_id: MONDO:0000001
is_a: MONDO:0005015 ! diabetes mellitus

[Term]
id: MONDO:0005015
name: diabetes mellitus
synonym: "diabetes" EXACT []
xref: MESH:D003920

[Term]
id: MONDO:0000999
name: obsolete old thing
is_obsolete: true
replaced_by: MONDO:0005015

[Term]
id: MONDO:0007739
name: Huntington disease
synonym: "Huntington chorea" EXACT []
xref: OMIM:143100
xref: MESH:D006816

[Typedef]
id: part_of
name: part of
"""


def write_obo(path: Path, text: str = OBO) -> Path:
    path.write_text(text, encoding="utf8")
    return path
