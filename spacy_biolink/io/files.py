"""The one place that opens user files for reading and writes outputs.

Reading (every reader and command goes through here):
- gzip is recognised by its magic bytes, not by the name; a file named .gz that is not
  gzip, and a truncated or corrupt .gz, are errors that name the file.
- gzip input may inflate to at most MAX_GZIP_RATIO (100) times the compressed bytes
  read, checked as it streams (E026; the environment variable SPACY_BIOLINK_MAX_GZIP_RATIO
  raises it): a decompression bomb fails in seconds instead of being read for minutes.
- text is UTF-8, and a bad byte is reported as path:line with what to do; a byte-order
  mark at the start of a line is dropped (it is never part of an id or a name); readers
  can have control characters rejected with path:line (iter_lines' control_allowed).
- a missing file, a directory where a file is expected, or an unreadable file are
  errors that name the path, never a raw OSError.
Lines are streamed: a dictionary of 10M lines is never held whole.

Writing: atomic_file / atomic_directory write beside the target and rename into place,
with the permissions a plain open() would give (0o666 / 0o777 less the umask);
save_pipeline saves a whole spaCy pipeline that way (replaced_outputs names what was
swapped in, for a Ctrl-C after it). check_output_path checks an output location (a
read-only file is replaced only with force), and check_not_an_input that it is none of
the command's inputs, before any work starts.
"""
import contextlib
import ctypes
import errno
import functools
import gzip
import json
import logging
import os
import re
import shutil
import socket
import sys
import tempfile
import zlib
from pathlib import Path
from typing import IO, Any, Iterable, Iterator, Optional, Tuple, Union

from ..errors import BioLinkError, Errors

PathLike = Union[str, Path]
logger = logging.getLogger(__name__)

GZIP_MAGIC = b"\x1f\x8b"
BOM = "\ufeff"
_BOM_BYTES = BOM.encode("utf8")
# What a damaged gzip stream raises while it is read.
_GZIP_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile)
# A decompression bomb (1 MiB of gzip inflating to 1 GiB of blank lines) would keep a
# reader busy for minutes: gzip input may inflate to at most MAX_GZIP_RATIO times the
# compressed bytes read so far (once past _GZIP_RATIO_FLOOR), checked as it streams
# (E026). Text compresses 3-20x; a user can raise the cap with this environment variable.
MAX_GZIP_RATIO_ENV = "SPACY_BIOLINK_MAX_GZIP_RATIO"
MAX_GZIP_RATIO = 100
_GZIP_RATIO_FLOOR = 1 << 20


# ---------------------------------------------------------------- reading

def check_input_file(path: PathLike, what: str = "Input file") -> Path:
    """`path` as a Path, or a BioLinkError if it is missing, a directory or unreadable."""
    path = Path(path)
    if not path.exists():
        raise BioLinkError(Errors.E010.format(what=what, path=path))
    if path.is_dir():
        raise BioLinkError(Errors.E011.format(what=what.lower(), path=path))
    if not os.access(path, os.R_OK):
        raise BioLinkError(Errors.E012.format(path=path, reason="permission denied"))
    return path


@contextlib.contextmanager
def open_binary(path: PathLike, what: str = "Input file") -> Iterator[IO[bytes]]:
    """A binary reader of `path`, gunzipped when it starts with gzip's magic bytes.

    Errors of a damaged gzip stream raised while the caller reads are turned into a
    BioLinkError naming the file.
    """
    path = check_input_file(path, what)
    try:
        raw = open(path, "rb")
    except OSError as err:
        raise BioLinkError(Errors.E012.format(path=path, reason=err.strerror or err)) from None
    try:
        start = raw.peek(2)[:2]
        if start == GZIP_MAGIC:
            stream: IO[bytes] = _BoundedGunzip(path, raw, max_gzip_ratio())  # type: ignore
        elif path.suffix.lower() == ".gz":
            raise BioLinkError(Errors.E014.format(path=path, start=raw.peek(16)[:16]))
        else:
            stream = raw
        try:
            yield stream
        except _GZIP_ERRORS as err:
            raise _gzip_error(path, err) from None
        except OSError as err:
            raise BioLinkError(Errors.E012.format(path=path, reason=err.strerror or err)) from None
    finally:
        raw.close()


def max_gzip_ratio() -> int:
    """The cap on how many times its compressed size gzip input may inflate to:
    MAX_GZIP_RATIO, or the environment variable MAX_GZIP_RATIO_ENV (E027 if not a whole
    number >= 1)."""
    value = os.environ.get(MAX_GZIP_RATIO_ENV, "").strip()
    if not value:
        return MAX_GZIP_RATIO
    try:
        ratio = int(value)
    except ValueError:
        ratio = 0
    if ratio < 1:
        raise BioLinkError(Errors.E027.format(env=MAX_GZIP_RATIO_ENV, value=value,
                                              default=MAX_GZIP_RATIO))
    return ratio


class _BoundedGunzip:
    """A gunzipping reader of `raw` that raises E026 as soon as what it gave out exceeds
    `ratio` times the compressed bytes read (past _GZIP_RATIO_FLOOR)."""

    def __init__(self, path: Path, raw: IO[bytes], ratio: int):
        self.path = path
        self.raw = raw
        self.ratio = ratio
        self.inflated = 0
        self.gzip = gzip.GzipFile(fileobj=raw, mode="rb")

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:  # read all, a block at a time, checking each
            return b"".join(iter(lambda: self.read(_BLOCK_SIZE), b""))
        data = self.gzip.read(size)
        self.inflated += len(data)
        if self.inflated > _GZIP_RATIO_FLOOR:
            compressed = max(self.raw.tell(), 1)
            if self.inflated > self.ratio * compressed:
                raise BioLinkError(Errors.E026.format(
                    path=self.path, ratio=self.ratio, inflated=_mib(self.inflated),
                    compressed=f"{compressed} bytes", env=MAX_GZIP_RATIO_ENV,
                    higher=self.ratio * 10))
        return data

    def close(self) -> None:
        self.gzip.close()


def _gzip_error(path: Path, err: Exception, line: Optional[int] = None) -> BioLinkError:
    reason = str(err) or type(err).__name__
    where = f", after line {line}" if line else ""
    return BioLinkError(Errors.E015.format(path=path, reason=reason, where=where))


def decode_line(path: PathLike, line_no: int, data: bytes) -> str:
    """One line's bytes as text, or an error naming path:line and the bad byte."""
    try:
        return data.decode("utf8")
    except UnicodeDecodeError as err:
        # The column counts characters, as an editor shows them.
        column = len(data[:err.start].decode("utf8", errors="replace")) + 1
        raise BioLinkError(Errors.E013.format(path=path, line=line_no, byte=data[err.start],
                                              column=column)) from None


# Lines are decoded and split a block at a time (in C): per-line decoding in Python made
# reading 1.8x slower than text mode (benchmarks/exploration/bench_file_reading.py).
_BLOCK_SIZE = 1 << 20
# The longest line iter_lines accepts (bytes, after gunzipping): a 1 MB gzip file can
# inflate to a 1 GB line without a newline, which would be built whole in memory. No
# real line of a dictionary, corpus or document list comes near it.
MAX_LINE_BYTES = 64 << 20


def iter_lines(path: PathLike, what: str = "Input file", *,
               control_allowed: Optional[str] = None,
               max_line_bytes: Optional[int] = None) -> Iterator[Tuple[int, str]]:
    """(line number from 1, text) for every line of `path`, without its line ending.

    Lines end at "\\n" (or "\\r\\n") only, so a lone "\\r" stays in its line instead of
    silently splitting a record in two. A byte-order mark at the start of a line is
    dropped. With `control_allowed` (e.g. "\\t"), any other control character or
    byte-order mark in a line is an error (E016) naming path:line and column.
    The file is read in blocks of 1 MiB; a line longer than `max_line_bytes`
    (MAX_LINE_BYTES, 64 MiB, when None) is an error (E950) naming path:line, raised
    before more of it is read.
    """
    path = Path(path)
    pattern = _control_pattern(control_allowed + "\n") if control_allowed is not None else None
    limit = MAX_LINE_BYTES if max_line_bytes is None else max_line_bytes
    line_no = 0
    with open_binary(path, what) as stream:
        try:
            pending: list = []  # the start of a line whose end is not read yet
            pending_size = 0
            while True:
                block = stream.read(_BLOCK_SIZE)
                if block:
                    cut = block.rfind(b"\n") + 1
                    first_end = block.find(b"\n") if cut else len(block)
                    if pending_size + first_end > limit:
                        raise BioLinkError(Errors.E950.format(
                            path=path, line=line_no + 1, what=what[:1].lower() + what[1:],
                            limit=_mib(limit)))
                    if not cut:  # a long line: read on (joined once, not copied per block)
                        pending.append(block)
                        pending_size += len(block)
                        continue
                    data = b"".join(pending + [block[:cut]])
                    pending = [block[cut:]]
                    pending_size = len(block) - cut
                else:
                    data, pending = b"".join(pending), []
                    if not data:
                        break
                text = _decode_block(path, line_no, data)
                if text.startswith(BOM):  # every block starts a line
                    text = text[1:]
                if "\r" in text:
                    text = text.replace("\r\n", "\n")
                if "\n" + BOM in text:
                    text = text.replace("\n" + BOM, "\n")
                if pattern is not None and _may_hold_control(data, text, control_allowed):
                    found = pattern.search(text)
                    if found is not None:
                        raise _control_error(path, what, line_no, text, found.start())
                lines = text.split("\n")
                if text.endswith("\n"):
                    lines.pop()
                for line in lines:
                    line_no += 1
                    yield line_no, line
                if not block:
                    break
        except _GZIP_ERRORS as err:
            raise _gzip_error(path, err, line_no) from None


def _mib(size: int) -> str:
    return f"{size / (1 << 20):g} MiB"


@functools.lru_cache(maxsize=16)
def _harmless_bytes(allowed: str) -> bytes:
    """Every byte value but the one-byte control characters not in `allowed`."""
    rejected = {*range(0x20), 0x7F} - {ord(c) for c in allowed + "\n\r" if ord(c) < 0x80}
    return bytes(b for b in range(256) if b not in rejected)


_C1_BYTES = re.compile(rb"\xc2[\x80-\x9f]")


def _may_hold_control(data: bytes, text: str, allowed: str) -> bool:
    """A fast screen (bytes.translate runs ~10x faster than a regex over the text): False
    when the block surely holds no rejected character; True sends it to the regex."""
    if data.translate(None, _harmless_bytes(allowed)):
        return True  # a C0 control character or DEL
    if b"\r" in data and "\r" in text:  # what is left after "\r\n" became "\n"
        return True
    if b"\xc2" in data and _C1_BYTES.search(data):
        return True  # U+0080-U+009F
    return BOM in text


def _decode_block(path: Path, line_no: int, data: bytes) -> str:
    try:
        return data.decode("utf8")
    except UnicodeDecodeError as err:
        start = data.rfind(b"\n", 0, err.start) + 1
        end = data.find(b"\n", err.start)
        bad_line = line_no + data.count(b"\n", 0, err.start) + 1
        decode_line(path, bad_line, data[start:end if end >= 0 else len(data)])
        raise  # decode_line raised; not reached


def _control_error(path: Path, what: str, line_no: int, text: str, index: int) -> BioLinkError:
    line_start = text.rfind("\n", 0, index) + 1
    return BioLinkError(Errors.E016.format(
        path=path, line=line_no + text.count("\n", 0, index) + 1, column=index - line_start + 1,
        char=f"U+{ord(text[index]):04X}", what=f"a line of the {what[:1].lower() + what[1:]}"))


def read_bytes(path: PathLike, what: str = "Input file") -> bytes:
    """The whole (gunzipped) content of `path`."""
    path = Path(path)
    with open_binary(path, what) as stream:
        try:
            return stream.read()
        except _GZIP_ERRORS as err:
            raise _gzip_error(path, err) from None


def read_text(path: PathLike, what: str = "Input file") -> str:
    """The whole text of `path` (UTF-8, leading byte-order mark dropped)."""
    path = Path(path)
    data = read_bytes(path, what)
    if data.startswith(_BOM_BYTES):
        data = data[len(_BOM_BYTES):]
    try:
        return data.decode("utf8")
    except UnicodeDecodeError as err:
        line_start = data.rfind(b"\n", 0, err.start) + 1
        line_end = data.find(b"\n", err.start)
        line = data[line_start:line_end if line_end >= 0 else len(data)]
        decode_line(path, data.count(b"\n", 0, err.start) + 1, line)
        raise  # decode_line raised; this is never reached


def read_json(path: PathLike, what: str = "JSON file", expected: str = "a JSON value",
              type: Optional[type] = None) -> Any:
    """The parsed content of a JSON file; `type` (e.g. dict) checks the top-level value."""
    path = Path(path)
    text = read_text(path, what)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise BioLinkError(Errors.E017.format(path=path, line=err.lineno, column=err.colno,
                                              reason=err.msg, expected=expected)) from None
    if type is not None and not isinstance(value, type):
        raise BioLinkError(Errors.E018.format(path=path, found=_json_kind(value),
                                              expected=expected))
    return value


def json_text(value: Any, *, indent: Optional[int] = None) -> str:
    """`value` as JSON text with every float written in full, so that read_json gives the
    same numbers back (srsly's writer keeps about ten significant digits: a temperature of
    1.1051709181828183 came back as 1.1051709182, 1e-300 as 0.0). numpy scalars and
    arrays are written as their Python values."""
    return json.dumps(value, indent=indent, default=_plain_json_value)


def write_json(path: PathLike, value: Any, *, indent: Optional[int] = None) -> None:
    """Write `value` to `path` as json_text does. Not atomic by itself: call it inside
    atomic_directory, or write json_text through atomic_file."""
    Path(path).write_text(json_text(value, indent=indent), encoding="utf8")


def _plain_json_value(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def read_config(path: PathLike, *, interpolate: bool = False):
    """A thinc Config read from a .cfg file (overrides are applied by the caller, after
    config_overrides.check_overrides). spaCy's load_config would raise a bare OSError,
    UnicodeDecodeError or configparser error; these become errors naming the file."""
    import configparser

    from confection import ConfigValidationError
    from thinc.api import Config

    path = Path(path)
    text = read_text(path, "Config file")
    try:
        return Config().from_str(text, interpolate=interpolate)
    except configparser.Error as err:
        reason = str(err).replace("'<string>'", str(path))
        raise BioLinkError(Errors.E019.format(path=path, reason=reason)) from None
    except ConfigValidationError as err:
        raise BioLinkError(Errors.E019.format(path=path, reason=" ".join(str(err).split()))) from None


def _json_kind(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean",
            type(None): "null"}.get(value.__class__, "number")


# Unicode category Cc is exactly U+0000-U+001F and U+007F-U+009F; one regex search per
# line runs in C (a per-character unicodedata loop made 10M-line dictionaries minutes slower).
@functools.lru_cache(maxsize=16)
def _control_pattern(allow: str) -> "re.Pattern":
    chars = "".join(f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"
                    for c in (*range(0x00, 0x20), *range(0x7F, 0xA0), 0xFEFF)
                    if chr(c) not in allow)
    return re.compile(f"[{chars}]")


def find_control_character(text: str, allow: str = "\t") -> Optional[Tuple[int, str]]:
    """(column from 1, "U+XXXX") of the first control character (Unicode category Cc) or
    byte-order mark in `text` that is not in `allow`, or None."""
    found = _control_pattern(allow).search(text)
    if found is None:
        return None
    return found.start() + 1, f"U+{ord(found.group()):04X}"


def check_no_control_characters(path: PathLike, line_no: int, text: str, what: str,
                                allow: str = "") -> None:
    """Raise E016 (path:line) if `text` holds a control character or byte-order mark."""
    found = find_control_character(text, allow)
    if found is not None:
        column, char = found
        raise BioLinkError(Errors.E016.format(path=path, line=line_no, char=char,
                                              column=column, what=what))


class TextLines:
    """The lines of a text file ("\\n"-terminated), for code written against a file object
    (`with open_text(p) as f: for line in f`, f.read(), f.readline()). Decoding, BOM,
    gzip and errors are iter_lines'; a missing or unreadable file fails at once."""

    def __init__(self, path: PathLike, what: str = "Input file"):
        self.path = check_input_file(path, what)
        self._lines = iter_lines(self.path, what)

    def __enter__(self) -> "TextLines":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __iter__(self) -> Iterator[str]:
        for _, text in self._lines:
            yield text + "\n"

    def readline(self) -> str:
        """The next line, or "" at the end, like a text file's readline."""
        return next(iter(self), "")

    def read(self) -> str:
        """The rest of the text, like a text file's read."""
        return "".join(self)

    def close(self) -> None:
        """Close the underlying file."""
        self._lines.close()


def open_text(path: PathLike, what: str = "Input file") -> TextLines:
    """Open a text file (UTF-8, plain or gzip) for reading line by line; see TextLines."""
    return TextLines(path, what)


# ---------------------------------------------------------------- writing

def current_umask() -> int:
    """The process umask, read without changing it where /proc allows."""
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/status", encoding="ascii") as fileh:
            for line in fileh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _first_existing(path: Path) -> Path:
    path = Path(os.path.abspath(path))
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_output_path(path: PathLike, *, kind: str = "file", what: str = "the output",
                      force: bool = False, example: str = "out.json",
                      replaced: bool = True, force_option: bool = False) -> Path:
    """Check, before any work starts, that `path` can be written as a `kind` ("file" or
    "dir"): not a directory where a file goes (or the reverse), no file in its way up the
    tree, a writable parent, and for a non-empty directory, `force` (E403).

    An existing read-only file (no write bit in its mode, checked on the mode bits, as
    root may write anyway) is replaced only with `force` (E035): the message offers
    --force where the command has one (`force_option`).

    A directory that will be `replaced` (swapped in by renames, or emptied) may not be the
    current directory or one above it (E032)."""
    path = Path(path)
    if kind == "file" and path.is_dir():
        raise BioLinkError(Errors.E021.format(path=path, what=what, example=example))
    if kind == "dir" and path.exists() and not path.is_dir():
        raise BioLinkError(Errors.E022.format(path=path, what=what))
    if kind == "file" and not force and path.is_file() and _read_only(path):
        how = (f"make it writable (chmod u+w {path}) or remove it"
               + (", or pass --force to replace it anyway" if force_option else ""))
        raise BioLinkError(Errors.E035.format(path=path, what=what, how=how,
                                              mode=oct(path.stat().st_mode & 0o777)[2:]))
    if kind == "dir" and replaced and _is_within(Path.cwd(), path):
        # The directory is swapped out by renames: the shell would be left in a deleted one.
        raise BioLinkError(Errors.E032.format(path=path, what=what, cwd=Path.cwd()))
    if kind == "dir" and path.is_dir() and not force and any(path.iterdir()):
        raise BioLinkError(Errors.E403.format(path=path))
    # The output is written beside its target, then renamed: the parent must be writable.
    parent = Path(os.path.abspath(path)).parent
    existing = _first_existing(parent)
    if not existing.is_dir():
        raise BioLinkError(Errors.E023.format(path=path, parent=existing))
    if not os.access(existing, os.W_OK | os.X_OK):
        raise BioLinkError(Errors.E020.format(path=path, reason="permission denied",
                                              where=existing))
    return path


def _read_only(path: Path) -> bool:
    """True when `path` has no write bit for its owner, or this process may not write it."""
    import stat

    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not mode & stat.S_IWUSR or not os.access(path, os.W_OK)


def _real(path: PathLike) -> str:
    return os.path.realpath(os.path.abspath(path))


def _is_within(path: PathLike, directory: PathLike) -> bool:
    """True when `path` is `directory` or lies under it, symlinks resolved."""
    path, directory = _real(path), _real(directory)
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def same_file(a: PathLike, b: PathLike) -> bool:
    """True when `a` and `b` name the same file or directory: the same path once resolved,
    or (both existing) the same inode, so a hard link or a symlink counts too."""
    if _real(a) == _real(b):
        return True
    with contextlib.suppress(OSError):
        return os.path.samefile(a, b)
    return False


def check_not_an_input(output: PathLike, inputs: Iterable[Tuple[str, Optional[PathLike]]], *,
                       what: str = "the output", replaces_dir: bool = False) -> None:
    """Refuse, before any work, an output that would destroy an input of the same command.

    inputs: (option, path) pairs, e.g. ("--dictionary", "data/dict.txt"); None paths and
        paths that do not exist are skipped (nothing there to lose).
    replaces_dir: the output is a directory that will be emptied or swapped out (--force):
        then no input may lie inside it either.

    E030: the output is an input (the same path, a symlink or a hard link to it), or an
    existing file inside an input directory (`-o MODEL/config.cfg`). E031: an input lies
    inside the directory that --force would replace.
    """
    output = Path(output)
    for option, given in inputs:
        if given is None or not os.path.lexists(given):
            continue
        given = Path(given)
        if same_file(output, given) or (
                os.path.lexists(output) and given.is_dir() and _is_within(output, given)):
            raise BioLinkError(Errors.E030.format(output=output, what=what, option=option,
                                                  input=given))
        if replaces_dir and output.is_dir() and _is_within(given, output):
            raise BioLinkError(Errors.E031.format(output=output, what=what, option=option,
                                                  input=given))


def check_distinct_outputs(outputs: Iterable[Tuple[str, Optional[PathLike]]]) -> None:
    """E033 when two outputs of one command are the same file (the second would replace
    the first)."""
    seen: list = []
    for option, path in outputs:
        if path is None:
            continue
        for other_option, other in seen:
            if same_file(path, other):
                raise BioLinkError(Errors.E033.format(path=path, first=other_option,
                                                      second=option))
        seen.append((option, path))


def _temp_prefix(target: Path) -> str:
    """`.NAME.HOST-PID.`: who wrote a temporary file, so that a later run can tell the
    leftovers of a killed run (a dead PID on this host) from a run still writing."""
    host = re.sub(r"[^A-Za-z0-9_-]", "_", socket.gethostname())
    return f".{target.name}.{host}-{os.getpid()}."


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. EPERM: another user's live process
        return True
    return True


def clean_leftovers(target: Path) -> None:
    """Remove what killed runs left beside `target` (their temporary files), and put back
    the old `target` if a run was killed between moving it aside and moving in the new
    one. Leftovers of live processes and of other hosts are left alone."""
    host = re.sub(r"[^A-Za-z0-9_-]", "_", socket.gethostname())
    pattern = re.compile(rf"\.{re.escape(target.name)}\.{re.escape(host)}-(\d+)\.[^.]+\.tmp")
    with contextlib.suppress(OSError):
        for path in target.parent.iterdir():
            found = pattern.fullmatch(path.name)
            if found and not _alive(int(found.group(1))):
                logger.warning("Removing %s, left by an interrupted run", path)
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink()
    backup = target.with_name(f".{target.name}.old")
    if backup.is_dir() and not target.exists():
        logger.warning("Restoring %s from %s, moved aside by an interrupted run", target, backup)
        with contextlib.suppress(OSError):
            os.replace(backup, target)


def make_dir(directory: PathLike, *, for_path: Optional[PathLike] = None) -> Path:
    """Create `directory` and its missing parents. Where that fails, a BioLinkError naming
    `for_path` (default: the directory): E023 for a file in the way, E020 otherwise (a
    read-only or pseudo file system that os.access still calls writable for root)."""
    directory = Path(directory)
    named = directory if for_path is None else Path(for_path)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise BioLinkError(Errors.E023.format(path=named,
                                              parent=_first_existing(directory))) from None
    except OSError as err:
        raise BioLinkError(Errors.E020.format(path=named, reason=err.strerror or err,
                                              where=_first_existing(directory))) from None
    return directory


def _make_parent(target: Path) -> None:
    make_dir(target.parent, for_path=target)


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


@functools.lru_cache(maxsize=1)
def _renameat2():
    """libc's renameat2, or None where there is none (not Linux, or glibc < 2.28)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        func = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    func.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    func.restype = ctypes.c_int
    return func


def exchange_paths(a: PathLike, b: PathLike) -> bool:
    """Swap the two existing paths `a` and `b` in one atomic step (Linux renameat2 with
    RENAME_EXCHANGE): at every moment each name holds one whole directory, the old or
    the new. False, with nothing changed, where the system or the file system cannot (then
    the caller falls back to two renames)."""
    func = _renameat2()
    if func is None:
        return False
    # Audit hooks see it as the rename it is (os.rename raises the same event).
    sys.audit("os.rename", a, b, -1, -1)
    if func(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


# The outputs atomic_directory / atomic_file have moved into place in this process since
# forget_replaced(): a Ctrl-C after a swap must not be reported as "nothing changed"
# (cli/app.py's E038 names them).
_REPLACED: list = []


def replaced_outputs() -> list:
    """The outputs moved into place since the last forget_replaced(), in order."""
    return list(_REPLACED)


def forget_replaced() -> None:
    """Start a new command: no output of it has been moved into place yet."""
    _REPLACED.clear()


def save_pipeline(nlp: Any, path: PathLike, *, force: bool = True) -> Path:
    """Save a whole spaCy pipeline to `path` so that a kill at any moment leaves the
    old pipeline or the new one, each loadable, never a mix.

    `nlp.to_disk(path)` over an existing pipeline is not atomic: spaCy rewrites
    config.cfg, meta.json, tokenizer and vocab/ in place, and a kill in between leaves a
    model that no longer loads (a 0-byte tokenizer). Here the pipeline is written to a
    temporary directory beside `path` and swapped in: in one atomic exchange on Linux,
    else by two renames whose one gap (the old pipeline moved to .NAME.old, the new one
    not yet in) is repaired by the next save and read by load_linker_pipeline. What a
    killed save left beside `path` is removed by the next one.

    force: replace a non-empty `path` (E403 without it). Returns `path`.
    """
    path = Path(path)
    with atomic_directory(path, force=force) as tmp:
        nlp.to_disk(tmp)
    return path


@contextlib.contextmanager
def atomic_directory(target: PathLike, *, force: bool = False) -> Iterator[Path]:
    """Yield a temporary directory beside `target` and move it into place on success.

    A crash or an exception while writing leaves `target` as it was, never half-written.
    The directory gets 0o777 less the umask, as os.mkdir would give it (mkdtemp's 0o700
    would hide a shared model from its group).
    """
    target = Path(os.path.abspath(target))  # "." has no name to put a temp dir beside
    if target.exists() and not target.is_dir():
        raise BioLinkError(Errors.E022.format(path=target, what="this output"))
    _make_parent(target)
    clean_leftovers(target)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=_temp_prefix(target), suffix=".tmp", dir=target.parent))
    except OSError as err:
        raise BioLinkError(Errors.E020.format(path=target, reason=err.strerror or err,
                                              where=target.parent)) from None
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~current_umask())
        if target.exists():
            if not force and any(target.iterdir()):
                raise BioLinkError(Errors.E403.format(path=target))
            if exchange_paths(target, tmp):
                _REPLACED.append(target)  # before the old one is removed: that takes time
                shutil.rmtree(tmp, ignore_errors=True)  # the old target, swapped out
            else:
                # Two renames: a kill between them leaves the old target as .NAME.old,
                # which clean_leftovers and load_linker_pipeline put back or read.
                backup = target.with_name(f".{target.name}.old")
                shutil.rmtree(backup, ignore_errors=True)
                os.replace(target, backup)
                os.replace(tmp, target)
                _REPLACED.append(target)
                shutil.rmtree(backup, ignore_errors=True)
        else:
            os.replace(tmp, target)
            _REPLACED.append(target)
    except BaseException as err:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(err, OSError) and not isinstance(err, BioLinkError):
            raise BioLinkError(Errors.E024.format(path=target, reason=err.strerror or err)) from err
        raise


@contextlib.contextmanager
def atomic_file(target: PathLike, mode: str = "w") -> Iterator[IO]:
    """Write to a temporary file beside `target`, renamed over it only on success.

    The file gets 0o666 less the umask, as open() would give it (mkstemp's 0o600 would
    make every output private).
    """
    target = Path(target)
    if target.is_dir():
        raise BioLinkError(Errors.E021.format(path=target, what="this output",
                                              example=target.name or "out"))
    _make_parent(target)
    clean_leftovers(target)
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=_temp_prefix(target), suffix=".tmp",
                                        dir=target.parent)
    except OSError as err:
        raise BioLinkError(Errors.E020.format(path=target, reason=err.strerror or err,
                                              where=target.parent)) from None
    os.close(fd)
    try:
        encoding = None if "b" in mode else "utf8"
        with open(tmp_name, mode, encoding=encoding) as fileh:
            yield fileh
        os.chmod(tmp_name, 0o666 & ~current_umask())
        os.replace(tmp_name, target)
        _REPLACED.append(target)
    except BaseException as err:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        if isinstance(err, OSError):
            raise BioLinkError(Errors.E024.format(path=target, reason=err.strerror or err)) from err
        raise
