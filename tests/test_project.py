"""The shipped configs and project.yml, exercised the way users run them."""
import subprocess
import sys
from pathlib import Path

import spacy
import srsly
from spacy.util import load_config

ROOT = Path(__file__).resolve().parents[1]


def test_config_file_is_the_default_pipeline(tiny_medic_path, tmp_path):
    """`spacy assemble configs/linker_tfidf.cfg` builds the same linker init-linker does."""
    from spacy_biolink.pipeline import load_pipeline_config

    shipped = load_pipeline_config(ROOT / "configs" / "linker_tfidf.cfg")
    default = load_pipeline_config()
    assert shipped["components"]["bio_linker"] == default["components"]["bio_linker"]
    result = subprocess.run([sys.executable, "-m", "spacy", "assemble", str(ROOT / "configs" / "linker_tfidf.cfg"),
                             str(tmp_path / "assembled"), "--paths.dictionary", str(tiny_medic_path)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    nlp = spacy.load(tmp_path / "assembled")
    doc = nlp.make_doc("NIDDM")
    doc.ents = [doc.char_span(0, 5, label="Disease")]
    assert nlp(doc).ents[0].kb_id_ == "D003924"


def test_project_yml_declares_deps_and_outputs():
    project = srsly.read_yaml(ROOT / "project.yml")
    names = {c["name"] for c in project["commands"]}
    for workflow in project["workflows"].values():
        assert set(workflow) <= names
    for command in project["commands"]:
        assert command.get("deps") and command.get("outputs"), command["name"]
    assert load_config(ROOT / "configs" / "linker_tfidf.cfg", interpolate=False)
