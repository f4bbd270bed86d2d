"""Small I/O helpers shared by readers, the CLI and serialization.

Opening user files and writing outputs live in files.py; the names below are kept so
that `from spacy_biolink.io.util import open_text, atomic_file, ...` keeps working.
"""
import contextlib
import functools
import gc
from pathlib import Path

from .files import PathLike, atomic_directory, atomic_file, open_text  # noqa: F401


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


def read_arrays(path: PathLike, *, mmap=()) -> tuple:
    """Inverse of write_arrays: (meta, arrays). Arrays named in `mmap` (True: all of them)
    are memory-mapped, read-only."""
    import json

    import numpy

    path = Path(path)
    meta = json.loads((path / "meta.json").read_text(encoding="utf8"))
    arrays = {
        name: numpy.load(path / f"{name}.npy", allow_pickle=False,
                         mmap_mode="r" if mmap is True or name in mmap else None)
        for name in meta["arrays"]
    }
    return meta, arrays


@contextlib.contextmanager
def gc_paused():
    """Pause the cyclic garbage collector (as it was: a nested pause leaves it off) while
    millions of acyclic containers are built; reference counting still frees them."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# Below this many names a build's freed heap is small, and a full collection in a
# process holding a loaded pipeline costs more than the whole build (BENCHMARKS).
RELEASE_MEMORY_FROM = 1_000_000


def release_memory(n_names: int) -> None:
    """Collect cyclic garbage and hand the C heap's free pages back to the OS, between the
    steps of a build over `n_names` names; a no-op below RELEASE_MEMORY_FROM. numpy arrays
    under glibc's (growing) mmap threshold live on the heap, and the pages freed there
    stay in the process: the next step's arrays can reuse them, but its own peak then
    comes on top of them. glibc only (malloc_trim); a no-op for the heap elsewhere."""
    if n_names < RELEASE_MEMORY_FROM:
        return
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.lru_cache(maxsize=None)
def _malloc_trim():
    import ctypes

    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError, TypeError):  # no glibc (musl, macOS, Windows)
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim
