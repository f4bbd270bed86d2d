"""What every line-format dictionary reader shares: the line reader (_lines: UTF-8, gzip,
control characters refused, MAX_LINE_BYTES), what a bad line does (BadLines, on_bad_line
"error" or "skip") and the malformed-line error naming file:line (_malformed).

The readers (dictionaries.py, mesh.py, umls.py) and the format sniffer (sniff.py) import
these; nothing here imports them.
"""
import warnings
from pathlib import Path
from typing import Callable, Iterator, List, Optional

from ..dictionary import Concept
from ...errors import BioLinkError, Errors, Warnings
from ...io.files import find_control_character, iter_lines
from ...io.util import PathLike

# The longest dictionary line read (bytes): MEDIC lines with hundreds of synonyms stay
# under 100 KB; a longer "line" is a decompression bomb or not a dictionary (E950).
MAX_LINE_BYTES = 4 << 20

ON_BAD_LINE = ("error", "skip")
# Skipped lines named in the warning (W953); the rest are counted.
SHOWN_BAD_LINES = 5


class BadLines:
    """What a reader does with a bad line (malformed, or holding a control character):
    on_bad_line "error" (the default) raises at the first, naming file:line; "skip" leaves
    it out, counts it and keeps the first SHOWN_BAD_LINES for the warning (W953) that
    report() gives once the file is read."""

    def __init__(self, path: PathLike, on_bad_line: str = "error"):
        if on_bad_line not in ON_BAD_LINE:
            raise BioLinkError(Errors.E955.format(value=on_bad_line,
                                                  options=", ".join(ON_BAD_LINE)))
        self.path = path
        self.skipping = on_bad_line == "skip"
        self.count = 0
        self.examples: List[str] = []

    def record(self, line_no: int, reason: str) -> None:
        """Count one skipped line; the first few are kept with their reason."""
        self.count += 1
        if len(self.examples) < SHOWN_BAD_LINES:
            self.examples.append(f"line {line_no}: {reason[:160]}")

    def parse(self, parse_line: Callable, line_no: int, *args) -> Optional[Concept]:
        """parse_line(line_no, *args), or None (recorded) when it raises a BioLinkError
        and bad lines are skipped."""
        try:
            return parse_line(line_no, *args)
        except BioLinkError as err:
            if not self.skipping:
                raise
            # "[E001] path:line: malformed ... line: why. The line was: ..." -> the why.
            self.record(line_no, str(err).split(": ", 1)[-1].split(". The line was")[0])
            return None

    def report(self) -> None:
        """Warn (W953) with the count and the first skipped lines, if any were skipped."""
        if self.count:
            warnings.warn(Warnings.W953.format(n=self.count, path=self.path,
                                               examples="; ".join(self.examples)))


def _lines(path: Path, bad: Optional[BadLines] = None) -> Iterator[tuple]:
    """(line number, text) of the non-blank lines of a dictionary file (files.iter_lines:
    UTF-8, gzip, BOM dropped, errors with path:line). A control character other than a
    tab, or a byte-order mark inside a line, is an error: it would end up in an id or a
    name that no mention can match. With `bad` skipping, such a line is left out."""
    skipping = bad is not None and bad.skipping
    for line_no, line in iter_lines(path, "Dictionary file",
                                    control_allowed=None if skipping else "\t",
                                    max_line_bytes=MAX_LINE_BYTES):
        if skipping:
            found = find_control_character(line, allow="\t")
            if found is not None:
                bad.record(line_no, f"control character {found[1]} at column {found[0]}")
                continue
        if line.strip():
            yield line_no, line


def _malformed(path, line_no, fmt, reason, text) -> BioLinkError:
    return BioLinkError(Errors.E001.format(path=path, line=line_no, fmt=fmt, reason=reason,
                                           text=text[:200]))
