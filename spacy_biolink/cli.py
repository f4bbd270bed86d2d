"""`python -m spacy_biolink ...`: build, evaluate and use linking pipelines."""
import json
import logging
from pathlib import Path
from typing import Dict, List, Optional

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


def _corpus_filters(types: Optional[str], pmids: Optional[Path]):
    """--types "A,B" and --pmids FILE (one PMID a line) as sets; None where not given."""
    type_set = {t.strip() for t in types.split(",") if t.strip()} if types else None
    pmid_set = None
    if pmids is not None:
        pmid_set = {line.strip() for line in pmids.read_text(encoding="utf8").splitlines() if line.strip()}
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
                      verifier_threshold=verifier_threshold,
                      overrides=parse_config_overrides(ctx.args), dictionary_filters=filters)
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
    errors: Optional[Path] = typer.Option(None, "--errors", help="Write the mentions wrong at acc@1 here (JSONL)"),
):
    """Gold-mention acc@1 / acc@5 of a saved pipeline on a PubTator corpus."""
    from .evaluation import evaluate_gold_mentions, format_table
    from .pipeline import load_linker_pipeline

    nlp = load_linker_pipeline(model_dir)
    type_set, pmid_set = _corpus_filters(types, pmids)
    k_values = sorted({int(k) for k in ks.split(",") if k.strip()} | {1, 5})
    wrong: Optional[List[Dict]] = [] if errors is not None else None
    result = evaluate_gold_mentions(nlp, corpus, types=type_set, pmids=pmid_set, ks=k_values,
                                    progress=True, errors=wrong)
    result["model"] = str(model_dir)
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
):
    """Find and link the entities of every document of INPUT; write them as JSON lines."""
    import time

    from .link_files import link_file

    started = time.perf_counter()
    stats = link_file(model, input_path, output, format=format, batch_size=batch_size,
                      n_process=n_process)
    msg.good(f"Wrote {output} ({time.perf_counter() - started:.1f}s)")
    msg.table([("docs", stats.docs), ("entities", stats.entities), ("linked", stats.linked),
               ("NIL", stats.nil), ("docs without entities", stats.docs_without_entities)])


def _parse_kb_url_template(value: Optional[str]):
    """A URL with {}, or a JSON object {"PREFIX": URL, "": URL} for ids of several sources."""
    if value is None or not value.lstrip().startswith("{\""):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError as err:
        from .errors import Errors

        raise BioLinkError(Errors.E755.format(value=value, reason=f"not valid JSON: {err}")) from None


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

    if (input_path is None) == (text is None):
        raise BioLinkError(Errors.E757.format(got="both" if text is not None else "neither"))
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
        template = kb_url_template_of(nlp, MEDIC_KB_URL_TEMPLATES)
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

    verifier = CandidateVerifier.from_trained(verifier_dir)
    pairs, _ = read_pair_file(pairs_path)
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
    """Precision, recall, F1 and AUC of a verifier on the pairs of its held-out concepts."""
    from .evaluation.pair_scores import evaluate_saved_verifier
    from .readers import load_dictionary

    result = evaluate_saved_verifier(verifier_dir, load_dictionary(dictionary))
    rows = []
    for split in ("dev", "test"):
        for name in ("0.5", "dev", "saved"):
            s = result[split][f"at_{name}"]
            rows.append((split, f"{name} ({s['threshold']:.3f})", f"{s['precision']:.4f}",
                         f"{s['recall']:.4f}", f"{s['f1']:.4f}", f"{result[split]['auc']:.4f}"))
    msg.table(rows, header=("pairs", "threshold", "P", "R", "F1", "AUC"))
    if output is not None:
        with atomic_file(output) as fileh:
            json.dump(result, fileh, indent=2)
        msg.good(f"Wrote {output}")


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    app()
