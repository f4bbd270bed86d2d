"""`python -m spacy_biolink ...`: build, evaluate and use linking pipelines."""
import json
import logging
from pathlib import Path
from typing import Dict, List, Optional

import typer
from wasabi import msg

from .errors import BioLinkError, Errors
from .files import atomic_file, check_output_path

app = typer.Typer(name="spacy_biolink", add_completion=False, no_args_is_help=True,
                  pretty_exceptions_enable=False,
                  help="Biomedical entity linking for spaCy.")


def _fail_cleanly(func):
    """Show a BioLinkError as one readable line and exit 1, instead of a traceback."""
    import functools

    from confection import ConfigValidationError

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except BioLinkError as err:
            msg.fail(str(err), exits=1)
        except ConfigValidationError as err:
            # spaCy's own message already lists the setting and what is wrong with it
            msg.fail("The config is not valid:", str(err).strip(), exits=1)

    return wrapper


def _corpus_filters(types: Optional[str], pmids: Optional[Path]):
    """--types "A,B" and --pmids FILE (one PMID a line) as sets; None where not given."""
    from .files import check_no_control_characters, iter_lines

    type_set = {t.strip() for t in types.split(",") if t.strip()} if types else None
    pmid_set = None
    if pmids is not None:
        pmid_set = set()
        for line_no, line in iter_lines(pmids, "--pmids file"):
            check_no_control_characters(pmids, line_no, line.strip(), "a PMID")
            if line.strip():
                pmid_set.add(line.strip())
    return type_set, pmid_set


@app.command("init-linker", context_settings={"allow_extra_args": True,
                                              "ignore_unknown_options": True})
@_fail_cleanly
def init_linker_cli(
    ctx: typer.Context,
    output_dir: Path = typer.Argument(..., help="Directory for the pipeline (spacy.load opens it)"),
    dictionary: Path = typer.Option(..., "--dictionary", "-d", help="Dictionary file (.gz ok)"),
    format: Optional[str] = typer.Option(None, "--format", "-f",
                                         help="medic|biosyn|ctd|tsv|jsonl|umls|obo; inferred "
                                              "from the content if omitted (umls: the META "
                                              "directory or MRCONSO.RRF)"),
    config: Optional[Path] = typer.Option(None, "--config", "-c",
                                          help="Pipeline .cfg to use instead of the default"),
    languages: Optional[str] = typer.Option(None, "--languages",
                                            help="umls: LAT values to keep, comma-separated "
                                                 "(default ENG; 'all' for every language)"),
    sources: Optional[str] = typer.Option(None, "--sources",
                                          help="umls: SABs to keep, e.g. MSH,SNOMEDCT_US "
                                               "(default all)"),
    keep_suppressed: bool = typer.Option(False, "--keep-suppressed",
                                         help="umls: keep strings whose SUPPRESS is not N"),
    semantic_types: Optional[str] = typer.Option(None, "--semantic-types",
                                                 help="umls (and jsonl types): keep concepts "
                                                      "of these TUIs or semantic groups, "
                                                      "e.g. DISO,T121"),
    code_sources: Optional[str] = typer.Option(None, "--code-sources",
                                               help="umls: SABs whose codes become alternative "
                                                    "ids, e.g. MSH,OMIM (MeSH ids bare, "
                                                    "OMIM:n); default none"),
    synonym_scopes: Optional[str] = typer.Option(None, "--synonym-scopes",
                                                 help="obo: synonym scopes that become names "
                                                      "(default EXACT; e.g. EXACT,RELATED)"),
    xref_prefixes: Optional[str] = typer.Option(None, "--xref-prefixes",
                                                help="obo: xref prefixes that become "
                                                     "alternative ids (default MESH,MSH,OMIM,"
                                                     "MIM,UMLS,UMLS_CUI; 'none' for none)"),
    augment: List[Path] = typer.Option([], "--augment", "-a",
                                       help="PubTator corpus whose gold mentions join the "
                                            "dictionary (repeatable: train, dev)"),
    spelling_map: Optional[Path] = typer.Option(None, "--spelling-map",
                                                help="`wrong||right` file of mention typos"),
    encoder: Optional[Path] = typer.Option(None, "--encoder", "-e",
                                           help="Trained encoder directory (from `train`) "
                                                "instead of the config's TF-IDF encoder"),
    force: bool = typer.Option(False, "--force", help="Replace a non-empty OUTPUT_DIR"),
    verifier: Optional[Path] = typer.Option(None, "--verifier",
                                            help="Trained synonymy verifier (train "
                                                 "configs/siamese.cfg): rejects candidates"),
    verifier_mode: str = typer.Option("nil", "--verifier-mode",
                                      help="nil: a rejected top candidate makes the mention "
                                           "NIL; next: try the next candidates"),
    verifier_threshold: Optional[float] = typer.Option(
        None, "--verifier-threshold", help="Default: the dev-chosen one in its meta.json"),
    reranker: Optional[Path] = typer.Option(None, "--reranker",
                                            help="Trained cross-encoder reranker (train "
                                                 "configs/reranker.cfg): reorders the top "
                                                 "candidates reading each mention in context"),
):
    """Build a blank English pipeline with bio_linker over DICTIONARY and save it; config
    settings can be overridden as in `spacy assemble` (--components.bio_linker.k 10, or
    --components.bio_linker.index.kind hnsw for a dense encoder's approximate index)."""
    import time

    from spacy.cli._util import parse_config_overrides

    from .pipeline import init_linker

    def listed(value: Optional[str], empty: str):
        if value is None:
            return None
        if value.strip().lower() == empty:
            return []
        return [part.strip() for part in value.split(",") if part.strip()]

    filters = {"languages": listed(languages, "all"), "sources": listed(sources, "all"),
               "suppressed": True if keep_suppressed else None,
               "semantic_types": listed(semantic_types, "all"),
               "synonym_scopes": listed(synonym_scopes, "none"),
               "xref_prefixes": listed(xref_prefixes, "none"),
               "code_sources": listed(code_sources, "none")}
    started = time.perf_counter()
    nlp = init_linker(output_dir, dictionary, format=format, config_path=config,
                      augment=augment, spelling_map=spelling_map, encoder=encoder, force=force,
                      verifier=verifier, verifier_mode=verifier_mode,
                      verifier_threshold=verifier_threshold, reranker=reranker,
                      overrides=parse_config_overrides(ctx.args), dictionary_filters=filters)
    linker = nlp.get_pipe("bio_linker")
    msg.good(f"Saved pipeline to {output_dir}: {linker.dictionary.n_concepts} concepts, "
             f"{linker.dictionary.n_names} names ({time.perf_counter() - started:.1f}s)")


def _parse_ks(value: str) -> List[int]:
    """--ks "1,5,10" as sorted distinct integers >= 1, with 1 and 5 (the printed ones)."""
    try:
        ks = {int(k) for k in value.split(",") if k.strip()}
    except ValueError:
        raise BioLinkError(Errors.E481.format(option="--ks", value=value)) from None
    if any(k < 1 for k in ks):
        raise BioLinkError(Errors.E481.format(option="--ks", value=value))
    return sorted(ks | {1, 5})


def _check_at_least(option: str, value: int, minimum: int) -> None:
    if value < minimum:
        raise BioLinkError(Errors.E480.format(option=option, what=f"an integer >= {minimum}",
                                              value=value))


@app.command("evaluate")
@_fail_cleanly
def evaluate_cli(
    model_dir: Path = typer.Argument(..., help="Saved pipeline with bio_linker"),
    corpus: Path = typer.Argument(..., help="PubTator corpus (.gz ok)"),
    types: Optional[str] = typer.Option(None, "--types", help="Comma-separated mention types"),
    pmids: Optional[Path] = typer.Option(None, "--pmids", help="File of PMIDs to keep, one a line"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write metrics JSON here"),
    ks: str = typer.Option("1,2,3,5,10", "--ks", help="Comma-separated k of acc@k (1 and 5 are printed)"),
    errors: Optional[Path] = typer.Option(None, "--errors", help="Write the mentions wrong at acc@1 here (JSONL)"),
):
    """Gold-mention acc@1 / acc@5 of a saved pipeline on a PubTator corpus."""
    from .evaluation import evaluate_gold_mentions, format_table
    from .pipeline import load_linker_pipeline

    k_values = _parse_ks(ks)
    for path, what in ((output, "the metrics"), (errors, "the wrong mentions")):
        if path is not None:
            check_output_path(path, what=what)
    type_set, pmid_set = _corpus_filters(types, pmids)
    nlp = load_linker_pipeline(model_dir)
    wrong: Optional[List[Dict]] = [] if errors is not None else None
    result = evaluate_gold_mentions(nlp, corpus, types=type_set, pmids=pmid_set, ks=k_values,
                                    progress=True, errors=wrong)
    result["model"] = str(model_dir)
    if not result["n_evaluated"]:
        # acc@1 0.0 would read as a linker that is always wrong
        why = ", ".join(f"{n} {reason.replace('_', ' ')}" for reason, n in
                        result.get("skipped", {}).items() if n) or "no mention at all"
        filters = [f"--types {types}"] * bool(types) + [f"--pmids {pmids}"] * bool(pmids)
        if filters:
            why += " after " + " and ".join(filters)
        raise BioLinkError(Errors.E461.format(corpus=corpus, why=why,
                                              n_mentions=result.get("n_mentions", 0)))
    print(format_table(result))
    if errors is not None:
        with atomic_file(errors) as fileh:
            fileh.writelines(json.dumps(record) + "\n" for record in wrong)
        msg.good(f"Wrote {len(wrong)} mentions wrong at acc@1 to {errors}")
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

    if output is not None:
        check_output_path(output, what="the metrics")
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
    from .evaluation.report import check_metrics, comparison_table, plot_acc_at_k
    from .files import read_json

    check_output_path(output, what="the table", example="comparison.md")
    if plot is not None:
        check_output_path(plot, what="the plot", example="acc_at_k.png")

    def read(pairs: List[str], command: str):
        out = {}
        for pair in pairs:
            name, sep, path = pair.partition("=")
            if not sep or not Path(path).exists():
                raise BioLinkError(Errors.E404.format(pair=pair))
            out[name] = check_metrics(read_json(path, "Metrics file", expected=f"the metrics "
                                                f"object written by `{command}`", type=dict),
                                      path, command)
        return out

    table = comparison_table(read(metrics, "evaluate"), read(end_to_end, "evaluate-e2e"))
    print(table)
    with atomic_file(output) as fileh:
        fileh.write(table + "\n")
    msg.good(f"Wrote {output}")
    if plot is not None:
        if plot_acc_at_k(read(metrics, "evaluate"), plot) is None:
            msg.warn("matplotlib is not installed: no plot (pip install matplotlib)")
        else:
            msg.good(f"Wrote {plot}")


@app.command("convert")
@_fail_cleanly
def convert_cli(
    input_path: Path = typer.Argument(..., help="PubTator corpus (.gz ok)"),
    output_path: Path = typer.Argument(..., help="DocBin to write (.spacy)"),
    types: Optional[str] = typer.Option(None, "--types", help="Comma-separated mention types"),
    pmids: Optional[Path] = typer.Option(None, "--pmids", help="File of PMIDs to keep, one a line"),
):
    """Convert a PubTator corpus to a spaCy DocBin for `spacy train` and end-to-end evaluation."""
    from .corpora import convert_pubtator

    check_output_path(output_path, what="the DocBin", example="train.spacy")
    type_set, pmid_set = _corpus_filters(types, pmids)
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
    force: bool = typer.Option(False, "--force", help="Replace a non-empty OUTPUT_DIR"),
):
    """Train word vectors (gensim, skip-gram) on corpora and dictionary names."""
    import time

    from .readers import load_dictionary
    from .wordvectors import corpus_sentences, tokenize, train_word_vectors

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


@app.command("train", context_settings={"allow_extra_args": True,
                                        "ignore_unknown_options": True})
@_fail_cleanly
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

    from .training import train_from_config

    # The trainers write checkpoints into OUTPUT as they go (for --resume), so it cannot
    # be swapped in at the end like init-linker's: an existing one is refused, or with
    # --force emptied.
    check_output_path(output, kind="dir", what="the trained encoder", force=force or resume)
    if force and not resume and output.is_dir():
        for child in output.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()

    meta = train_from_config(config_path, output, overrides=parse_config_overrides(ctx.args),
                             resume=resume)
    msg.good(f"Saved trained encoder to {output}")
    scores = {k: v for k, v in meta.items() if isinstance(v, (int, float))}
    if scores:
        msg.table(sorted(scores.items()))


@app.command("link")
@_fail_cleanly
def link_cli(
    input_path: Path = typer.Argument(..., help=".txt (one document a line) or .jsonl "
                                                "({\"text\": ...} a line, other keys kept); .gz ok"),
    model: Path = typer.Option(..., "--model", "-m", help="Saved pipeline with bio_linker "
                                                          "(and an ner, to find entities)"),
    output: Path = typer.Option(..., "--output", "-o", help="JSONL to write, one object a document"),
    format: Optional[str] = typer.Option(None, "--format", "-f",
                                         help="txt|jsonl; inferred from INPUT's name if omitted"),
    batch_size: int = typer.Option(64, "--batch-size", "-b", help="Documents per nlp.pipe batch"),
    n_process: int = typer.Option(1, "--n-process", "-n", help="Worker processes for nlp.pipe"),
    engine: str = typer.Option("local", "--engine", help="local: one process, one file; ray: "
                               "INPUT a file or directory of shards, OUTPUT a directory"),
    num_workers: Optional[int] = typer.Option(None, "--num-workers", help="ray: actors, each "
                                              "loads the pipeline once (default: cluster CPUs)"),
    address: Optional[str] = typer.Option(None, "--address", help="ray: cluster to join "
                                          "(auto, ray://HOST:10001); default: a local one"),
    num_gpus: Optional[float] = typer.Option(None, "--num-gpus", help="ray: GPUs per actor"),
    output_format: Optional[str] = typer.Option(None, "--output-format",
                                                help="ray: jsonl (default) or parquet"),
    code: Optional[Path] = typer.Option(None, "--code", help="ray: Python file each worker "
                                        "imports first (custom components)"),
):
    """Find and link the entities of every document of INPUT; write them as JSON lines."""
    import time

    if engine != "local":
        return _link_distributed(input_path, model, output, engine=engine, batch_size=batch_size,
                                 num_workers=num_workers, address=address, num_gpus=num_gpus,
                                 output_format=output_format, code=code)
    ray_only = {"--num-workers": num_workers, "--address": address, "--num-gpus": num_gpus,
                "--output-format": output_format, "--code": code}
    if any(value is not None for value in ray_only.values()):
        raise BioLinkError(Errors.E809.format(
            options=", ".join(k for k, v in ray_only.items() if v is not None)))
    if input_path.is_dir():
        raise BioLinkError(Errors.E810.format(path=input_path))
    from .link_files import link_file

    started = time.perf_counter()
    stats = link_file(model, input_path, output, format=format, batch_size=batch_size,
                      n_process=n_process)
    msg.good(f"Wrote {output} ({time.perf_counter() - started:.1f}s)")
    msg.table([("docs", stats.docs), ("entities", stats.entities), ("linked", stats.linked),
               ("NIL", stats.nil), ("docs without entities", stats.docs_without_entities)])


def _link_distributed(input_path: Path, model: Path, output: Path, *, engine: str, **options):
    """`link --engine ray`: spacy_biolink.distributed does the work; this only reports."""
    from .distributed import link_corpus

    if engine != "ray":
        raise BioLinkError(Errors.E811.format(what="engine", value=engine, options="local, ray"))
    options = {k: v for k, v in options.items() if v is not None}
    report = link_corpus(input_path, model, output, **options)
    msg.good(f"Wrote {report['shards_done_now']} shard(s) to {output} "
             f"({report['this_run']['docs_per_second']} docs/s, {report['seconds']:.1f}s); "
             f"{report['shards_done_earlier']} done earlier; report: {output / '_report.json'}")
    msg.table([("docs in", report["docs_in"]), ("docs out", report["docs_out"]),
               ("malformed (not linked)", report["errors"]), ("entities", report["entities"])])


def _parse_kb_url_template(value: Optional[str]):
    """A URL with {}, or a JSON object {"PREFIX": URL, "": URL} for ids of several sources;
    checked here, before any work (http(s) only, exactly one {})."""
    from .visualize import KbUrls

    if value is None:
        return value
    template = value
    if value.lstrip().startswith("{\""):
        try:
            template = json.loads(value)
        except json.JSONDecodeError as err:
            from .errors import Errors

            raise BioLinkError(Errors.E755.format(value=value, reason=f"not valid JSON: {err}")) from None
    KbUrls(template, source="--kb-url-template")
    return template


@app.command("visualize")
@_fail_cleanly
def visualize_cli(
    model: Path = typer.Argument(..., help="Saved pipeline with bio_linker"),
    input_path: Optional[Path] = typer.Argument(None, help=".txt or .jsonl documents (as for "
                                                           "`link`; a .jsonl \"entities\" list "
                                                           "gives the spans to link)"),
    text: Optional[str] = typer.Option(None, "--text", "-t", help="One text instead of INPUT"),
    output: Path = typer.Option(..., "--output", "-o", help="HTML page to write"),
    doc: Optional[int] = typer.Option(None, "--doc", help="Show only document N of INPUT (from 0)"),
    limit: int = typer.Option(20, "--limit", help="Show at most this many documents"),
    kb_url_template: Optional[str] = typer.Option(
        None, "--kb-url-template",
        help="URL with {} for the id, or JSON {\"OMIM\": \"https://omim.org/entry/{}\", \"\": URL}. "
             "Default: the pipeline's meta biolink.kb_url_template, else MeSH + OMIM pages"),
):
    """Write an HTML page (displaCy) of the linked entities, each id a link to its concept."""
    from .errors import Errors
    from .link_files import (InputDocument, make_input_doc, read_input_documents,
                             warn_if_nothing_to_link)
    from .pipeline import load_linker_pipeline
    from .visualize import MEDIC_KB_URL_TEMPLATES, kb_url_template_of, render_linked

    check_output_path(output, what="the HTML page", example="linked.html")
    if (input_path is None) == (text is None):
        raise BioLinkError(Errors.E757.format(got="both" if text is not None else "neither"))
    _check_at_least("--limit", limit, 1)
    if input_path is not None:
        documents = list(read_input_documents(input_path))
        if doc is not None:
            if not 0 <= doc < len(documents):
                raise BioLinkError(Errors.E756.format(index=doc, path=input_path, n=len(documents)))
            documents = [documents[doc]]
        documents = documents[:limit]
    else:
        documents = [InputDocument(text=text, line=1)]
    template = _parse_kb_url_template(kb_url_template)
    nlp = load_linker_pipeline(model)
    if "bio_linker" not in nlp.pipe_names:
        raise BioLinkError(Errors.E402.format(path=model, pipes=nlp.pipe_names))
    if template is None:
        template = kb_url_template_of(nlp, MEDIC_KB_URL_TEMPLATES,
                                      source=f"{Path(model) / 'meta.json'}")
    warn_if_nothing_to_link(nlp, sum(d.entities is None for d in documents), len(documents),
                            model_path=model)
    docs = []
    for document, linked in zip(documents, nlp.pipe(make_input_doc(nlp, d, input_path or "--text")
                                                    for d in documents)):
        keys = document.passthrough
        title = keys.get("title") or keys.get("id") \
            or (f"PMID {keys['pmid']}" if keys.get("pmid") else None)
        if title is not None:
            linked.user_data["title"] = str(title)
        docs.append(linked)
    nil_id = nlp.get_pipe("bio_linker").cfg.get("nil_id", "NIL")
    html = render_linked(docs, kb_url_template=template, nil_id=nil_id, page=True,
                         kb=nlp.get_pipe("bio_linker").kb)
    with atomic_file(output) as fileh:
        fileh.write(html)
    n_ents = sum(len(d.ents) for d in docs)
    msg.good(f"Wrote {output}: {len(docs)} document(s), {n_ents} entities")


@app.command("assemble")
@_fail_cleanly
def assemble_cli(
    ner_dir: Path = typer.Argument(..., help="Trained NER pipeline (spacy train ... model-best)"),
    linker_dir: Path = typer.Argument(..., help="Saved pipeline with bio_linker (init-linker)"),
    output_dir: Path = typer.Argument(..., help="Directory for the joined pipeline"),
    force: bool = typer.Option(False, "--force", help="Replace a non-empty OUTPUT_DIR"),
):
    """Add LINKER_DIR's bio_linker after NER_DIR's ner and save: a text-in, links-out pipeline."""
    from .assemble import assemble_pipeline

    nlp = assemble_pipeline(ner_dir, linker_dir, output_dir, force=force)
    msg.good(f"Saved pipeline to {output_dir}: {nlp.pipe_names}")


@app.command("eval-synonyms")
@_fail_cleanly
def eval_synonyms_cli(
    encoder: str = typer.Argument(..., help="Trained encoder directory, or a baseline: "
                                            "sgw (mean word vector), sgw-cca, tfidf"),
    dictionary: Path = typer.Option(..., "--dictionary", "-d", help="Dictionary file (.gz ok)"),
    vectors: Optional[Path] = typer.Option(None, "--vectors", help="Word vectors (for sgw, sgw-cca)"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write metrics JSON here"),
    seed: Optional[int] = typer.Option(None, "--seed", help="Split seed; default: the split "
                                       "ENCODER was trained on, else 1"),
    split: Optional[Path] = typer.Option(None, "--split", help="A split.json to use instead"),
    zero_shot_concepts: float = typer.Option(1000, "--zero-shot-concepts",
                                             help="Count (or share if < 1) of zero-shot concepts"),
    test_rounds: int = typer.Option(1, "--test-rounds"),
    validation_rounds: int = typer.Option(1, "--validation-rounds"),
    train_queries: int = typer.Option(2000, "--train-queries",
                                      help="Training names sampled as queries (0: none)"),
    save_split: Optional[Path] = typer.Option(None, "--save-split", help="Write the split here"),
):
    """Synonym retrieval (mAP) and concept mapping (Acc, MRR) on held-out names of training
    concepts (test) and on zero-shot concepts, as in CCA+DAN (Fivez et al., 2021)."""
    import time

    from .evaluation.synonym_retrieval import (encoder_for_evaluation,
                                               evaluate_synonym_retrieval, resolve_split)
    from .readers import load_dictionary

    _check_at_least("--test-rounds", test_rounds, 1)
    _check_at_least("--validation-rounds", validation_rounds, 0)
    _check_at_least("--train-queries", train_queries, 0)
    for path, what in ((output, "the metrics"), (save_split, "the split")):
        if path is not None:
            check_output_path(path, what=what)
    started = time.perf_counter()
    synonym_split = resolve_split(load_dictionary(dictionary), encoder=encoder, split_path=split,
                                  seed=seed, zero_shot_concepts=zero_shot_concepts,
                                  test_rounds=test_rounds, validation_rounds=validation_rounds)
    if save_split is not None:
        synonym_split.to_disk(save_split)
    encode, _, described = encoder_for_evaluation(encoder, vectors_path=vectors,
                                                  split=synonym_split)
    query_sets = ["test", "zero_shot", "validation"] + (["train"] if train_queries else [])
    scores = evaluate_synonym_retrieval(encode, synonym_split, query_sets=query_sets,
                                        max_train_queries=train_queries)
    result = {**described, "dictionary": str(dictionary), "split": synonym_split.describe(),
              **scores, "seconds": round(time.perf_counter() - started, 1)}
    if described.get("trained_split") not in (None, result["split"]["fingerprint"]):
        msg.warn(f"{encoder} was trained on split {described['trained_split']}, not on this "
                 f"one ({result['split']['fingerprint']}): its test names may have been trained on.")
    msg.table([(name, f"{s['mAP']:.4f}", f"{s['Acc']:.4f}", f"{s['MRR']:.4f}", s["queries"])
               for name, s in scores.items()], header=("", "mAP", "Acc", "MRR", "queries"))
    if output is not None:
        with atomic_file(output) as fileh:
            json.dump(result, fileh, indent=2)
        msg.good(f"Wrote {output}")


@app.command("eval-relatedness")
@_fail_cleanly
def eval_relatedness_cli(
    encoder: str = typer.Argument(..., help="Trained encoder directory, or sgw (mean word vector)"),
    data_dir: Path = typer.Option(..., "--data-dir", help="Directory with UMNSRS_*.csv / MayoSRS.txt"),
    vectors: Optional[Path] = typer.Option(None, "--vectors", help="Word vectors (for sgw)"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write metrics JSON here"),
):
    """Spearman rho of encoder cosines against UMNSRS / MayoSRS judgements."""
    from .errors import Errors
    from .evaluation.relatedness import evaluate_relatedness
    from .evaluation.synonym_retrieval import encoder_for_evaluation

    if output is not None:
        check_output_path(output, what="the metrics")
    if encoder in ("sgw-cca", "tfidf"):
        raise BioLinkError(Errors.E631.format(value=encoder, command="eval-relatedness",
                                              options="sgw"))
    encode, covered, described = encoder_for_evaluation(encoder, vectors_path=vectors)
    scores = evaluate_relatedness(encode, data_dir, covered=covered)
    msg.table([(name, "-" if s["spearman"] is None else f"{s['spearman']:.4f}",
                f"{s['covered']}/{s['pairs']}") for name, s in scores.items()],
              header=("", "Spearman", "covered"))
    if output is not None:
        with atomic_file(output) as fileh:
            json.dump({**described, "data_dir": str(data_dir), **scores}, fileh, indent=2)
        msg.good(f"Wrote {output}")


@app.command("score-pairs")
@_fail_cleanly
def score_pairs_cli(
    verifier_dir: Path = typer.Argument(..., help="Trained verifier (train configs/siamese.cfg)"),
    pairs_path: Path = typer.Argument(..., help="TSV: name1<TAB>name2 per line (.gz ok)"),
    output: Path = typer.Option(..., "--output", "-o",
                                help="TSV to write: name1<TAB>name2<TAB>probability"),
):
    """Probability that each pair of names are synonyms (for dictionary curation)."""
    from .verify import CandidateVerifier, read_pair_file, write_scored_pairs

    check_output_path(output, what="the scored pairs", example="scored.tsv")
    pairs, _ = read_pair_file(pairs_path)
    verifier = CandidateVerifier.from_trained(verifier_dir)
    probs = verifier.score_pairs(pairs)
    write_scored_pairs(output, pairs, probs)
    msg.good(f"Scored {len(pairs)} pairs into {output} ({int((probs >= verifier.threshold).sum())} "
             f"at or above the verifier threshold {verifier.threshold:.3f})")


@app.command("eval-pairs")
@_fail_cleanly
def eval_pairs_cli(
    verifier_dir: Path = typer.Argument(..., help="Trained verifier (train configs/siamese.cfg)"),
    dictionary: Path = typer.Option(..., "--dictionary", "-d",
                                    help="The dictionary it was trained on"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write metrics JSON here"),
):
    """Precision, recall, F1 and AUC of a verifier on the pairs of its held-out concepts, beside
    the TF-IDF character-trigram cosine of the same pairs (the string-similarity baseline)."""
    from .evaluation.pair_scores import evaluate_saved_verifier
    from .readers import load_dictionary

    if output is not None:
        check_output_path(output, what="the metrics")

    result = evaluate_saved_verifier(verifier_dir, load_dictionary(dictionary))
    rows = []
    for split in ("dev", "test"):
        for name in ("0.5", "dev", "saved"):
            s = result[split][f"at_{name}"]
            rows.append((split, "verifier", f"{name} ({s['threshold']:.3f})",
                         f"{s['precision']:.4f}", f"{s['recall']:.4f}", f"{s['f1']:.4f}",
                         f"{result[split]['auc']:.4f}"))
    for split in ("dev", "test"):  # the string-similarity baseline on the same pairs
        base = result["baselines"]["tfidf_cosine"][split]
        s = base["at_dev"]
        rows.append((split, "TF-IDF cosine", f"dev ({s['threshold']:.3f})",
                     f"{s['precision']:.4f}", f"{s['recall']:.4f}", f"{s['f1']:.4f}",
                     f"{base['auc']:.4f}"))
    msg.table(rows, header=("pairs", "scorer", "threshold", "P", "R", "F1", "AUC"))
    if output is not None:
        with atomic_file(output) as fileh:
            json.dump(result, fileh, indent=2)
        msg.good(f"Wrote {output}")


def main() -> None:
    """The `spacy-biolink` command."""
    log_info_to_stderr()
    app()


def log_info_to_stderr() -> None:
    """INFO lines of this package and of spaCy on stderr, each once.

    spaCy's logger has a handler of its own and propagates to the root logger, so a
    handler on the root (`logging.basicConfig`) would print every spaCy line twice: the
    handler goes on this package's logger instead, and spaCy's is set to INFO as
    `spacy train` sets it.
    """
    package_logger = logging.getLogger("spacy_biolink")
    if not package_logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        package_logger.addHandler(handler)
    package_logger.setLevel(logging.INFO)
    logging.getLogger("spacy").setLevel(logging.INFO)
