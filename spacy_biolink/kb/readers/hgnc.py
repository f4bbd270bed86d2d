"""HGNC gene reader: human genes from an HGNC download, as NCBI Gene concepts.

The gene corpora (BioRED, GNormPlus, NLM-Gene, tmVar3) annotate genes with NCBI Gene
ids, so a concept's primary id is its NCBI Gene id ("6528") and its HGNC id
("HGNC:11036") is an alternative id. Both of HGNC's layouts are read, by their header:
the custom download ("HGNC ID", "Approved symbol", "Alias symbols", "NCBI Gene ID(supplied
by NCBI)", comma-separated lists) and hgnc_complete_set.txt ("hgnc_id", "symbol",
"alias_symbol", "entrez_id", `|`-separated lists, some quoted).

Names, in this order (the first is the canonical name): the approved symbol, the alias
symbols, the previous symbols, the approved name, then alias and previous names where the
layout has them. A dictionary name carries no kind, so the kind is weighed here, in the
data: an alias or previous symbol that is another gene's approved symbol is left out (the
approved symbol wins where a previous symbol of one gene is the current symbol of another).
Withdrawn entries ("Entry Withdrawn", "Symbol Withdrawn") are left out.
"""
from pathlib import Path
from typing import Dict, Iterator, List, Optional

from ..dictionary import Concept
from ...errors import BioLinkError, Errors
from ...io.util import PathLike
from .lines import BadLines, _lines, _malformed

# Header title -> field, for both layouts (titles compared lower-cased, without the
# "(supplied by ...)" note of the custom download).
_FIELDS = {
    "hgnc id": "hgnc_id", "hgnc_id": "hgnc_id",
    "approved symbol": "symbol", "symbol": "symbol",
    "approved name": "name", "name": "name",
    "status": "status",
    "alias symbols": "alias_symbols", "alias_symbol": "alias_symbols",
    "previous symbols": "prev_symbols", "prev_symbol": "prev_symbols",
    "alias names": "alias_names", "alias_name": "alias_names",
    "previous name": "prev_names", "previous names": "prev_names", "prev_name": "prev_names",
    "ncbi gene id": "ncbi", "entrez_id": "ncbi", "ncbi gene id(supplied by ncbi)": "ncbi",
    "locus type": "locus_type", "locus_type": "locus_type",
}
REQUIRED = ("hgnc_id", "symbol")
# Name fields in the order their names are listed.
NAME_FIELDS = ("symbol", "alias_symbols", "prev_symbols", "name", "alias_names", "prev_names")
SYMBOL_FIELDS = ("alias_symbols", "prev_symbols")
# Fields that hold lists; the others hold one value (an approved name may hold commas:
# "phosphatidylinositol-4,5-bisphosphate 3-kinase ...").
LIST_FIELDS = ("alias_symbols", "prev_symbols", "alias_names", "prev_names")
KEPT_STATUS = ("approved", "")


def is_hgnc_header(line: str) -> bool:
    """True for the header line of an HGNC download (either layout)."""
    cols = [_title(c) for c in line.split("\t")]
    return len(cols) >= 2 and _FIELDS.get(cols[0]) == "hgnc_id" and "symbol" in {
        _FIELDS.get(c) for c in cols}


def _title(column: str) -> str:
    text = column.strip().strip('"').lower()
    if "(supplied by" in text and not text.startswith("ncbi"):
        text = text.split("(supplied by", 1)[0].strip()
    return text


def _values(cell: str) -> List[str]:
    """The items of a list cell: `A, B` (custom download; names quoted, `"a, b", "c"`) or
    `"A|B"` (complete set)."""
    cell = cell.strip()
    if cell.startswith('"') and '", "' in cell:
        items = cell.split('", "')
    else:
        cell = cell.strip('"')
        items = cell.split("|" if "|" in cell else ",")
    return [v.strip().strip('"') for v in items if v.strip().strip('"')]


def _header(path: Path, bad: BadLines):
    """({field: column}, the number of columns) of the header, and the rows after it."""
    rows = _lines(path, bad)
    for line_no, line in rows:
        cols = [_title(c) for c in line.split("\t")]
        columns = {}
        for i, title in enumerate(cols):
            field = _FIELDS.get(title)
            if field is not None and field not in columns:
                columns[field] = i
        missing = [f for f in REQUIRED if f not in columns]
        if missing:
            raise BioLinkError(Errors.E320.format(path=path, line=line_no, text=line[:200],
                                                  missing=", ".join(missing)))
        return columns, len(cols), rows
    raise BioLinkError(Errors.E320.format(path=path, line=1, text="", missing="the header"))


def _row(line_no: int, path, line: str, columns: Dict[str, int], n_columns: int
         ) -> Optional[Dict[str, List[str]]]:
    cells = line.split("\t")
    if len(cells) > n_columns:
        raise _malformed(path, line_no, "hgnc", f"{len(cells)} tab-separated columns, the "
                         f"header has {n_columns}", line)
    # A row may end early when its last cells are empty (trailing tabs trimmed).
    cells += [""] * (n_columns - len(cells))
    row = {field: _values(cells[i]) if field in LIST_FIELDS else
           [cells[i].strip().strip('"')] for field, i in columns.items()}
    if "status" in row and row["status"][0].lower() not in KEPT_STATUS:
        return None
    hgnc_id, symbol = row["hgnc_id"][0], row["symbol"][0]
    if not hgnc_id.upper().startswith("HGNC:") and not hgnc_id.isdigit():
        raise _malformed(path, line_no, "hgnc", f"{hgnc_id!r} is not an HGNC id (HGNC:5)",
                         line)
    if not symbol:
        raise _malformed(path, line_no, "hgnc", "no approved symbol", line)
    row["hgnc_id"] = [hgnc_id if ":" in hgnc_id else f"HGNC:{hgnc_id}"]
    return row


def read_hgnc(path: PathLike, on_bad_line: str = "error", *,
              drop_shadowed: bool = True) -> Iterator[Concept]:
    """The approved genes of an HGNC TSV download: ids [NCBI Gene id, HGNC id] (the HGNC
    id alone where HGNC gives no NCBI id), names symbol first (see the module's text),
    type the locus type.

    drop_shadowed: leave out an alias or previous symbol that is another approved gene's
        symbol (compared case-insensitively).
    on_bad_line: see BadLines. A line with more columns than the header, an HGNC id that
    is not one or a missing symbol raises BioLinkError naming file:line.
    """
    path = Path(path)
    bad = BadLines(path, on_bad_line)
    columns, n_columns, rows = _header(path, bad)
    kept = []
    for line_no, line in rows:
        row = bad.parse(_row, line_no, path, line, columns, n_columns)
        if row is not None:
            kept.append(row)
    bad.report()
    symbols = {row["symbol"][0].upper() for row in kept}
    for row in kept:
        names: List[str] = []
        own = row["symbol"][0].upper()
        for field in NAME_FIELDS:
            for name in row.get(field, ()):
                if (drop_shadowed and field in SYMBOL_FIELDS and name.upper() != own
                        and name.upper() in symbols):
                    continue
                names.append(name)
        ncbi = row.get("ncbi", [""])[0]
        ids = ([ncbi] if ncbi else []) + row["hgnc_id"]
        yield Concept(ids, list(dict.fromkeys(names)), type=row.get("locus_type", [""])[0])

