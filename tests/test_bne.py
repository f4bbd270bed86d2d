import gzip
import json
from pathlib import Path

import numpy
import pytest
import spacy

torch = pytest.importorskip("torch")

from spacy_biolink.encoders.bne import embed, name_words  # noqa: E402
from spacy_biolink.encoders.saved import load_encoder  # noqa: E402
from spacy_biolink.errors import BioLinkError  # noqa: E402
from spacy_biolink.kb.readers import load_dictionary  # noqa: E402
from spacy_biolink.training import train_from_config  # noqa: E402
from spacy_biolink.encoders.wordvectors import WordVectors  # noqa: E402
from spacy_biolink.training.wordvectors import corpus_sentences, train_word_vectors  # noqa: E402

from .conftest import TINY_MEDIC, doc_with_ents, invoke_cli  # noqa: E402

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "bne.cfg"
# Mentions of the tiny dictionary's concepts, for dev selection and augmentation.
CORPUS = """\
1|t|Type 2 diabetes and breast cancer.
1|a|NIDDM patients and Huntington chorea.
1\t0\t15\tType 2 diabetes\tDisease\tD003924
1\t20\t33\tbreast cancer\tDisease\tD001943
1\t35\t40\tNIDDM\tDisease\tD003924
1\t54\t71\tHuntington chorea\tDisease\tD006816

"""
# Tiny sizes and a high learning rate: the test overfits 19 names in seconds.
TINY = {"encoder.char_dim": 8, "encoder.char_hidden": 16, "encoder.word_hidden": 16,
        "encoder.dropout": 0.0, "training.batch_size": 32, "training.learning_rate": 0.02,
        "training.patience": 1000}


@pytest.fixture(autouse=True, scope="module")
def one_thread(torch_one_thread):
    yield


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("bne")
    dictionary = root / "medic.txt.gz"
    with gzip.open(dictionary, "wt", encoding="utf8") as fileh:
        fileh.write(TINY_MEDIC)
    corpus = root / "corpus.PubTator"
    corpus.write_text(CORPUS, encoding="utf8")
    names = list(load_dictionary(dictionary).names)
    vectors = train_word_vectors(list(corpus_sentences([corpus], names)) * 5, dim=12, epochs=3,
                                 seed=0, extra_words={w for n in names for w in name_words(n)})
    # A corpus this small leaves fastText vectors near zero; real ones have norms ~3, and
    # the concept and context losses compare the encodings with them by dot product.
    norms = numpy.linalg.norm(vectors.vectors, axis=1, keepdims=True)
    WordVectors(vectors.words, 3.0 * vectors.vectors / norms).to_disk(root / "vectors")
    return {"dictionary": dictionary, "corpus": corpus, "vectors": root / "vectors"}


def train(files, output, *, resume=False, **settings):
    overrides = {"paths.dictionary": str(files["dictionary"]),
                 "paths.vectors": str(files["vectors"]), **TINY, **settings}
    return train_from_config(CONFIG, output, overrides=overrides, resume=resume)


def training_losses(output):
    return [json.loads(line)["loss"] for line in (output / "training.jsonl").read_text().splitlines()]


def test_preprocessing_drops_stop_words_and_punctuation():
    assert name_words("Cancer of the Breast, NOS") == ["cancer", "breast"]
    assert name_words("NOS") == ["nos"]  # all stop words: kept, or the name would be empty
    assert name_words("a" * 40) == ["a" * 32]


def test_overfits_a_tiny_dictionary(files, tmp_path):
    # Synonym loss alone goes to ~0; the Option 2 targets of concepts that share words
    # ("diabetes") overlap, so the full loss only falls.
    train(files, tmp_path / "syn", **{"training.max_epochs": 60, "training.concept_weight": 0,
                                      "training.context_weight": 0})
    assert training_losses(tmp_path / "syn")[-1] < 0.1
    train(files, tmp_path, **{"training.max_epochs": 60})
    losses = training_losses(tmp_path)
    assert losses[-1] < 0.4 * losses[0]

    model, meta = load_encoder(tmp_path)
    assert meta["method"] == "BNE" and model.attrs["output"] == "dense"
    dictionary = load_dictionary(files["dictionary"])
    names = list(dictionary.names)
    vectors = embed(model, names)
    assert numpy.allclose(numpy.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    concepts = [set(dictionary.concepts_of_name(n)) for n in range(len(names))]
    similarities = vectors @ vectors.T
    for n, owners in enumerate(concepts):
        if len(owners) > 1:
            continue  # "HD" names two concepts
        synonyms = [m for m in range(len(names)) if m != n and concepts[m] & owners]
        ranked = [m for m in numpy.argsort(-similarities[n]) if m != n]
        assert set(ranked[:len(synonyms)]) == set(synonyms), names[n]


def test_bytes_round_trip_gives_identical_vectors(files, tmp_path):
    train(files, tmp_path, **{"training.max_epochs": 2})
    model, _ = load_encoder(tmp_path)
    copy, _ = load_encoder(tmp_path)
    fresh = spacy.util.registry.resolve(
        {"m": dict(spacy.util.load_config(tmp_path / "encoder.cfg")["model"])})["m"]
    fresh.from_bytes(model.to_bytes())
    texts = ["type 2 diabetes", "breast tumour", "", "nos", "xyzzy qwerty"]
    assert numpy.array_equal(embed(fresh, texts), embed(model, texts))
    assert numpy.array_equal(embed(copy, texts), embed(model, texts))
    # Batched encoding of many names equals one at a time (padding never leaks in).
    together = embed(model, texts)
    alone = numpy.vstack([embed(model, [t]) for t in texts])
    assert numpy.allclose(together, alone, atol=1e-5)


def test_resume_continues_exactly(files, tmp_path):
    train(files, tmp_path / "straight", **{"training.max_epochs": 4})
    train(files, tmp_path / "split", **{"training.max_epochs": 2})
    train(files, tmp_path / "split", resume=True, **{"training.max_epochs": 4})
    assert training_losses(tmp_path / "split") == pytest.approx(training_losses(tmp_path / "straight"))
    assert ((tmp_path / "split" / "model").read_bytes()
            == (tmp_path / "straight" / "model").read_bytes())
    with pytest.raises(BioLinkError, match="E645"):
        train(files, tmp_path / "split", resume=True,
              **{"training.max_epochs": 5, "encoder.max_word_length": 32,
                 "training.add_train_mentions": True, "paths.train": str(files["corpus"])})


def test_output_dim_must_match_the_targets(files, tmp_path):
    with pytest.raises(BioLinkError, match="E644"):
        train(files, tmp_path, **{"encoder.output_dim": 7, "training.max_epochs": 1})


def test_cli_train_init_linker_load_and_link(files, tmp_path):
    out = tmp_path / "bne"
    settings = [f"--{k}={v}" for k, v in TINY.items()]
    invoke_cli("train", CONFIG, "--output", out, "--paths.dictionary", files["dictionary"],
            "--paths.vectors", files["vectors"], "--paths.train", files["corpus"],
            "--paths.dev", files["corpus"], "--training.max_epochs", 3, *settings)
    meta = json.loads((out / "meta.json").read_text())
    assert meta["train_mentions_added"] == 4 and "acc@1" in meta["dev"]
    assert (out / "training.png").is_file() and (out / "checkpoint.pt").is_file()
    invoke_cli("init-linker", tmp_path / "pipeline", "--dictionary", files["dictionary"],
            "--encoder", out, "--augment", files["corpus"])
    config = spacy.util.load_config(tmp_path / "pipeline" / "config.cfg")
    assert config["components"]["bio_linker"]["encoder"]["@architectures"] == "spacy-biolink.BneEncoder.v1"
    # The encoder's flat index becomes AutoFaissIndex.v1 (flat below 1M names): the
    # in-memory linker below uses the flat FaissIndex.v1 and must agree.
    assert config["components"]["bio_linker"]["index"]["@misc"] == "spacy-biolink.AutoFaissIndex.v1"
    # Queried with the folding the trainer used, not the TF-IDF linker's extra folding.
    normalizer = config["components"]["bio_linker"]["normalizer"]
    assert not normalizer["spelling_variants"] and not normalizer["strip_plurals"]

    nlp = spacy.load(tmp_path / "pipeline")
    from spacy_biolink.training.dev import build_linker

    model, _ = load_encoder(out)
    in_memory = build_linker(model, load_dictionary(files["dictionary"]),
                             index_config={"@misc": "spacy-biolink.FaissIndex.v1", "kind": "flat"},
                             augment=[files["corpus"]])
    text = "NIDDM, juvenile diabetes, breast tumor and Huntington's chorea."
    ents = ["NIDDM", "juvenile diabetes", "breast tumor", "Huntington's chorea"]
    loaded = nlp(doc_with_ents(nlp, text, ents))
    memory = in_memory(doc_with_ents(in_memory, text, ents))
    assert [e.kb_id_ for e in loaded.ents] == [e.kb_id_ for e in memory.ents]
    assert all(e.kb_id_ for e in loaded.ents)
    for a, b in zip(loaded.ents, memory.ents):
        assert [c for c, _ in a._.kb_ents] == [c for c, _ in b._.kb_ents]
        assert numpy.allclose([s for _, s in a._.kb_ents], [s for _, s in b._.kb_ents], atol=1e-5)


def test_split_trains_on_its_training_names_only_and_is_saved_for_eval_synonyms(files, tmp_path):
    from spacy_biolink.evaluation.synonym_retrieval import (TEST, TRAIN, ZERO_SHOT,
                                                            SynonymSplit, make_split,
                                                            resolve_split)
    from spacy_biolink.training.bne import split_training_examples

    dictionary = load_dictionary(files["dictionary"])
    split = make_split(dictionary, seed=3, zero_shot_concepts=1, test_rounds=1,
                       validation_rounds=0)
    split.to_disk(tmp_path / "split.json")
    examples = split_training_examples(dictionary, SynonymSplit.from_disk(tmp_path / "split.json"))
    held_out = set(split.texts_of(TEST)) | set(split.texts_of(ZERO_SHOT))
    assert held_out and examples.texts == split.texts_of(TRAIN)
    assert not held_out & set(examples.texts)
    for text, concept in zip(examples.texts, examples.concepts):
        owner = split.concept_ids[split.concepts[split.texts.index(text)]]
        assert dictionary.primary_id(concept) == owner

    meta = train(files, tmp_path / "out", **{"training.max_epochs": 2,
                                              "paths.split": str(tmp_path / "split.json")})
    assert meta["train_names"] == len(examples.texts)
    assert meta["split"]["fingerprint"] == split.fingerprint
    # eval-synonyms finds the split the encoder was trained on, in its directory
    assert resolve_split(dictionary, encoder=str(tmp_path / "out")).fingerprint == split.fingerprint
