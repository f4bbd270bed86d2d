"""OBO ontology reader (MONDO, HPO, DOID, ChEBI...), parsed by fastobo.

fastobo (Rust, OBO 1.4) was chosen over pronto and obonet on a generated 100k-term
ontology (BENCHMARKS.md): it streams frames (4.5 s, ~195 MB peak) where obonet builds a
networkx graph (8.4 s, 282 MB) and pronto a full object model (23.8 s, 822 MB). Only
the mapping from term frames to Concepts is written here.

Ids follow the package convention (spacy_biolink/ids.py): the term id as written
(MONDO:0005148); its alt_ids and its xrefs to MeSH, OMIM and UMLS become alternative ids,
MeSH and UMLS ids bare (D003924, C0011860), OMIM as OMIM:125853, so a MeSH-annotated
corpus evaluates against a MONDO dictionary.
"""
import io
from pathlib import Path
from typing import Iterable, Iterator, Optional

from ..dictionary import Concept
from ...errors import BioLinkError, Errors
from ..ids import XREF_NAMESPACES, normalize_xref
from ...io.util import PathLike, open_text
from .umls import BAD_CHARS

SYNONYM_SCOPES = ("EXACT", "RELATED", "BROAD", "NARROW")
DEFAULT_XREF_PREFIXES = ("MESH", "MSH", "OMIM", "MIM", "UMLS", "UMLS_CUI")


class _BinaryLines(io.RawIOBase):
    """The text of the package's opener (gzip, BOM, encoding) as the binary stream fastobo
    reads, line for line, so fastobo's line numbers are the file's."""

    def __init__(self, path: Path):
        self.path = path
        self.fileh = open_text(path)
        self.buffer = b""
        self.line_no = 0

    def readable(self) -> bool:
        return True

    def readinto(self, target) -> int:
        while len(self.buffer) < len(target):
            line = self.fileh.readline()
            if not line:
                break
            self.line_no += 1
            self.buffer += line.encode("utf8")
        n = min(len(target), len(self.buffer))
        target[:n] = self.buffer[:n]
        self.buffer = self.buffer[n:]
        return n

    def close(self) -> None:
        self.fileh.close()
        super().close()


def _check_scopes(scopes: Iterable[str]) -> frozenset:
    out = set()
    for scope in scopes:
        if str(scope).upper() not in SYNONYM_SCOPES:
            raise BioLinkError(Errors.E047.format(value=scope))
        out.add(str(scope).upper())
    return frozenset(out)


def read_obo(path: PathLike, *, synonym_scopes: Iterable[str] = ("EXACT",),
             xref_prefixes: Optional[Iterable[str]] = DEFAULT_XREF_PREFIXES
             ) -> Iterator[Concept]:
    """Concepts of an OBO file: one per [Term] that is not obsolete.

    synonym_scopes: which synonyms become names (default EXACT only: RELATED, BROAD and
        NARROW synonyms name other concepts as often as this one).
    xref_prefixes: xrefs with these prefixes become alternative ids (None or []: none).
    """
    import fastobo

    path = Path(path)
    scopes = _check_scopes(synonym_scopes)
    prefixes = frozenset(p.upper() for p in (xref_prefixes or ()))
    stream = _BinaryLines(path)
    try:
        try:
            frames = fastobo.iter(io.BufferedReader(stream), ordered=True, threads=1)
            for frame in frames:
                concept = _concept(frame, scopes, prefixes, path)
                if concept is not None:
                    yield concept
        except SyntaxError as err:
            raise BioLinkError(Errors.E046.format(where=f"{path}:{err.lineno}",
                                                  reason=err.msg or "not OBO syntax")) from None
        except BioLinkError:
            raise
        except (ValueError, TypeError, OSError) as err:
            raise BioLinkError(Errors.E046.format(where=f"{path}:{stream.line_no}",
                                                  reason=str(err) or type(err).__name__)) from None
        except BaseException as err:
            # fastobo's Rust panics arrive as pyo3's PanicException, a BaseException.
            if type(err).__name__ != "PanicException":
                raise
            raise BioLinkError(Errors.E046.format(where=f"{path}:{stream.line_no}",
                                                  reason=f"the parser failed ({err})")) from None
    finally:
        stream.close()


def _concept(frame, scopes: frozenset, prefixes: frozenset, path: Path) -> Optional[Concept]:
    if type(frame).__name__ != "TermFrame":
        return None
    term_id = str(frame.id).strip()
    ids, names, definition = [term_id], [], ""
    for clause in frame:
        kind = type(clause).__name__
        if kind == "IsObsoleteClause":
            if clause.obsolete:
                return None
        elif kind == "NameClause":
            names.insert(0, clause.name)
        elif kind == "SynonymClause":
            if str(clause.synonym.scope) in scopes:
                names.append(clause.synonym.desc)
        elif kind == "DefClause":
            definition = definition or str(clause.definition)
        elif kind == "AltIdClause":
            ids.append(str(clause.alt_id))
        elif kind == "XrefClause":
            xref = str(clause.xref.id)
            prefix = xref.partition(":")[0].upper()
            if prefix in prefixes and prefix in XREF_NAMESPACES:
                ids.append(normalize_xref(xref))
            elif prefix in prefixes:
                ids.append(xref)
    ids = [i for i in dict.fromkeys(i.strip() for i in ids) if i]
    for text in ids + names:
        if BAD_CHARS.search(text) or "|" in text and text in ids:
            raise BioLinkError(Errors.E046.format(
                where=f"{path} (term {term_id!r})",
                reason=f"{text!r} holds a control character, a BOM or (in an id) a '|'"))
    if not term_id or not any(n.strip() for n in names):
        return None
    return Concept(ids, names, definition=definition)
