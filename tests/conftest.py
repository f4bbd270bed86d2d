import threading
from pathlib import Path

import pytest
import spacy

from spacy_biolink import ConceptDictionary, load_dictionary

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

# A 6-concept MEDIC-style dictionary: alternative ids, an OMIM id, synonyms,
# and one name ("HD") that two concepts share.
TINY_MEDIC = """\
D003924||Diabetes Mellitus, Type 2|Type 2 diabetes|NIDDM|Diabetes Mellitus, Noninsulin-Dependent
D003922||Diabetes Mellitus, Type 1|Type 1 diabetes|IDDM|juvenile diabetes
C567755|613097||Tooth Agenesis, Selective, 6|STHAG6
D006816||Huntington Disease|Huntington's chorea|HD
D006527||Hirschsprung Disease|HD|congenital megacolon
D001943||Breast Neoplasms|breast cancer|breast tumor
"""


def build_tiny_bert(path: Path, words, dropout: float = 0.0) -> Path:
    """A 2-layer, 32-wide BERT with random weights saved in `path`, its WordPiece vocab
    the given words plus single characters (so every text tokenizes). No dropout unless
    asked: most tests compare runs and want them deterministic without restoring rngs."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    words = sorted(set(words))
    chars = sorted({ch for w in words for ch in w})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + words + \
        [c for c in chars if c not in words] + [f"##{c}" for c in chars]
    path.mkdir(parents=True, exist_ok=True)
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf8")
    BertTokenizerFast(vocab_file=str(path / "vocab.txt")).save_pretrained(str(path))
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64,
                        max_position_embeddings=64, hidden_dropout_prob=dropout,
                        attention_probs_dropout_prob=dropout)
    BertModel(config).save_pretrained(str(path))
    return path


def pytest_addoption(parser):
    parser.addoption("--slow", action="store_true", default=False, help="run slow tests")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--slow"):
        return
    skip_slow = pytest.mark.skip(reason="slow: pass --slow to run")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"benchmark data not found at {SHARED_DATA} (only the project's own "
                    "checkout has ../shared/data; a user's clone does not)")
    return SHARED_DATA


@pytest.fixture
def tiny_medic_path(tmp_path) -> Path:
    path = tmp_path / "tiny_medic.txt"
    path.write_text(TINY_MEDIC, encoding="utf8")
    return path


@pytest.fixture
def tiny_dictionary(tiny_medic_path) -> ConceptDictionary:
    return load_dictionary(tiny_medic_path)


def make_linker_nlp(dictionary: ConceptDictionary, **config):
    nlp = spacy.blank("en")
    nlp.add_pipe("bio_linker", config=config)
    with pytest.warns(UserWarning, match="W001") if dictionary.shared_names() else _nullcontext():
        nlp.get_pipe("bio_linker").initialize(dictionary=dictionary)
    return nlp


class _nullcontext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.fixture
def linker_nlp(tiny_dictionary):
    return make_linker_nlp(tiny_dictionary)


def doc_with_ents(nlp, text, ents, label="Disease"):
    """A doc whose entities are the given (start_char, end_char) spans, or substrings."""
    doc = nlp.make_doc(text)
    spans = []
    for ent in ents:
        if isinstance(ent, str):
            start = text.index(ent)
            ent = (start, start + len(ent))
        spans.append(doc.char_span(ent[0], ent[1], label=label, alignment_mode="expand"))
    doc.ents = spans
    return doc


@pytest.fixture(scope="module")
def torch_one_thread():
    """Torch on one thread for a module's tests: the test machines share two cores, and
    tiny models gain nothing from more threads."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def record_kernel_threads(monkeypatch, module, name: str, n_threads: int) -> set:
    """Wrap the kernel `module.name`, which a search calls from each of its threads, so
    that each thread's first call waits for `n_threads` distinct threads to arrive; returns
    the set of their thread ids, filled as they call. A search run on fewer threads (or on
    the caller's alone) breaks the wait after 10 s with BrokenBarrierError, so a test
    using this fails unless the search really split its rows over `n_threads` threads
    running at once."""
    kernel = getattr(module, name)
    barrier = threading.Barrier(n_threads, timeout=10)
    seen = set()
    lock = threading.Lock()

    def counted(*args):
        with lock:
            first = threading.get_ident() not in seen
            seen.add(threading.get_ident())
        if first:
            barrier.wait()
        return kernel(*args)

    monkeypatch.setattr(module, name, counted)
    return seen


class CliResult:
    """What a `python -m spacy_biolink ...` subprocess would give (returncode, stdout,
    stderr), from the command run in this process."""

    def __init__(self, result):
        self.returncode = result.exit_code
        self.stdout, self.stderr = result.stdout, result.stderr


def invoke_cli(*args, check: bool = True) -> CliResult:
    """Run a `spacy_biolink` command in this process (typer's CliRunner): the suite's
    processes would each spend seconds importing spaCy, torch and the rest before the
    command starts. A raw exception fails here (the command shows errors as a clean exit
    1, never a traceback); a nonzero exit fails too, unless `check` is False. Tests about
    the process itself (its log handlers, its stderr, a kill) keep a subprocess."""
    from typer.testing import CliRunner

    from spacy_biolink.cli import app

    result = CliRunner().invoke(app, [str(a) for a in args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{args}: raw {result.exception!r}\n{result.output}") \
            from result.exception
    if check and result.exit_code != 0:
        raise AssertionError(result.output)
    return CliResult(result)
