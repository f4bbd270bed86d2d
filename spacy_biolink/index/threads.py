"""How many threads a search splits one batch of queries over, and the BLAS and OpenMP
threads linking lets the libraries it calls take.

The kernels release the GIL, so a batch split over threads runs in parallel. The config
value 0 means "one per core", except in a child process (`nlp.pipe(n_process=N)`, a
multiprocessing pool), whose siblings already take the cores.
"""
import multiprocessing
import os
import threading
from contextlib import contextmanager
from typing import Callable, List, Optional, TypeVar

T = TypeVar("T")
# Fewer rows than this per thread cost more in thread start-up than they save.
MIN_ROWS_PER_THREAD = 32


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity where the OS tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


def search_threads(n_threads: int) -> int:
    """The threads a search splits its queries over for the config value `n_threads`:
    itself where > 0; for 0, one per core in a main process and 1 in a child process
    (`nlp.pipe(n_process=N)`, a multiprocessing pool), whose siblings already take the
    cores. Resolved at each search, so a pipeline forked into workers follows the rule."""
    if n_threads:
        return n_threads
    return 1 if multiprocessing.parent_process() is not None else usable_cores()


def valid_thread_count(value) -> bool:
    """Whether `value` is a usable n_threads setting: a whole number >= 0 (not a bool)."""
    return not isinstance(value, bool) and isinstance(value, int) and value >= 0


def map_row_ranges(run: Callable[[int, int], T], n_rows: int, n_threads: int,
                   min_rows: int = MIN_ROWS_PER_THREAD) -> List[T]:
    """[run(lo, hi), ...] over consecutive ranges of the n_rows rows, one range per thread
    (at most n_threads, each at least `min_rows` rows; the kernels release the GIL, so the
    ranges run in parallel), in row order."""
    n_threads = max(1, min(int(n_threads), n_rows // min_rows))
    if n_threads == 1:
        return [run(0, n_rows)]
    from concurrent.futures import ThreadPoolExecutor

    import numpy

    bounds = numpy.linspace(0, n_rows, n_threads + 1).astype(int)
    with ThreadPoolExecutor(n_threads) as pool:
        return list(pool.map(run, bounds[:-1].tolist(), bounds[1:].tolist()))


_controller = None


def thread_pools():
    """threadpoolctl's view of the BLAS and OpenMP libraries loaded in this process, made
    once (looking them up costs milliseconds; a limit on it, microseconds). A library
    loaded after the first call is not in it, and the limits leave that one alone."""
    global _controller
    if _controller is None:
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
    return _controller


@contextmanager
def single_threaded_blas():
    """BLAS on one thread inside the block, then as it was, when called from the main
    thread; elsewhere nothing changes.

    Linking encodes a batch's query texts, a few hundred: BLAS threads gain little on
    products that small and, once done, spin on, taking the core the search needs next
    (BENCHMARKS.md, "threads while linking"). OpenBLAS ignores a thread count set from
    any thread but the main one, so a limit taken there could not be lifted, and BLAS's
    setting is process-wide, so one thread's limit would slow the others'."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    with thread_pools().limit(limits=1, user_api="blas"):
        yield


@contextmanager
def openmp_threads(n_threads: int):
    """The calling thread's OpenMP regions (a faiss search) on at most `n_threads` threads
    inside the block, then as they were. OpenMP keeps this setting per thread, so other
    threads are not touched."""
    with thread_pools().limit(limits=max(1, int(n_threads)), user_api="openmp"):
        yield
