"""`--help` is cheap and readable (issue 37): it imports neither torch nor spaCy (with torch
installed, `import spacy` imports it through thinc: 43-82 s under load), it cuts no value
with "…", and it shows no "<bool>" after flags that take no value."""
import importlib.util
import json
import os
import subprocess
import sys

import pytest
import typer

from spacy_biolink.cli import app

COMMANDS = sorted(typer.main.get_command(app).commands)

# Imports the CLI module the way `python -m spacy_biolink CMD --help` does, runs the
# help, then prints which heavy modules are loaded.
PROBE = """
import json, runpy, sys
sys.argv = ["spacy_biolink", *json.loads(sys.argv[1]), "--help"]
try:
    runpy.run_module("spacy_biolink", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules}
                        & {"torch", "spacy", "thinc", "transformers", "ray", "rich"})))
"""


def loaded_by_help(*command):
    result = subprocess.run([sys.executable, "-c", PROBE, json.dumps(list(command))],
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_help_imports_no_torch_nor_spacy():
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed: nothing to guard against")
    assert loaded_by_help("link") == []
    assert loaded_by_help() == []


def test_import_spacy_biolink_is_lazy_and_complete():
    """`import spacy_biolink` loads no spaCy; the public names still resolve on use."""
    code = ("import sys, spacy_biolink as s; heavy = 'spacy' in sys.modules; "
            "print(heavy, all(getattr(s, n) is not None for n in s.__all__))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "True"]


def test_the_factory_registers_what_its_default_config_names():
    """With no `import spacy_biolink`: spaCy loads the factory through its entry point, and
    the default config's MentionNormalizer.v1 and scorer must resolve."""
    code = ("import spacy; nlp = spacy.blank('en'); nlp.add_pipe('bio_linker'); "
            "print(nlp.pipe_names)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "bio_linker" in out.stdout


@pytest.mark.parametrize("name", [None, *COMMANDS])
def test_help_cuts_nothing_and_shows_no_bool(name):
    args = [name, "--help"] if name else ["--help"]
    env = {**os.environ, "COLUMNS": "80"}
    result = subprocess.run([sys.executable, "-m", "spacy_biolink", *args],
                            capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "…" not in text and "<bool>" not in text, text
    # the command list's summaries end as written, not cut with "..."
    lines = [line for line in text.splitlines() if line.rstrip().endswith("...")]
    assert all("Usage:" in line or "--" in line for line in lines), lines
    if name == "init-linker":
        assert "medic|biosyn|ctd|tsv|jsonl|umls|obo" in text
