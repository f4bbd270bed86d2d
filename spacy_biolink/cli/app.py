"""The `spacy_biolink` command group and what its commands share: one-line errors, corpus
filters, and writing an output atomically with one "Wrote" line."""
import json
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

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


# The parameters through which commands name what they write; every other path a
# command is given is something it reads.
OUTPUT_PARAMS = ("output", "output_dir", "output_path", "errors", "plot", "save_split")


def fail_cleanly(func):
    """Run a command with what every command shares: its outputs checked against its
    inputs before any work (check_outputs_spare_inputs), a BioLinkError shown as one
    readable line with exit 1, and Ctrl-C as one line with exit 130 (the shell's code
    for SIGINT), never a traceback."""
    import configparser
    import functools

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        # imported when a command runs, not when it is declared: confection costs `--help`
        # a quarter of a second
        from catalogue import RegistryError
        from confection import ConfigValidationError

        from ..io.files import forget_replaced, replaced_outputs

        forget_replaced()
        try:
            check_outputs_spare_inputs(kwargs)
            return func(*args, **kwargs)
        except BioLinkError as err:
            msg.fail(str(err), exits=1)
        except ConfigValidationError as err:
            # spaCy's own message already lists the setting and what is wrong with it
            msg.fail("The config is not valid:", str(err).strip(), exits=1)
        except (configparser.Error, RegistryError) as err:
            # an interpolation loop (${paths.x} in paths.x) or an unknown registered
            # function, met where a config is resolved
            msg.fail(Errors.E192.format(where="config", reason=" ".join(str(err).split())),
                     exits=1)
        except KeyboardInterrupt:
            done = replaced_outputs()
            if done:  # a Ctrl-C after an output was swapped in: say it is the new one
                paths = ", ".join(str(p) for p in dict.fromkeys(done))
                msg.fail(Errors.E038.format(paths=paths, it="it holds" if len(done) == 1
                                            else "they hold"), exits=130)
            msg.fail(Errors.E034, exits=130)

    return wrapper


def check_outputs_spare_inputs(params: Dict[str, Any]) -> None:
    """Refuse (E030, E031, E033) a command whose output would destroy one of its inputs,
    from the command's parameters as typer passes them: outputs are OUTPUT_PARAMS; inputs
    are every other path (a Path, a list of them, a NAME=PATH or a path-like string such
    as an encoder directory), the values of extra `--paths.x FILE` overrides, and the
    files named in the [paths] of a config it is given. With --force (and no --resume) a
    directory output is replaced, so no input may be inside it."""
    from ..io.files import check_distinct_outputs, check_not_an_input

    outputs = [(f"--{name.replace('_', '-')}", params[name]) for name in OUTPUT_PARAMS
               if isinstance(params.get(name), Path)]
    if not outputs:
        return
    inputs: List[Tuple[str, Any]] = []
    for name, value in params.items():
        if name in OUTPUT_PARAMS:
            continue
        option = f"--{name.replace('_', '-')}"
        for item in value if isinstance(value, (list, tuple)) else [value]:
            path = _as_path(item)
            if path is not None:
                inputs.append((option, path))
                if name in ("config", "config_path"):
                    inputs += _config_paths(path)
        if _is_context(value):
            inputs += [(f"--{key}", Path(v)) for key, v in _extra_args(value.args)
                       if _as_path(v) is not None]
    check_distinct_outputs(outputs)
    replaces_dir = bool(params.get("force")) and not params.get("resume")
    for option, output in outputs:
        check_not_an_input(output, inputs, what=f"{option} {output}", replaces_dir=replaces_dir)


def _is_context(value: Any) -> bool:
    """Whether `value` is the command's context, whose `args` are the extra `--paths.x FILE`
    overrides. Recognised by shape: typer hands over click's Context, or in newer typer its
    vendored copy (typer._click), and neither is a typer.Context."""
    return type(value).__name__ == "Context" and isinstance(getattr(value, "args", None), list)


def _as_path(value: Any) -> Optional[Path]:
    """`value` as an existing path, or None (a number, a flag, a baseline name, text)."""
    if isinstance(value, str):
        value = value.partition("=")[2] if "=" in value else value
        if not value or "\n" in value or len(value) > 4096:
            return None
        value = Path(value)
    if not isinstance(value, Path):
        return None
    try:
        return value if os.path.lexists(value) else None
    except (OSError, ValueError):  # a name too long or with a NUL byte: not a file
        return None


def _extra_args(args: List[str]) -> List[Tuple[str, str]]:
    """(key, value) of `--key value` and `--key=value` overrides left to the command."""
    pairs, i = [], 0
    while i < len(args):
        if args[i].startswith("--"):
            key, sep, value = args[i][2:].partition("=")
            if not sep and i + 1 < len(args) and not args[i + 1].startswith("--"):
                value, i = args[i + 1], i + 1
            pairs.append((key, value))
        i += 1
    return pairs


def _config_paths(config_path: Path) -> List[Tuple[str, Path]]:
    """The existing files named in the [paths] section of a config (read raw): a
    training config names its dictionary and corpora there."""
    from thinc.api import Config

    try:
        section = Config().from_str(config_path.read_text(encoding="utf8"),
                                    interpolate=False).get("paths", {})
    except Exception:  # noqa: BLE001 - an unreadable config is reported by the command
        return []
    return [(f"{config_path} [paths] {key}", Path(value)) for key, value in section.items()
            if _as_path(value) is not None]


def corpus_filters(types: Optional[str], pmids: Optional[Path]):
    """--types "A,B" and --pmids FILE (one PMID a line, or a corpus: its documents'
    PMIDs) as sets; None where not given."""
    from ..corpora.bioc import read_pmid_file

    type_set = {t.strip() for t in types.split(",") if t.strip()} if types else None
    pmid_set = read_pmid_file(pmids, "--pmids file") if pmids is not None else None
    return type_set, pmid_set


def parse_ks(value: str) -> List[int]:
    """--ks "1,5,10" as sorted distinct integers >= 1, with 1 and 5 (the printed ones)."""
    try:
        ks = {int(k) for k in value.split(",") if k.strip()}
    except ValueError:
        raise BioLinkError(Errors.E481.format(option="--ks", value=value)) from None
    if any(k < 1 for k in ks):
        raise BioLinkError(Errors.E481.format(option="--ks", value=value))
    if max(ks, default=1) > MAX_K:
        # 99999999999999999999 overflowed deep in the search, after the model was loaded
        raise BioLinkError(Errors.E480.format(
            option="--ks", what=f"comma-separated integers in [1, {MAX_K}] (the k of acc@k)",
            value=value))
    return sorted(ks | {1, 5})


# The largest k of acc@k that `evaluate --ks` takes.
MAX_K = 1000
# The largest count an integer option (batch sizes, dimensions, rounds...) takes: beyond
# it, values overflow C integers or allocate without end, deep inside the work.
MAX_COUNT = 10 ** 9
# Seeds: numpy's and gensim's take 32-bit unsigned integers.
MAX_SEED = 2 ** 32 - 1


def check_range(option: str, value, lo, hi, *, integer: bool = True) -> None:
    """E480 when a numeric option is outside [lo, hi] (or inf / nan), before any work."""
    import math

    if value is None:
        return
    kind = "an integer" if integer else "a number"
    if isinstance(value, bool) or (integer and not isinstance(value, int)) or \
            not math.isfinite(value) or not lo <= value <= hi:
        raise BioLinkError(Errors.E480.format(option=option, what=f"{kind} in [{lo}, {hi}]",
                                              value=value))


def check_at_least(option: str, value: int, minimum: int) -> None:
    """E480 when an integer option is below its minimum."""
    if value < minimum:
        raise BioLinkError(Errors.E480.format(option=option, what=f"an integer >= {minimum}",
                                              value=value))
