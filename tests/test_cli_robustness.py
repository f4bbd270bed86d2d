"""Every CLI subcommand, listed from the typer app (so a new command is covered), with
--help, with missing inputs and with an unwritable output: a coded error and a non-zero
exit, never a traceback (issue 19)."""
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from spacy_biolink.cli import app

COMMANDS = typer.main.get_command(app).commands
OUTPUT_PARAMS = ("output", "output_dir", "output_path")
runner = CliRunner()


def invoke(args):
    result = runner.invoke(app, [str(a) for a in args])
    raw = result.exception is not None and not isinstance(result.exception, SystemExit)
    assert not raw, f"{args}: raw {result.exception!r}"
    assert "Traceback" not in result.output and "Aborted" not in result.output, result.output
    return result


def args_for(command, value_of):
    """Arguments in order, then the required options (and --output where there is one),
    each given value_of(param)."""
    args, options = [], []
    for param in command.params:
        if param.param_type_name == "argument" and param.required:
            args.append(value_of(param))
        elif param.param_type_name == "option" and (param.required or param.name == "output"):
            options += [param.opts[0], value_of(param)]
    return args + options


def test_every_command_is_listed():
    assert {"init-linker", "evaluate", "train", "link", "report"} <= set(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help(name):
    result = invoke([name, "--help"])
    assert result.exit_code == 0 and "Usage" in result.output


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_missing_input(name, tmp_path):
    def value_of(param):
        if param.name in OUTPUT_PARAMS:
            return tmp_path / f"out_{param.name}"
        if param.name == "metrics":
            return f"a={tmp_path / 'missing.json'}"
        return tmp_path / f"missing_{param.name}"

    result = invoke([name, *args_for(COMMANDS[name], value_of)])
    assert result.exit_code != 0
    assert "[E" in result.output, result.output
    assert not any(p.name.startswith("out_") for p in tmp_path.iterdir())


@pytest.mark.parametrize("name", sorted(c for c in COMMANDS
                                        if any(p.name in OUTPUT_PARAMS for p in COMMANDS[c].params)))
def test_unwritable_output(name, tmp_path):
    """The output is checked before anything is read: the error is about the output."""
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")

    def value_of(param):
        if param.name in OUTPUT_PARAMS:
            return blocker / "out"
        if param.name == "metrics":
            return f"a={tmp_path / 'missing.json'}"
        return tmp_path / f"missing_{param.name}"

    result = invoke([name, *args_for(COMMANDS[name], value_of)])
    assert result.exit_code != 0
    assert "[E023]" in result.output, result.output


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc, where "
                    "mkdir fails though os.access may say writable")
def test_train_output_the_os_refuses_is_a_coded_error(tmp_path):
    """A trainer makes OUTPUT as it starts: where the OS refuses (here /proc, which
    check_output_path's permission test passes for root) the error is E020, not an OSError."""
    result = invoke(["train", "configs/triplet.cfg", "--output", "/proc/spacy_biolink_out"])
    assert result.exit_code != 0
    assert "[E020]" in result.output and "/proc/spacy_biolink_out" in result.output, result.output
