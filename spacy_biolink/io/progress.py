"""The one progress bar of the package: tqdm, drawn only when stderr is a terminal.

A redirected log (`spacy project run all > log`, CI, a Ray worker) gets no bar updates:
the `all` workflow's log was 285 KB, 3,463 bar updates for 409 lines (issue 37). spaCy
does the same for its own bars.
"""
from typing import Any, Iterable, Optional


def progress_bar(iterable: Optional[Iterable] = None, *, disable: bool = False, **kwargs: Any):
    """`tqdm(iterable, **kwargs)`, disabled where asked (`disable=True`) and whenever its
    stream (stderr unless `file=` is given) is not a terminal."""
    from tqdm import tqdm

    # disable=None is tqdm's "off unless the stream is a TTY"
    return tqdm(iterable, disable=True if disable else None, **kwargs)
