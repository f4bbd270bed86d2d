"""`python -m spacy_biolink ...`: build, evaluate and use linking pipelines.

One module per command group, each adding its commands to the one typer app:
build.py (init-linker, assemble, convert), train.py (train-vectors, train, calibrate),
evaluate.py (evaluate, evaluate-e2e, report, eval-synonyms, eval-relatedness,
score-pairs, eval-pairs), link.py (link, visualize); app.py holds what they share.
"""
import logging

from . import build, evaluate, link, train  # noqa: F401  (each adds its commands to `app`)
from .app import app, summarize_commands

summarize_commands(app)

__all__ = ["app", "main"]


def main() -> None:
    """The `spacy-biolink` command. Ctrl-C inside a command is fail_cleanly's (one line,
    exit 130); this catches the rest (while Python starts the command, or reads options)."""
    import sys

    from wasabi import msg

    from ..errors import Errors

    log_info_to_stderr()
    show_our_warnings_plainly()
    try:
        app()
    except KeyboardInterrupt:
        msg.fail(Errors.E034)
        sys.exit(130)


def show_our_warnings_plainly() -> None:
    """This package's warnings as one `UserWarning: [W001] ...` line, without the
    `file.py:278:` prefix and the `warnings.warn(...)` source line Python adds, which
    tell a command-line user nothing. Other packages' warnings are shown as before.
    Set by the command only: a library does not change how its host shows warnings."""
    import os
    import warnings

    package_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    default = warnings.formatwarning

    def formatwarning(message, category, filename, lineno, line=None):
        if os.path.abspath(filename).startswith(package_dir + os.sep):
            return f"{category.__name__}: {message}\n"
        return default(message, category, filename, lineno, line)

    warnings.formatwarning = formatwarning


def log_info_to_stderr() -> None:
    """INFO lines of this package and of spaCy on stderr, each once.

    spaCy's logger has a handler of its own and propagates to the root logger, so a
    handler on the root (`logging.basicConfig`) would print every spaCy line twice: the
    handler goes on this package's logger instead, and spaCy's is set to INFO as
    `spacy train` sets it.
    """
    package_logger = logging.getLogger("spacy_biolink")
    if not package_logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        package_logger.addHandler(handler)
    package_logger.setLevel(logging.INFO)
    logging.getLogger("spacy").setLevel(logging.INFO)
