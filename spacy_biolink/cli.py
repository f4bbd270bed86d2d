"""`python -m spacy_biolink ...`: build, evaluate and use linking pipelines."""
import json
import logging
from pathlib import Path
from typing import List, Optional

import typer
from wasabi import msg

from .errors import BioLinkError, Errors
from .util import atomic_file

app = typer.Typer(name="spacy_biolink", add_completion=False, no_args_is_help=True,
                  pretty_exceptions_enable=False,
                  help="Biomedical entity linking for spaCy.")


def _fail_cleanly(func):
    """Show a BioLinkError as one readable line and exit 1, instead of a traceback."""
    import functools

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except BioLinkError as err:
            msg.fail(str(err), exits=1)

    return wrapper


@app.command("init-linker")
@_fail_cleanly
def init_linker_cli(
    output_dir: Path = typer.Argument(..., help="Directory for the pipeline (spacy.load opens it)"),
    dictionary: Path = typer.Option(..., "--dictionary", "-d", help="Dictionary file (.gz ok)"),
    format: Optional[str] = typer.Option(None, "--format", "-f",
                                         help="medic|biosyn|ctd|tsv|jsonl; inferred if omitted"),
    config: Optional[Path] = typer.Option(None, "--config", "-c",
                                          help="Pipeline .cfg to use instead of the default"),
    augment: List[Path] = typer.Option([], "--augment", "-a",
                                       help="PubTator corpus whose gold mentions join the "
                                            "dictionary (repeatable: train, dev)"),
    spelling_map: Optional[Path] = typer.Option(None, "--spelling-map",
                                                help="`wrong||right` file of mention typos"),
    encoder: Optional[Path] = typer.Option(None, "--encoder", "-e",
                                           help="Trained encoder directory (from `train`) "
                                                "instead of the config's TF-IDF encoder"),
    force: bool = typer.Option(False, "--force", help="Replace a non-empty OUTPUT_DIR"),
):
    """Build a blank English pipeline with bio_linker over DICTIONARY and save it."""
    import time

    from .pipeline import init_linker

    started = time.perf_counter()
    nlp = init_linker(output_dir, dictionary, format=format, config_path=config,
                      augment=augment, spelling_map=spelling_map, encoder=encoder, force=force)
    linker = nlp.get_pipe("bio_linker")
    msg.good(f"Saved pipeline to {output_dir}: {linker.dictionary.n_concepts} concepts, "
             f"{linker.dictionary.n_names} names ({time.perf_counter() - started:.1f}s)")


@app.command("evaluate")
@_fail_cleanly
def evaluate_cli(
    model_dir: Path = typer.Argument(..., help="Saved pipeline with bio_linker"),
    corpus: Path = typer.Argument(..., help="PubTator corpus (.gz ok)"),
    types: Optional[str] = typer.Option(None, "--types", help="Comma-separated mention types"),
    pmids: Optional[Path] = typer.Option(None, "--pmids", help="File of PMIDs to keep, one a line"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write metrics JSON here"),
    ks: str = typer.Option("1,2,3,5,10", "--ks", help="Comma-separated k of acc@k (1 and 5 are printed)"),
):
    """Gold-mention acc@1 / acc@5 of a saved pipeline on a PubTator corpus."""
    from .evaluation import evaluate_gold_mentions, format_table
    from .pipeline import load_linker_pipeline

    nlp = load_linker_pipeline(model_dir)
    type_set = {t.strip() for t in types.split(",") if t.strip()} if types else None
    pmid_set = None
    if pmids is not None:
        pmid_set = {line.strip() for line in pmids.read_text(encoding="utf8").splitlines() if line.strip()}
    k_values = sorted({int(k) for k in ks.split(",") if k.strip()} | {1, 5})
    result = evaluate_gold_mentions(nlp, corpus, types=type_set, pmids=pmid_set, ks=k_values,
                                    progress=True)
    result["model"] = str(model_dir)
    print(format_table(result))
    if output is not None:
        with atomic_file(output) as fileh:
            json.dump(result, fileh, indent=2)
        msg.good(f"Wrote {output}")


@app.command("evaluate-e2e")
@_fail_cleanly
def evaluate_end_to_end_cli(
    model_dir: Path = typer.Argument(..., help="Saved pipeline: NER (or any span source) + bio_linker"),
    gold: Path = typer.Argument(..., help="DocBin from `convert` (gold ents with kb_id_)"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write metrics JSON here"),
):
    """End-to-end NER and linking P/R/F1 on raw text: a predicted span counts only with
    the right boundaries (and, for linking, the right concept)."""
    from .evaluation import evaluate_end_to_end, format_end_to_end_table
    from .pipeline import load_linker_pipeline

    result = evaluate_end_to_end(load_linker_pipeline(model_dir), gold)
    result["model"] = str(model_dir)
    print(format_end_to_end_table(result))
    if output is not None:
        with atomic_file(output) as fileh:
            json.dump(result, fileh, indent=2)
        msg.good(f"Wrote {output}")


@app.command("report")
@_fail_cleanly
def report_cli(
    metrics: List[str] = typer.Argument(..., help="NAME=metrics.json from `evaluate` (one per linker)"),
    end_to_end: List[str] = typer.Option([], "--end-to-end", help="NAME=e2e.json from `evaluate-e2e`"),
    output: Path = typer.Option(..., "--output", "-o", help="Markdown table to write"),
    plot: Optional[Path] = typer.Option(None, "--plot", help="acc@k plot (PNG) to write"),
):
    """One Markdown table comparing linkers, printed and written; optionally an acc@k plot."""
    from .evaluation.report import comparison_table, plot_acc_at_k

    def read(pairs: List[str]):
        out = {}
        for pair in pairs:
            name, sep, path = pair.partition("=")
            if not sep or not Path(path).is_file():
                raise BioLinkError(Errors.E404.format(pair=pair))
            out[name] = json.loads(Path(path).read_text(encoding="utf8"))
        return out

    table = comparison_table(read(metrics), read(end_to_end))
    print(table)
    with atomic_file(output) as fileh:
        fileh.write(table + "\n")
    msg.good(f"Wrote {output}")
    if plot is not None:
        if plot_acc_at_k(read(metrics), plot) is None:
            msg.warn("matplotlib is not installed: no plot (pip install matplotlib)")
        else:
            msg.good(f"Wrote {plot}")


@app.command("convert")
@_fail_cleanly
def convert_cli(
    input_path: Path = typer.Argument(..., help="PubTator corpus (.gz ok)"),
    output_path: Path = typer.Argument(..., help="DocBin to write (.spacy)"),
    types: Optional[str] = typer.Option(None, "--types", help="Comma-separated mention types"),
    pmids: Optional[Path] = typer.Option(None, "--pmids", exists=True, dir_okay=False,
                                         help="File of PMIDs to keep, one a line"),
):
    """Convert a PubTator corpus to a spaCy DocBin for `spacy train` and end-to-end evaluation."""
    from .corpora import convert_pubtator

    type_set = {t.strip() for t in types.split(",") if t.strip()} if types else None
    pmid_set = None
    if pmids is not None:
        pmid_set = {line.strip() for line in pmids.read_text(encoding="utf8").splitlines() if line.strip()}
    stats = convert_pubtator(input_path, output_path, types=type_set, pmids=pmid_set)
    msg.good(f"Wrote {output_path}")
    msg.table([("docs", stats.docs), ("mentions", stats.mentions),
               ("without id (kb_id \"\")", stats.without_id), ("ents", stats.ents),
               ("misaligned (widened to tokens)", stats.misaligned),
               ("overlapping (not in ents)", stats.overlapping_dropped),
               ("unplaceable (left out)", stats.unplaceable),
               ("text mismatches", stats.text_mismatches)])


@app.command("train-vectors")
@_fail_cleanly
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
):
    """Train word vectors (gensim, skip-gram) on corpora and dictionary names."""
    import time

    from .readers import load_dictionary
    from .wordvectors import corpus_sentences, tokenize, train_word_vectors

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


@app.command("train", context_settings={"allow_extra_args": True,
                                        "ignore_unknown_options": True})
@_fail_cleanly
def train_cli(
    ctx: typer.Context,
    config_path: Path = typer.Argument(..., help="Training config (configs/*.cfg)"),
    output: Path = typer.Option(..., "--output", "-o", help="Directory for the trained encoder"),
    resume: bool = typer.Option(False, "--resume", help="Continue from OUTPUT's last checkpoint"),
):
    """Train a name encoder from a config; settings can be overridden as in `spacy train`
    (--paths.dictionary FILE --paths.train FILE --training.max_epochs 3 ...)."""
    from spacy.cli._util import parse_config_overrides

    from .training import train_from_config

    meta = train_from_config(config_path, output, overrides=parse_config_overrides(ctx.args),
                             resume=resume)
    msg.good(f"Saved trained encoder to {output}")
    scores = {k: v for k, v in meta.items() if isinstance(v, (int, float))}
    if scores:
        msg.table(sorted(scores.items()))


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    app()
