"""PubTator corpus reader (NCBI-disease, BC5CDR).

Offsets are into `title + " " + abstract`. Mention lines are
PMID, start, end, text, type, ids[, composite part texts]; relation lines
(PMID, CID, chemical, disease) are skipped.
"""
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, List, Optional, Set

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
    # A control character would end up in a mention, a type or an id; a "\r" inside a
    # line (a file edited on an old Mac) would shift every offset: both are errors.
    for line_no, line in iter_lines(path, "PubTator corpus", control_allowed="\t"):
        if not line.strip():
            if doc is not None:
                n_mismatched += _finish(doc)
                first_mismatch = first_mismatch or _first(doc)
                if pmids is None or doc.pmid in pmids:
                    yield doc
                doc = None
            continue
        if "|" in line.split("\t", 1)[0]:
            pmid, kind, content = _title_line(path, line_no, line)
            if doc is None or doc.pmid != pmid:
                if doc is not None:
                    n_mismatched += _finish(doc)
                    first_mismatch = first_mismatch or _first(doc)
                    if pmids is None or doc.pmid in pmids:
                        yield doc
                doc = PubTatorDocument(pmid)
            if kind == "t":
                doc.title = content
            else:
                doc.abstract = content
            continue
        cols = line.split("\t")
        if len(cols) == 4 and not cols[1].strip().isdigit():  # relation: PMID CID a b
            continue
        if len(cols) < 6:
            raise BioLinkError(Errors.E301.format(
                path=path, line=line_no, text=line[:200],
                reason=f"{len(cols)} tab-separated fields, expected 6 or 7 (or 4 for a relation)"))
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
        n_mismatched += _finish(doc)
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


def _finish(doc: PubTatorDocument) -> int:
    text = doc.text
    for m in doc.mentions:
        if m.end > len(text) or text[m.start:m.end].strip() != m.text.strip():
            doc.offset_mismatches.append(m)
    return len(doc.offset_mismatches)


def _first(doc: PubTatorDocument) -> Optional[str]:
    if not doc.offset_mismatches:
        return None
    m = doc.offset_mismatches[0]
    return (f"line {m.line}: {m.text!r} at {m.start}-{m.end} of {doc.pmid}, text there "
            f"{doc.text[m.start:m.end]!r}")
