"""The fast encoder's torch-free twin (encoders/fast_numpy.py): the vectors of the trained
torch encoder, a linker over it that loads and links with torch unimportable. A tiny
fast encoder is trained here on a tiny random BERT's tokenizer (no MiniLM, no network)."""
import json
import subprocess
import sys
from pathlib import Path

import numpy
import pytest
import spacy
from spacy import util

pytest.importorskip("torch")
pytest.importorskip("transformers")

from spacy_biolink.encoders.fast_numpy import copy_weights, torch_free_block  # noqa: E402
from spacy_biolink.encoders.saved import load_encoder, read_encoder_config  # noqa: E402
from spacy_biolink.errors import BioLinkError  # noqa: E402
from spacy_biolink.training import train_from_config  # noqa: E402

from .conftest import build_tiny_bert, invoke_cli  # noqa: E402
from .test_fast_encoder import CONFIGS, overrides  # noqa: E402
from .test_transformer_encoders import DICTIONARY, MENTIONS, backbone_words, pubtator  # noqa: E402

TEXTS = ["kidney failure", "renal insufficiency", "", "a", "Kidney-failure, acute (ARF)",
         "insuffisance rénale", " ".join(["renal"] * 40)]


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("fast_numpy")
    backbone = build_tiny_bert(path / "bert", backbone_words())
    (path / "dict.txt").write_text(DICTIONARY, encoding="utf8")
    (path / "train.txt").write_text(pubtator(MENTIONS), encoding="utf8")
    # embed_dim 24 != hidden_width 16: the trained encoder has its input layer, which the
    # twin folds into its token table.
    train_from_config(CONFIGS / "fast_encoder.cfg", path / "fast", overrides=overrides(
        path, backbone, **{"training.align_epochs": 2, "encoder.embed_dim": 24}))
    return path


def test_the_twin_gives_the_torch_encoders_vectors(trained):
    model, _ = load_encoder(trained / "fast")
    block, _, _ = read_encoder_config(trained / "fast")
    twin_block = torch_free_block(block)
    assert twin_block["@architectures"] == "spacy-biolink.FastNameEncoderNumpy.v1"
    assert "dropout" not in twin_block and "embed_dim" not in twin_block
    twin = util.registry.resolve({"model": twin_block})["model"]
    with pytest.raises(BioLinkError, match="E698"):
        twin.initialize()
    copy_weights(model, twin)
    twin.initialize()
    # folded: vocabulary x hidden_width, not the trained vocabulary x embed_dim
    assert twin.get_param("embedding").shape[1] == 16
    expected, got = model.predict(TEXTS), twin.predict(TEXTS)
    assert got.dtype == numpy.float32 and got.shape == expected.shape == (len(TEXTS), 16)
    assert numpy.allclose(got, expected, atol=1e-5)
    # a batch's order and company change nothing
    assert numpy.allclose(twin.predict(TEXTS[::-1])[::-1], got, atol=1e-6)
    assert numpy.allclose(twin.predict([TEXTS[0]])[0], got[0], atol=1e-6)
    # a hybrid block converts its dense part and keeps the rest
    hybrid, _, _ = read_encoder_config(trained / "fast" / "hybrid")
    converted = torch_free_block(hybrid)
    assert converted["dense"]["@architectures"] == "spacy-biolink.FastNameEncoderNumpy.v1"
    assert converted["sparse"] == hybrid["sparse"]
    assert torch_free_block({"@architectures": "spacy-biolink.TfidfEncoder.v1"}) is None


def test_init_linker_builds_a_linker_that_links_without_torch(trained, tmp_path):
    pipeline = tmp_path / "linker"
    invoke_cli("init-linker", pipeline, "--dictionary", trained / "dict.txt",
               "--encoder", trained / "fast" / "hybrid")
    config = (pipeline / "config.cfg").read_text(encoding="utf8")
    assert "spacy-biolink.FastNameEncoderNumpy.v1" in config
    assert "spacy-biolink.FastNameEncoder.v2" not in config
    nlp = spacy.load(pipeline)
    trained_dense = load_encoder(trained / "fast" / "hybrid")[0].layers[0]
    assert numpy.allclose(nlp.get_pipe("bio_linker").model.layers[0].predict(TEXTS),
                          trained_dense.predict(TEXTS), atol=1e-5)
    linked = nlp.get_pipe("bio_linker").linker.link_texts(TEXTS[:2], 3)
    here = {text: [(nlp.get_pipe("bio_linker").dictionary.primary_id(c), round(s, 4))
                   for c, s in linked[text]] for text in TEXTS[:2]}
    # A fresh process where `import torch` fails loads the same linker and links alike.
    # spacy-transformers, where installed, needs torch and goes too (spaCy imports every
    # factory's entry point at spacy.load): an install without torch has neither.
    script = (
        "import json, sys\n"
        "sys.modules['torch'] = None\n"
        "import catalogue\n"
        "groups = catalogue.importlib_metadata.entry_points()\n"
        "groups = {g: groups.select(group=g) for g in groups.groups}\n"
        "catalogue.AVAILABLE_ENTRY_POINTS = {g: [p for p in points if not\n"
        "    p.value.startswith('spacy_transformers')] for g, points in groups.items()}\n"
        "import spacy\n"
        f"nlp = spacy.load({str(pipeline)!r})\n"
        "pipe = nlp.get_pipe('bio_linker')\n"
        f"linked = pipe.linker.link_texts({TEXTS[:2]!r}, 3)\n"
        "print(json.dumps({t: [(pipe.dictionary.primary_id(c), round(s, 4)) for c, s in v]"
        " for t, v in linked.items()}))\n")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    there = json.loads(run.stdout.strip().splitlines()[-1])
    assert there == {text: [list(pair) for pair in pairs] for text, pairs in here.items()}


def test_a_linker_over_faiss_links_in_forked_workers_after_linking_here(trained, tmp_path):
    """nlp.pipe(n_process=2) after the parent has searched: faiss's OpenMP threads do not
    survive a fork, and the workers used to wait forever (index/faiss.py's fork hook)."""
    # Enough names and queries that faiss searches on several threads in the parent.
    dictionary = tmp_path / "dict.txt"
    dictionary.write_text((trained / "dict.txt").read_text(encoding="utf8") + "".join(
        f"D9{i:05d}||renal disease type {i}\n" for i in range(5000)), encoding="utf8")
    pipeline = tmp_path / "linker"
    invoke_cli("init-linker", pipeline, "--dictionary", dictionary,
               "--encoder", trained / "fast" / "hybrid")
    script = (
        "import numpy, spacy\n"
        f"nlp = spacy.load({str(pipeline)!r})\n"
        "def docs(first):\n"
        "    for i in range(first, first + 300):\n"
        "        text = ['kidney failure', 'renal insufficiency', 'heart attack'][i % 3] + f' {i}'\n"
        "        doc = nlp.make_doc(text)\n"
        "        doc.ents = [doc.char_span(0, len(text), label='Disease')]\n"
        "        yield doc\n"
        "list(nlp.pipe(docs(0), batch_size=300))\n"
        # a search of many queries, as linking a corpus makes, runs on several threads
        "dense = nlp.get_pipe('bio_linker').index.dense.index\n"
        "dense.search(numpy.random.default_rng(0).random((2000, dense.d), dtype='float32'), 5)\n"
        # the workers link texts the parent has not (no cached link to reuse)
        "there = [d.ents[0].kb_id_ for d in nlp.pipe(docs(300), n_process=2, batch_size=50)]\n"
        "here = [d.ents[0].kb_id_ for d in nlp.pipe(docs(300), batch_size=300)]\n"
        "assert here == there and len(there) == 300, (here, there)\n"
        "print('ok')\n")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=240, env={**__import__("os").environ,
                                           "TOKENIZERS_PARALLELISM": "false"})
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stderr[-3000:]
