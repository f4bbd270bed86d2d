"""Small I/O helpers shared by readers, the CLI and serialization."""
import contextlib
import gzip
import io
import os
import shutil
import tempfile
from pathlib import Path
from typing import IO, Iterator, Union

PathLike = Union[str, Path]


def open_text(path: PathLike) -> IO[str]:
    """Open a UTF-8 text file, gunzipping transparently when it ends in .gz."""
    path = Path(path)
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf8", newline="")
    return open(path, encoding="utf8", newline="")


@contextlib.contextmanager
def atomic_directory(target: PathLike, *, force: bool = False) -> Iterator[Path]:
    """Yield a temporary directory beside `target` and move it into place on success.

    A crash or an exception while writing leaves `target` as it was, never half-written.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        yield tmp
        if target.exists():
            if not force and any(target.iterdir()):
                raise FileExistsError(target)
            backup = target.with_name(f".{target.name}.old")
            shutil.rmtree(backup, ignore_errors=True)
            os.replace(target, backup)
            os.replace(tmp, target)
            shutil.rmtree(backup, ignore_errors=True)
        else:
            os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


@contextlib.contextmanager
def atomic_file(target: PathLike, mode: str = "w") -> Iterator[IO]:
    """Write to a temporary file beside `target`, renamed over it only on success."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        encoding = None if "b" in mode else "utf8"
        with open(tmp_name, mode, encoding=encoding) as fileh:
            yield fileh
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


def write_arrays(path: PathLike, arrays: dict, meta: dict) -> None:
    """Save named numpy arrays as .npy files (loadable without pickle) plus meta.json."""
    import json

    import numpy

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    for name, array in arrays.items():
        numpy.save(path / f"{name}.npy", numpy.ascontiguousarray(array), allow_pickle=False)
    meta = dict(meta, arrays=sorted(arrays))
    (path / "meta.json").write_text(json.dumps(meta, indent=2), encoding="utf8")


def read_arrays(path: PathLike, *, mmap: tuple = ()) -> tuple:
    """Inverse of write_arrays: (meta, arrays). Arrays named in `mmap` are memory-mapped."""
    import json

    import numpy

    path = Path(path)
    meta = json.loads((path / "meta.json").read_text(encoding="utf8"))
    arrays = {
        name: numpy.load(path / f"{name}.npy", allow_pickle=False,
                         mmap_mode="r" if name in mmap else None)
        for name in meta["arrays"]
    }
    return meta, arrays
