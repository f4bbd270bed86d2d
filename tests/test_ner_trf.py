"""configs/ner_trf.cfg: a spacy-transformers NER over a tiny random BERT built here,
trained a few steps as a user trains it, joined with a linker, then `link` and
`visualize` on raw text; and a received transformer pipeline that would run code is
refused before anything in it is read."""
import json
import pickle
from pathlib import Path

import pytest
import spacy
import srsly

torch = pytest.importorskip("torch")
pytest.importorskip("spacy_transformers")

from spacy.tokens import DocBin  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from spacy_biolink.runners.assemble import assemble_pipeline  # noqa: E402
from spacy_biolink.cli import app  # noqa: E402
from spacy_biolink.errors import BioLinkError  # noqa: E402
from spacy_biolink.linker.pipeline import load_linker_pipeline  # noqa: E402

from .conftest import build_tiny_bert, make_linker_nlp  # noqa: E402

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "ner_trf.cfg"

# Mentions of the tiny dictionary's concepts (conftest.TINY_MEDIC), typed as NCBI-disease
# types them: the config's augmenter makes them all "Disease".
TRAIN = [("Type 2 diabetes was seen in them .", [(0, 15, "SpecificDisease")]),
         ("Patients with breast cancer and NIDDM .", [(14, 27, "SpecificDisease"),
                                                      (32, 37, "Modifier")]),
         ("Huntington disease runs in families .", [(0, 18, "SpecificDisease")]),
         ("They had no breast cancer .", [(12, 25, "DiseaseClass")])]
RAW = "Patients with breast cancer and NIDDM ."
EXPECTED = [("breast cancer", "D001943"), ("NIDDM", "D003924")]


@pytest.fixture(autouse=True, scope="module")
def one_thread(torch_one_thread):
    yield


def docbin(path: Path) -> Path:
    nlp = spacy.blank("en")
    docs = []
    for text, ents in TRAIN:
        doc = nlp.make_doc(text)
        doc.ents = [doc.char_span(s, e, label) for s, e, label in ents]
        docs.append(doc)
    DocBin(docs=docs).to_disk(path)
    return path


@pytest.fixture(scope="module")
def ner_trf_dir(tmp_path_factory) -> Path:
    """configs/ner_trf.cfg trained by `spacy train` over a tiny random BERT until it
    finds the training entities again."""
    from spacy.cli.train import train

    root = tmp_path_factory.mktemp("ner_trf")
    words = {w.lower() for text, _ in TRAIN for w in text.split()}
    backbone = build_tiny_bert(root / "bert", words)
    corpus = docbin(root / "train.spacy")
    train(CONFIG, root / "out", use_gpu=-1, overrides={
        "paths.backbone": str(backbone), "paths.train": str(corpus), "paths.dev": str(corpus),
        "training.max_steps": 60, "training.eval_frequency": 60,
        "training.optimizer.learn_rate.initial_rate": 3e-3,
        "training.optimizer.learn_rate.warmup_steps": 1, "training.dropout": 0.0,
        "training.batcher.size": 200})
    return root / "out" / "model-best"


@pytest.fixture(scope="module")
def pipeline_dir(ner_trf_dir, tmp_path_factory) -> Path:
    from spacy_biolink import load_dictionary

    from .conftest import TINY_MEDIC

    root = tmp_path_factory.mktemp("pipeline")
    (root / "medic.txt").write_text(TINY_MEDIC, encoding="utf8")
    make_linker_nlp(load_dictionary(root / "medic.txt")).to_disk(root / "linker")
    assemble_pipeline(ner_trf_dir, root / "linker", root / "full")
    return root / "full"


def test_backbone_null_is_the_installed_minilm_and_a_path_is_itself(tmp_path):
    from spacy.util import registry

    from spacy_biolink.encoders.transformer import DEFAULT_BACKBONE_ID, default_backbone

    build = registry.misc.get("spacy-biolink.transformer_backbone.v1")
    expected = str(default_backbone() or DEFAULT_BACKBONE_ID)
    assert build(None) == build("null") == build("") == expected
    assert build(str(tmp_path)) == str(tmp_path)


def test_trained_ner_labels_come_from_the_corpus_through_the_augmenter(ner_trf_dir):
    nlp = spacy.load(ner_trf_dir)
    assert nlp.pipe_names == ["transformer", "ner"]
    assert nlp.get_pipe("ner").labels == ("Disease",)
    config = nlp.config["components"]["transformer"]["model"]
    assert config["@architectures"] == "spacy-transformers.TransformerModel.v3"
    assert config["name"]["@misc"] == "spacy-biolink.transformer_backbone.v1"


def test_link_and_visualize_run_unchanged_on_raw_text(pipeline_dir, tmp_path):
    nlp = load_linker_pipeline(pipeline_dir)
    assert nlp.pipe_names == ["transformer", "ner", "bio_linker"]
    assert [(e.text, e.kb_id_) for e in nlp(RAW).ents] == EXPECTED

    (tmp_path / "in.txt").write_text(RAW + "\n", encoding="utf8")
    runner = CliRunner()
    result = runner.invoke(app, ["link", str(tmp_path / "in.txt"), "--model", str(pipeline_dir),
                                 "--output", str(tmp_path / "out.jsonl")])
    assert result.exit_code == 0, result.output
    [record] = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [(e["text"], e["kb_id"]) for e in record["entities"]] == EXPECTED

    result = runner.invoke(app, ["visualize", str(pipeline_dir), "--text", RAW,
                                 "--output", str(tmp_path / "page.html")])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "page.html").read_text(encoding="utf8")
    assert "D001943" in page and "D003924" in page


def rewrite_shim(pipeline_dir: Path, change) -> None:
    """Edit the HF shim bytes inside the saved transformer/model (thinc msgpack, the
    shim's own msgpack inside), as someone crafting a pipeline would."""
    path = pipeline_dir / "transformer" / "model"
    msg = srsly.msgpack_loads(path.read_bytes())
    [[shim_bytes]] = [shims for shims in msg["shims"] if shims]
    shim = srsly.msgpack_loads(shim_bytes)
    change(shim)
    msg["shims"] = [[srsly.msgpack_dumps(shim)] if shims else shims for shims in msg["shims"]]
    path.write_bytes(srsly.msgpack_dumps(msg))


class _Payload:
    """Unpickling this writes a file: what a received model must never get to do."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (self.marker, "ran"))


def remote_code_tokenizer(marker: Path):
    def change(shim):
        tok = shim["tokenizer"]
        tok["kwargs"] = {"use_fast": True, "trust_remote_code": True}
        config = json.loads(tok["tokenizer_config.json"])
        config["auto_map"] = {"AutoTokenizer": ["evil.EvilTokenizer", "evil.EvilTokenizer"]}
        tok["tokenizer_config.json"] = json.dumps(config).encode("utf8")
        tok["evil.py"] = (f"open({str(marker)!r}, 'w').write('ran')\n"
                          "from transformers import BertTokenizerFast as EvilTokenizer\n").encode()
    return change


def pickled_state(marker: Path):
    def change(shim):
        shim["state"] = pickle.dumps(_Payload(marker))
    return change


@pytest.mark.parametrize("make_change,code", [(remote_code_tokenizer, "E510"),
                                              (pickled_state, "E511")])
def test_received_transformer_pipeline_that_would_run_code_is_refused(
        pipeline_dir, tmp_path, monkeypatch, make_change, code):
    import shutil

    # torch >= 2.6 reads weights with weights_only=True unless this is set; the check
    # must not depend on it (spacy-transformers itself does)
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")

    received = tmp_path / "received"
    shutil.copytree(pipeline_dir, received)
    marker = tmp_path / "ran.txt"
    rewrite_shim(received, make_change(marker))
    with pytest.raises(BioLinkError, match=code):
        load_linker_pipeline(received)
    result = CliRunner().invoke(app, ["visualize", str(received), "--text", RAW,
                                      "--output", str(tmp_path / "page.html")])
    assert result.exit_code == 1 and code in result.output
    assert not marker.exists() and not (tmp_path / "page.html").exists()


def test_transformer_saved_as_a_directory_is_refused(pipeline_dir, tmp_path):
    """spacy-transformers reads a `model` directory (its v1.0 layout) with Hugging Face's
    from_pretrained and the config's settings, which may trust remote code."""
    import shutil

    received = tmp_path / "received"
    shutil.copytree(pipeline_dir, received)
    (received / "transformer" / "model").unlink()
    (received / "transformer" / "model").mkdir()
    with pytest.raises(BioLinkError, match="E510"):
        load_linker_pipeline(received)
