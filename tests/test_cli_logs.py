"""What a command's log shows (issue 37): the augmentation line once per training run, W001
without "(--augment)" when nothing was augmented and without its source line, no
progress-bar updates in a redirected log, and success messages on one line."""
import gzip
import io
import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import TINY_MEDIC

PACKAGE = Path(__file__).resolve().parent.parent / "spacy_biolink"

CORPUS = """\
1|t|Type 2 diabetes and HD.
1|a|Huntington disease.
1\t0\t15\tType 2 diabetes\tDisease\tD003924
1\t20\t22\tHD\tDisease\tD006816
1\t24\t42\tHuntington disease\tDisease\tD006816

"""


@pytest.fixture
def medic(tmp_path):
    path = tmp_path / "medic.txt.gz"
    with gzip.open(path, "wt", encoding="utf8") as fileh:
        fileh.write(TINY_MEDIC)  # "HD" names two concepts: W001
    return path


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "train.PubTator"
    path.write_text(CORPUS, encoding="utf8")
    return path


def init_linker(*args):
    return subprocess.run([sys.executable, "-m", "spacy_biolink", "init-linker", *map(str, args)],
                          capture_output=True, text=True)


def test_w001_is_one_line_and_names_augment_only_when_used(tmp_path, medic, corpus):
    plain = init_linker(tmp_path / "plain", "--dictionary", medic)
    assert plain.returncode == 0, plain.stderr
    w001 = [line for line in plain.stderr.splitlines() if "[W001]" in line]
    assert len(w001) == 1, plain.stderr
    assert w001[0].startswith("UserWarning: [W001]") and "in dictionary order" in w001[0]
    assert "--augment" not in plain.stderr
    # no "component.py:278:" prefix and no `warnings.warn(...)` source line
    assert "warnings.warn" not in plain.stderr and ".py:" not in plain.stderr, plain.stderr

    augmented = init_linker(tmp_path / "augmented", "--dictionary", medic, "--augment", corpus)
    assert augmented.returncode == 0, augmented.stderr
    assert "(--augment) gave that name most often first" in augmented.stderr
    # Without the annotation prior the counts order nothing, and W001 says so.
    no_prior = init_linker(tmp_path / "no_prior", "--dictionary", medic, "--augment", corpus,
                           "--components.bio_linker.prior_weight", "0")
    assert no_prior.returncode == 0, no_prior.stderr
    assert "gave that name most often first" not in no_prior.stderr
    assert "in dictionary order (prior_weight is 0" in no_prior.stderr
    assert augmented.stderr.count("augmented the dictionary") == 1


def test_success_message_is_one_line(tmp_path, medic):
    out = tmp_path / "a_rather_long_directory_name_so_that_the_message_passes_eighty_columns"
    result = init_linker(out, "--dictionary", medic)
    saved = [line for line in result.stdout.splitlines() if "Saved pipeline to" in line]
    assert len(saved) == 1 and "concepts" in saved[0] and len(saved[0]) > 80, result.stdout


def test_dev_linkers_augment_once(tiny_dictionary, corpus, caplog):
    """Trainers score dev each epoch: the corpus is read and the line logged once, and the
    scores equal those of a linker that augments by itself."""
    import warnings

    from spacy.util import registry

    from spacy_biolink.linker.component import DEFAULT_ENCODER_CONFIG
    from spacy_biolink.training.dev import augmented_for_dev, dev_accuracy
    from thinc.api import Config

    encoder_config = Config().from_str(DEFAULT_ENCODER_CONFIG)
    encoder = registry.resolve(encoder_config)["model"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # W001
        with caplog.at_level(logging.INFO, logger="spacy_biolink"):
            dictionary = augmented_for_dev(tiny_dictionary, [corpus])
            scores = [dev_accuracy(encoder, dictionary, corpus) for _ in range(3)]
        lines = [r for r in caplog.records if "augmented the dictionary" in r.getMessage()]
        assert len(lines) == 1
        by_itself = dev_accuracy(encoder, tiny_dictionary, corpus, augment=[corpus])
    assert dictionary.n_names > tiny_dictionary.n_names
    assert all(s["acc@1"] == by_itself["acc@1"] and s["acc@5"] == by_itself["acc@5"]
               for s in scores)
    assert augmented_for_dev(tiny_dictionary, []) is tiny_dictionary


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_draws_only_on_a_terminal():
    from spacy_biolink.io.progress import progress_bar

    redirected = io.StringIO()
    assert list(progress_bar(range(3), file=redirected, desc="x")) == [0, 1, 2]
    assert redirected.getvalue() == ""
    terminal = _Terminal()
    list(progress_bar(range(3), file=terminal, desc="x"))
    assert "3/3" in terminal.getvalue()
    asked_off = _Terminal()
    list(progress_bar(range(3), file=asked_off, desc="x", disable=True))
    assert asked_off.getvalue() == ""


def test_every_progress_bar_goes_through_the_helper():
    allowed = {"io/progress.py"}
    direct = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel not in allowed and re.search(r"^\s*(from tqdm|import tqdm)", path.read_text(),
                                            re.MULTILINE):
            direct.append(rel)
    assert not direct, direct
