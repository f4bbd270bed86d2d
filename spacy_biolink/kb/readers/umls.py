"""UMLS Metathesaurus reader: MRCONSO.RRF (names), MRSTY.RRF (types), MRDEF.RRF (definitions).

A full English MRCONSO holds ~10M strings. MRCONSO, MRSTY and MRDEF are all sorted by
CUI, so the three are read side by side as one merge join: each CUI's lines become one
Concept as soon as the next CUI starts, and no per-line object outlives its line. Memory
is what the dictionary being built needs, not a table per file.

Columns (https://www.ncbi.nlm.nih.gov/books/NBK9685/):
MRCONSO: CUI|LAT|TS|LUI|STT|SUI|ISPREF|AUI|SAUI|SCUI|SDUI|SAB|TTY|CODE|STR|SRL|SUPPRESS|CVF|
MRSTY:   CUI|TUI|STN|STY|ATUI|CVF|
MRDEF:   CUI|AUI|ATUI|SATUI|SAB|DEF|SUPPRESS|CVF|
"""
import csv
import re
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Dict, FrozenSet, Iterable, Iterator, List, Optional, Tuple

from ..dictionary import ID_SEPARATOR, Concept
from ...errors import BioLinkError, Errors
from ...io.util import PathLike
from .lines import _lines, _malformed

MRCONSO_COLUMNS = 18
# C0/C1 controls and the BOM: never part of a concept id or name (a BOM mid-file is a
# concatenation of files; a control character is a broken export).
BAD_CHARS = re.compile("[\x00-\x1f\x7f-\x9f\ufeff]")
_CUI, _LAT, _TS, _STT, _ISPREF, _SAB, _CODE, _STR, _SUPPRESS = 0, 1, 2, 4, 6, 11, 13, 14, 16
# Source vocabularies whose codes are ids in the package convention (ids.py).
_CODE_NAMESPACES = {"MSH": "MESH", "OMIM": "OMIM"}


@lru_cache(maxsize=1)
def semantic_groups() -> Dict[str, Tuple[str, str, str]]:
    """TUI -> (group abbreviation, group name, type name), from NLM's SemGroups table
    (the 2018 Semantic Network: 127 types in 15 groups), shipped as package data."""
    text = resources.files("spacy_biolink.data").joinpath("SemGroups.txt").read_text("utf8")
    table = {}
    for row in csv.reader(text.splitlines(), delimiter="|"):
        if row:
            group, group_name, tui, type_name = row
            table[tui] = (group, group_name, type_name)
    return table


def expand_semantic_types(values: Iterable[str]) -> FrozenSet[str]:
    """TUIs and semantic group abbreviations (DISO, CHEM...) -> the set of TUIs."""
    table = semantic_groups()
    by_group: Dict[str, List[str]] = {}
    for tui, (group, _, _) in table.items():
        by_group.setdefault(group, []).append(tui)
    out = set()
    for value in values:
        key = str(value).strip()
        if key.upper() in by_group:
            out.update(by_group[key.upper()])
        elif len(key) == 4 and key[0] in "Tt" and key[1:].isdigit():
            out.add(key.upper())
        else:
            raise BioLinkError(Errors.E044.format(value=value, groups=", ".join(sorted(by_group))))
    return frozenset(out)


def find_rrf(directory: Path, table: str) -> Optional[Path]:
    """The path of `table`.RRF (or .RRF.gz) in `directory`, or None when neither is there."""
    for name in (f"{table}.RRF", f"{table}.RRF.gz"):
        if (directory / name).is_file():
            return directory / name
    return None


def _rrf_rows(path: Path, n_columns: int, fmt: str) -> Iterator[Tuple[int, List[str]]]:
    """(line number, columns) of an RRF file, checking the column count and CUI order."""
    previous = ""
    for line_no, line in _lines(path):
        cols = line.split("|")
        if len(cols) != n_columns + 1 or cols[-1] != "":
            raise _malformed(path, line_no, fmt, f"expected {n_columns} '|'-terminated "
                                                 f"columns, found {len(cols) - 1}", line)
        cui = cols[0]
        if not cui.strip() or BAD_CHARS.search(cui):
            raise _malformed(path, line_no, fmt, "no CUI in the first column", line)
        if cui < previous:
            raise BioLinkError(Errors.E043.format(path=path, line=line_no, fmt=fmt, cui=cui,
                                                  previous=previous))
        previous = cui
        yield line_no, cols


class _Joined:
    """The rows of a CUI-sorted side table, handed out one CUI at a time (a merge join)."""

    def __init__(self, rows: Iterator[Tuple[int, List[str]]]):
        self.rows = rows
        self.pending = next(rows, None)

    def take(self, cui: str) -> List[List[str]]:
        out = []
        while self.pending is not None and self.pending[1][0] <= cui:
            if self.pending[1][0] == cui:
                out.append(self.pending[1])
            self.pending = next(self.rows, None)
        return out


def read_umls(path: PathLike, *, languages: Optional[Iterable[str]] = ("ENG",),
              sources: Optional[Iterable[str]] = None, suppressed: bool = False,
              semantic_types: Optional[Iterable[str]] = None,
              code_sources: Optional[Iterable[str]] = None) -> Iterator[Concept]:
    """Concepts of a UMLS release: `path` is its META directory or MRCONSO.RRF(.gz).

    languages: LAT values kept (default English; None or [] for all).
    sources: SAB values kept (default all), e.g. ["MSH", "SNOMEDCT_US"].
    suppressed: keep strings whose SUPPRESS is not N (obsolete, suppressible).
    semantic_types: keep only concepts with one of these TUIs or semantic groups (DISO).
    code_sources: SABs whose CODE of a kept string becomes an alternative id of its
        concept: MSH codes bare (D003924), OMIM as OMIM:125853, others as SAB:CODE; so a
        MeSH-annotated corpus evaluates against UMLS (default none).

    A concept's canonical name is its preferred string (TS=P, STT=PF, ISPREF=Y) among
    those kept, else its first kept string; its types are its TUIs joined by "|".
    """
    path = Path(path)
    directory = path if path.is_dir() else path.parent
    mrconso = find_rrf(path, "MRCONSO") if path.is_dir() else path
    if mrconso is None:
        raise BioLinkError(Errors.E042.format(path=path))
    mrsty, mrdef = find_rrf(directory, "MRSTY"), find_rrf(directory, "MRDEF")
    languages = frozenset(languages) if languages else None
    sources = frozenset(sources) if sources else None
    allowed_types = expand_semantic_types(semantic_types) if semantic_types else None
    code_sources = frozenset(code_sources) if code_sources else frozenset()
    if allowed_types is not None and mrsty is None:
        raise BioLinkError(Errors.E045.format(types=list(semantic_types), path=directory))
    types = _Joined(_rrf_rows(mrsty, 6, "umls (MRSTY.RRF)")) if mrsty else None
    definitions = _Joined(_rrf_rows(mrdef, 8, "umls (MRDEF.RRF)")) if mrdef else None

    def concept(cui: str, names: Dict[str, None], preferred: Optional[str],
                codes: Dict[str, None]) -> Optional[Concept]:
        tuis = [row[1] for row in types.take(cui)] if types is not None else []
        if allowed_types is not None and allowed_types.isdisjoint(tuis):
            return None
        definition = ""
        if definitions is not None:
            for row in definitions.take(cui):
                if (suppressed or row[6] in ("N", "")) and (sources is None or row[4] in sources):
                    definition = row[5]
                    break
        if not names:
            return None
        if preferred is not None:
            ordered = [preferred] + [n for n in names if n != preferred]
        else:
            ordered = list(names)
        return Concept([cui] + [c for c in codes if c != cui], ordered,
                       type=ID_SEPARATOR.join(dict.fromkeys(tuis)),
                       definition=definition)

    current, names, preferred, codes = None, {}, None, {}
    for line_no, cols in _rrf_rows(mrconso, MRCONSO_COLUMNS, "umls (MRCONSO.RRF)"):
        cui = cols[_CUI]
        if cui != current:
            if current is not None:
                built = concept(current, names, preferred, codes)
                if built is not None:
                    yield built
            current, names, preferred, codes = cui, {}, None, {}
        if languages is not None and cols[_LAT] not in languages:
            continue
        if sources is not None and cols[_SAB] not in sources:
            continue
        if not suppressed and cols[_SUPPRESS] not in ("N", ""):
            continue
        name = cols[_STR].strip()
        if BAD_CHARS.search(name):
            raise _malformed(mrconso, line_no, "umls (MRCONSO.RRF)",
                             "a control character or BOM in STR", "|".join(cols))
        if not name:
            continue
        names[name] = None
        sab = cols[_SAB]
        if sab in code_sources and cols[_CODE].strip() and not BAD_CHARS.search(cols[_CODE]):
            code = cols[_CODE].strip()
            namespace = _CODE_NAMESPACES.get(sab)
            codes[code if namespace == "MESH" else
                  f"OMIM:{code}" if namespace == "OMIM" else f"{sab}:{code}"] = None
        if preferred is None and cols[_TS] == "P" and cols[_STT] == "PF" and cols[_ISPREF] == "Y":
            preferred = name
    if current is not None:
        built = concept(current, names, preferred, codes)
        if built is not None:
            yield built
