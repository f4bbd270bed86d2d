"""PubTator corpus reader (NCBI-disease, BC5CDR).

Offsets are into `title + " " + abstract`. Mention lines are
PMID, start, end, text, type, ids[, composite part texts]; relation lines
(PMID, CID, chemical, disease) are skipped.
"""
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Set, Tuple

from ..errors import BioLinkError, Errors, Warnings
from ..kb.ids import split_gold_ids
from ..io.files import iter_lines
from ..io.util import PathLike


@dataclass
class PubTatorMention:
    start: int
    end: int
    text: str
    type: str
    raw_ids: str
    line: int
    part_texts: List[str] = field(default_factory=list)

    @property
    def ids(self) -> List[str]:
        """Normalized gold ids; empty for CUI-less mentions (`-1`)."""
        return split_gold_ids(self.raw_ids)


@dataclass
class PubTatorDocument:
    pmid: str
    title: str = ""
    abstract: str = ""
    mentions: List[PubTatorMention] = field(default_factory=list)
    offset_mismatches: List[PubTatorMention] = field(default_factory=list)
    # The line the document starts at (its first title or abstract line), for messages.
    line: int = 0

    @property
    def text(self) -> str:
        """Title and abstract joined by one space, the text PubTator offsets refer to."""
        return f"{self.title} {self.abstract}" if self.abstract else self.title


def read_pubtator(path: PathLike, *, types: Optional[Set[str]] = None,
                  pmids: Optional[Set[str]] = None) -> Iterator[PubTatorDocument]:
    """Yield documents in file order; `types`/`pmids` keep only those mentions/documents."""
    path = Path(path)
    if not path.exists():
        raise BioLinkError(Errors.E302.format(path=path))
    doc: Optional[PubTatorDocument] = None
    n_mismatched = 0
    first_mismatch = None
    # PMID -> (first line, fingerprint) of every document read: a PMID seen twice is an
    # error (E311), or a warning (W311) when both copies are the same.
    seen: Dict[str, Tuple[int, int]] = {}
    # A control character would end up in a mention, a type or an id; a "\r" inside a
    # line (a file edited on an old Mac) would shift every offset: both are errors.
    for line_no, line in iter_lines(path, "PubTator corpus", control_allowed="\t"):
        if not line.strip():
            if doc is not None:
                n_mismatched += _finish(path, doc, seen)
                first_mismatch = first_mismatch or _first(doc)
                if pmids is None or doc.pmid in pmids:
                    yield doc
                doc = None
            continue
        if "|" in line.split("\t", 1)[0]:
            pmid, kind, content = _title_line(path, line_no, line)
            if doc is None or doc.pmid != pmid:
                if doc is not None:
                    n_mismatched += _finish(path, doc, seen)
                    first_mismatch = first_mismatch or _first(doc)
                    if pmids is None or doc.pmid in pmids:
                        yield doc
                if kind == "a":
                    raise BioLinkError(Errors.E312.format(path=path, line=line_no, pmid=pmid))
                doc = PubTatorDocument(pmid, line=line_no)
                doc_kinds = {}
            if kind in doc_kinds:  # a second title (or abstract) line in one block
                raise BioLinkError(Errors.E311.format(path=path, pmid=pmid,
                                                      first=doc_kinds[kind], second=line_no))
            doc_kinds[kind] = line_no
            if kind == "t":
                doc.title = content
            else:
                doc.abstract = content
            continue
        cols = line.split("\t")
        # relation: PMID CID a b, or BioRED's PMID type a b Novel|No
        if len(cols) in (4, 5) and not cols[1].strip().isdigit():
            continue
        if len(cols) == 5:
            # GNormPlus's and NLM-Gene's FamilyName/DomainMotif mentions carry no id column
            cols.append("")
        if len(cols) < 6:
            raise BioLinkError(Errors.E301.format(
                path=path, line=line_no, text=line[:200],
                reason=f"{len(cols)} tab-separated fields, expected 6 or 7 (or 4 or 5 for a relation)"))
        if doc is None or cols[0] != doc.pmid:
            raise BioLinkError(Errors.E301.format(
                path=path, line=line_no, text=line[:200],
                reason=f"mention of document {cols[0]} outside that document's block"))
        try:
            start, end = int(cols[1]), int(cols[2])
        except ValueError:
            raise BioLinkError(Errors.E301.format(
                path=path, line=line_no, text=line[:200],
                reason="start and end offsets must be integers")) from None
        if not 0 <= start < end:
            raise BioLinkError(Errors.E301.format(
                path=path, line=line_no, text=line[:200],
                reason=f"offsets {start}-{end} are not a non-empty range"))
        if types is not None and cols[4] not in types:
            continue
        parts = [p for p in cols[6].split("|")] if len(cols) > 6 and cols[6].strip() else []
        doc.mentions.append(PubTatorMention(start, end, cols[3], cols[4], cols[5], line_no, parts))
    if doc is not None:
        n_mismatched += _finish(path, doc, seen)
        first_mismatch = first_mismatch or _first(doc)
        if pmids is None or doc.pmid in pmids:
            yield doc
    if n_mismatched:
        warnings.warn(Warnings.W002.format(n=n_mismatched, path=path, example=first_mismatch))


def _title_line(path, line_no, line):
    parts = line.split("|", 2)
    if len(parts) != 3 or parts[1] not in ("t", "a"):
        raise BioLinkError(Errors.E301.format(
            path=path, line=line_no, text=line[:200], reason="expected PMID|t|title or PMID|a|abstract"))
    return parts


def _finish(path: Path, doc: PubTatorDocument, seen: Dict[str, Tuple[int, int]]) -> int:
    """Check a whole document: a PMID seen before (E311, or W311 for an identical copy), a
    mention across the title/abstract boundary (E313); its mentions that do not match the
    text at their offsets go to doc.offset_mismatches (their count is returned)."""
    fingerprint = hash((doc.title, doc.abstract, tuple(
        (m.start, m.end, m.text, m.type, m.raw_ids, tuple(m.part_texts)) for m in doc.mentions)))
    if doc.pmid in seen:
        first, first_fingerprint = seen[doc.pmid]
        if first_fingerprint != fingerprint:
            raise BioLinkError(Errors.E311.format(path=path, pmid=doc.pmid, first=first,
                                                  second=doc.line))
        warnings.warn(Warnings.W311.format(path=path, pmid=doc.pmid, first=first,
                                           second=doc.line))
    else:
        seen[doc.pmid] = (doc.line, fingerprint)
    text = doc.text
    boundary = len(doc.title)  # the space that joins title and abstract
    for m in doc.mentions:
        if doc.abstract and m.start <= boundary < m.end:
            raise BioLinkError(Errors.E313.format(
                path=path, line=m.line, mention=m.text, start=m.start, end=m.end,
                pmid=doc.pmid, boundary=boundary, found=text[m.start:m.end][:200]))
        if m.end > len(text) or text[m.start:m.end].strip() != m.text.strip():
            doc.offset_mismatches.append(m)
    return len(doc.offset_mismatches)


def _first(doc: PubTatorDocument) -> Optional[str]:
    if not doc.offset_mismatches:
        return None
    m = doc.offset_mismatches[0]
    return (f"line {m.line}: {m.text!r} at {m.start}-{m.end} of {doc.pmid}, text there "
            f"{doc.text[m.start:m.end]!r}")
