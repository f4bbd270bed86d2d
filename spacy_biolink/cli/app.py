"""The `spacy_biolink` command group and what its commands share: one-line errors, corpus
filters, and writing an output atomically with one "Wrote" line."""
import json
from pathlib import Path
from typing import Any, List, Optional

import typer
import wasabi

from ..errors import BioLinkError, Errors
from ..io.files import atomic_file

class UnwrappedPrinter(wasabi.Printer):
    """wasabi's Printer, whose messages are printed whole: its `text` cuts every message
    into lines of 80 columns, which broke "Wrote PATH (...)" and one-line errors
    mid-sentence in logs. Icons, colours, `spaced` and `exits` work as in wasabi."""

    def text(self, title: Any = "", text: Any = "", color: Any = None, bg_color: Any = None,
             icon: Optional[str] = None, spaced: bool = False, show: bool = True,
             no_print: bool = False, exits: Optional[int] = None):
        """Print (or with no_print, return) `title`, then `text` on the next line."""
        import sys

        if not show:
            return None
        title = str(title)
        if self.pretty:
            icon_str = self.icons.get(icon) if icon else None
            if icon_str:
                title = wasabi.util.locale_escape(f"{icon_str} {title}").strip()
            if self.show_color:
                title = wasabi.util.color(title, fg=self.colors.get(color, color),
                                          bg=self.colors.get(bg_color, bg_color))
        if text:
            title = f"{title}\n{text}"
        if exits is not None or spaced:
            title = f"\n{title}\n"
        if no_print or self.no_print:
            if exits is not None:
                raise SystemExit(title.strip())
            return title
        print(title)
        if exits is not None:
            sys.stdout.flush()
            sys.stderr.flush()
            sys.exit(exits)
        return None


msg = UnwrappedPrinter()

# rich_markup_mode=None: click's plain help, which wraps long values instead of cutting
# them with "…" and shows no "<bool>" after flags (typer's rich tables do both), and
# imports no rich.
app = typer.Typer(name="spacy_biolink", add_completion=False, no_args_is_help=True,
                  pretty_exceptions_enable=False, rich_markup_mode=None,
                  help="Biomedical entity linking for spaCy.")


def summarize_commands(typer_app: typer.Typer) -> None:
    """Give each command without a `short_help` its docstring's first paragraph as one.

    Click cuts a command's summary in `--help`'s command list with "..." at about 45
    characters unless `short_help` is set; a set one is wrapped, never cut."""
    import inspect

    for info in typer_app.registered_commands:
        doc = info.help or (info.callback.__doc__ if info.callback else None)
        if info.short_help is None and doc:
            info.short_help = " ".join(inspect.cleandoc(doc).split("\n\n")[0].split())


def write_output(path: Path, content: Any, *, said: str = "") -> None:
    """Write `content` to `path` atomically (a str as text, anything else as indented JSON)
    and say so once: `Wrote PATH` followed by `said`."""
    with atomic_file(path) as fileh:
        if isinstance(content, str):
            fileh.write(content)
        else:
            json.dump(content, fileh, indent=2)
    msg.good(f"Wrote {path}{said}")


def fail_cleanly(func):
    """Show a BioLinkError as one readable line and exit 1, instead of a traceback."""
    import functools

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        # imported when a command runs, not when it is declared: confection costs `--help`
        # a quarter of a second
        from confection import ConfigValidationError

        try:
            return func(*args, **kwargs)
        except BioLinkError as err:
            msg.fail(str(err), exits=1)
        except ConfigValidationError as err:
            # spaCy's own message already lists the setting and what is wrong with it
            msg.fail("The config is not valid:", str(err).strip(), exits=1)

    return wrapper


def corpus_filters(types: Optional[str], pmids: Optional[Path]):
    """--types "A,B" and --pmids FILE (one PMID a line) as sets; None where not given."""
    from ..io.files import check_no_control_characters, iter_lines

    type_set = {t.strip() for t in types.split(",") if t.strip()} if types else None
    pmid_set = None
    if pmids is not None:
        pmid_set = set()
        for line_no, line in iter_lines(pmids, "--pmids file"):
            check_no_control_characters(pmids, line_no, line.strip(), "a PMID")
            if line.strip():
                pmid_set.add(line.strip())
    return type_set, pmid_set


def parse_ks(value: str) -> List[int]:
    """--ks "1,5,10" as sorted distinct integers >= 1, with 1 and 5 (the printed ones)."""
    try:
        ks = {int(k) for k in value.split(",") if k.strip()}
    except ValueError:
        raise BioLinkError(Errors.E481.format(option="--ks", value=value)) from None
    if any(k < 1 for k in ks):
        raise BioLinkError(Errors.E481.format(option="--ks", value=value))
    return sorted(ks | {1, 5})


def check_at_least(option: str, value: int, minimum: int) -> None:
    """E480 when an integer option is below its minimum."""
    if value < minimum:
        raise BioLinkError(Errors.E480.format(option=option, what=f"an integer >= {minimum}",
                                              value=value))
