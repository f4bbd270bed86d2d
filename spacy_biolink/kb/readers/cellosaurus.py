"""Cellosaurus reader: cell lines from `cellosaurus.txt`, Cellosaurus's flat file.

A record is a run of `XX   value` lines ended by `//`:

    ID   HeLa
    AC   CVCL_0030
    AS   CVCL_1922; CVCL_2260
    SY   HELA; Hela; He La; Henrietta Lacks cells
    CA   Cancer cell line
    //

The concept's ids are its accession (AC, CVCL_0030, as BioID and BioRED annotate) then
its secondary accessions (AS); its names the ID line then the synonyms (SY, `; `-
separated); its type the category (CA). The file's preamble (text before the first ID
line) is skipped; line codes other than these are ignored.
"""
import re
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

from ..dictionary import Concept
from ...errors import BioLinkError, Errors
from ...io.util import PathLike
from .lines import BadLines, _lines, _malformed

_FIELD = re.compile(r"^([A-Z]{2})   (.*)$")
# Codes whose values are `; `-separated lists.
_LISTS = ("AS", "SY")


def _records(path: Path, bad: BadLines) -> Iterator[Tuple[int, List[Tuple[int, str, str]]]]:
    """(first line, [(line, code, value)]) of each record: from an ID line to `//`."""
    start, fields = 0, []
    for line_no, line in _lines(path, bad):
        text = line.rstrip()
        if text == "//":
            if start:
                yield start, fields
            start, fields = 0, []
            continue
        match = _FIELD.match(text)
        if not start:
            if match and match.group(1) == "ID":
                start, fields = line_no, [(line_no, "ID", match.group(2).strip())]
            continue  # the preamble
        if match is None:
            if not bad.skipping:
                raise _malformed(path, line_no, "cellosaurus",
                                 "expected `XX   value` (a two-letter code, three spaces) or "
                                 "`//` inside a record", line)
            bad.record(line_no, "not `XX   value` inside a record")
            continue
        fields.append((line_no, match.group(1), match.group(2).strip()))
    if start:  # a last record without its `//`
        yield start, fields


def _concept(start: int, path, fields: List[Tuple[int, str, str]]) -> Concept:
    values: Dict[str, List[str]] = {}
    for _, code, value in fields:
        items = [v.strip() for v in value.split(";")] if code in _LISTS else [value]
        values.setdefault(code, []).extend(v for v in items if v)
    missing = [code for code in ("ID", "AC") if not values.get(code)]
    if missing:
        last = fields[-1][0] if fields else start
        raise BioLinkError(Errors.E321.format(path=path, line=last, start=start,
                                              missing=" and ".join(f"an {c} line"
                                                                   for c in missing)))
    ids = values["AC"][:1] + values.get("AS", [])
    names = values["ID"][:1] + values.get("SY", [])
    return Concept(ids, list(dict.fromkeys(names)), type=(values.get("CA") or [""])[0])


def read_cellosaurus(path: PathLike, on_bad_line: str = "error") -> Iterator[Concept]:
    """The cell lines of a cellosaurus.txt (plain or .gz). A record without ID or AC
    raises BioLinkError naming file:line (E321); on_bad_line "skip" leaves it out and
    counts it (W953). A file with no record at all is an error (E322)."""
    path = Path(path)
    bad = BadLines(path, on_bad_line)
    n = 0
    for start, fields in _records(path, bad):
        concept = bad.parse(_concept, start, path, fields)
        if concept is not None:
            n += 1
            yield concept
    bad.report()
    if not n and not bad.count:
        raise BioLinkError(Errors.E322.format(path=path))
