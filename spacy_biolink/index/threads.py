"""How many threads a sparse search splits one batch of queries over.

The kernels release the GIL, so a batch split over threads runs in parallel. The config
value 0 means "one per core", except in a child process (`nlp.pipe(n_process=N)`, a
multiprocessing pool), whose siblings already take the cores.
"""
import multiprocessing
import os


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
