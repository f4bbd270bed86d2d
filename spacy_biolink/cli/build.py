"""init-linker, assemble and convert: pipelines and corpora to build from files."""
import collections
from pathlib import Path
from typing import Dict, List, Optional, Set

import typer

from ..errors import BioLinkError, Errors
from ..io.files import check_not_an_input, check_output_path
from .app import MAX_COUNT, app, check_range, corpus_filters, fail_cleanly, msg


def comma_list(value: Optional[str]) -> Optional[List[str]]:
    """An option's comma-separated values, stripped, empty ones left out; None when the
    option was not given."""
    if value is None:
        return None
    return [part.strip() for part in value.split(",") if part.strip()]


@app.command("init-linker", context_settings={"allow_extra_args": True,
                                              "ignore_unknown_options": True})
@fail_cleanly
def init_linker_cli(
    ctx: typer.Context,
    output_dir: Path = typer.Argument(..., help="Directory for the pipeline (spacy.load opens it)"),
    dictionary: Path = typer.Option(..., "--dictionary", "-d", help="Dictionary file (.gz ok)"),
    format: Optional[str] = typer.Option(None, "--format", "-f",
                                         help="medic|biosyn|ctd|tsv|jsonl|umls|obo|mesh-tsv|"
                                              "mesh-ascii; inferred from the content if "
                                              "omitted (umls: the META directory or "
                                              "MRCONSO.RRF; mesh-*: a file or a directory "
                                              "of MeSH descriptors and supplementary files)"),
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
    mesh_branches: Optional[str] = typer.Option(None, "--mesh-branches",
                                                help="mesh-tsv/mesh-ascii: keep concepts "
                                                     "under these tree branches, e.g. D "
                                                     "(chemicals) or C,F03 (diseases); "
                                                     "default all"),
    mesh_supplementary: List[Path] = typer.Option([], "--mesh-supplementary",
                                                  help="mesh-tsv/mesh-ascii: a MeSH file read "
                                                       "with --dictionary, e.g. c2024.bin "
                                                       "beside d2024.bin (repeatable)"),
    extend: List[Path] = typer.Option([], "--extend",
                                      help="A second vocabulary whose concepts extend "
                                           "DICTIONARY's: one sharing an id adds its names, "
                                           "one sharing none joins (repeatable), e.g. MeSH "
                                           "2024 beside MEDIC 2012"),
    extend_format: Optional[str] = typer.Option(None, "--extend-format",
                                                help="--extend's format (as --format; "
                                                     "inferred if omitted)"),
    extend_mesh_branches: Optional[str] = typer.Option(None, "--extend-mesh-branches",
                                                       help="--extend's MeSH tree branches "
                                                            "to keep, e.g. C,F03; default "
                                                            "all"),
    augment: List[Path] = typer.Option([], "--augment", "-a",
                                       help="PubTator corpus whose gold mentions join the "
                                            "dictionary (repeatable: train, dev)"),
    augment_new_concepts: Optional[str] = typer.Option(
        None, "--augment-new-concepts",
        help="--augment's mention types (comma-separated, e.g. Chemical) whose ids the "
             "dictionary lacks become concepts of their own, named by their mentions, "
             "instead of being skipped (ids a newer vocabulary merged or retired)"),
    augment_replaced_ids: bool = typer.Option(
        False, "--augment-replaced-ids",
        help="With --augment-new-concepts: an id whose mentions are names of one concept "
             "of the dictionary becomes that concept's alternative id instead (an id the "
             "vocabulary replaced: MeSH makes supplementary records descriptors)"),
    augment_exclude_pmids: Optional[Path] = typer.Option(
        None, "--augment-exclude-pmids",
        help="A file of PMIDs (one a line), or a corpus, whose documents --augment's "
             "corpora leave out: the dev and test documents the linker will be measured "
             "on, where another corpus holds them too"),
    spelling_map: Optional[Path] = typer.Option(None, "--spelling-map",
                                                help="`wrong||right` file of mention typos"),
    encoder: Optional[Path] = typer.Option(None, "--encoder", "-e",
                                           help="Trained encoder directory (from `train`) "
                                                "instead of the config's TF-IDF encoder"),
    force: bool = typer.Option(False, "--force", help="Replace a non-empty OUTPUT_DIR"),
    verifier: Optional[Path] = typer.Option(None, "--verifier",
                                            help="Trained synonymy verifier (train "
                                                 "configs/siamese.cfg): rejects candidates"),
    on_bad_line: str = typer.Option("error", "--on-bad-line",
                                    help="error: stop at a malformed dictionary line or one "
                                         "with a control character (file:line); skip: leave "
                                         "such lines out, count them and name the first few"),
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

    from ..linker.pipeline import init_linker

    def listed(value: Optional[str], empty: str):
        if value is not None and value.strip().lower() == empty:
            return []
        return comma_list(value)

    filters = {"languages": listed(languages, "all"), "sources": listed(sources, "all"),
               "suppressed": True if keep_suppressed else None,
               "semantic_types": listed(semantic_types, "all"),
               "synonym_scopes": listed(synonym_scopes, "none"),
               "xref_prefixes": listed(xref_prefixes, "none"),
               "code_sources": listed(code_sources, "none"),
               "mesh_branches": listed(mesh_branches, "all"),
               "mesh_supplementary": [str(p) for p in mesh_supplementary] or None}
    # A verifier's threshold is a probability of synonymy.
    check_range("--verifier-threshold", verifier_threshold, 0, 1, integer=False)
    new_concept_types = comma_list(augment_new_concepts) or []
    if new_concept_types and not augment:
        raise typer.BadParameter("it adds concepts from --augment's corpora: give --augment too",
                                 param_hint="--augment-new-concepts")
    if augment_replaced_ids and not new_concept_types:
        raise typer.BadParameter("it decides which of --augment-new-concepts' ids another "
                                 "concept holds: give --augment-new-concepts too",
                                 param_hint="--augment-replaced-ids")
    if augment_exclude_pmids is not None and not augment:
        raise typer.BadParameter("it leaves documents out of --augment's corpora: give "
                                 "--augment too", param_hint="--augment-exclude-pmids")
    started = time.perf_counter()
    nlp = init_linker(output_dir, dictionary, format=format, config_path=config,
                      augment=augment, spelling_map=spelling_map, encoder=encoder, force=force,
                      verifier=verifier, verifier_mode=verifier_mode,
                      verifier_threshold=verifier_threshold, reranker=reranker,
                      overrides=parse_config_overrides(ctx.args), dictionary_filters=filters,
                      on_bad_line=on_bad_line, extend=extend, extend_format=extend_format,
                      extend_filters={"mesh_branches": listed(extend_mesh_branches, "all")},
                      augment_new_concepts=new_concept_types,
                      augment_replaced_ids=augment_replaced_ids,
                      augment_exclude_pmids=augment_exclude_pmids)
    linker = nlp.get_pipe("bio_linker")
    msg.good(f"Saved pipeline to {output_dir}: {linker.dictionary.n_concepts} concepts, "
             f"{linker.dictionary.n_names} names ({time.perf_counter() - started:.1f}s)")


@app.command("assemble")
@fail_cleanly
def assemble_cli(
    ner_dir: Path = typer.Argument(..., help="Trained NER pipeline (spacy train ... model-best)"),
    linker_dir: Path = typer.Argument(..., help="Saved pipeline with bio_linker (init-linker)"),
    output_dir: Path = typer.Argument(..., help="Directory for the joined pipeline"),
    force: bool = typer.Option(False, "--force", help="Replace a non-empty OUTPUT_DIR"),
    name: Optional[str] = typer.Option(None, "--name", help="Pipe name of the added linker "
                                       "(default: its name in LINKER_DIR); a second linker "
                                       "needs its own, e.g. chemical_linker"),
    patterns: Optional[Path] = typer.Option(None, "--patterns", help="span_ruler patterns "
                                            "(JSONL, from ner-patterns) to add after the NER as "
                                            "`term_ruler`: training terms the NER misses"),
    drop_nil: bool = typer.Option(False, "--drop-nil", help="End the pipeline with "
                                  "bio_drop_nil: entities no linker links are dropped"),
    # No upper bound here: a hybrid linker's scores run to its weights' sum, and the
    # linker itself refuses a threshold outside its encoder's range (E125).
    nil_threshold: Optional[float] = typer.Option(None, "--nil-threshold", min=0.0,
                                                  help="The added linkers' NIL threshold "
                                                  "(default: LINKER_DIR's; within the range "
                                                  "of its scores: 0-1 for TF-IDF, up to the "
                                                  "weights' sum for a hybrid); with "
                                                  "--drop-nil, entities linked below it are "
                                                  "dropped"),
    drop_nil_labels: Optional[str] = typer.Option(None, "--drop-nil-labels",
                                                  help="With --drop-nil, drop only the NIL "
                                                       "entities of these labels (comma-"
                                                       "separated); the others stay, "
                                                       "unlinked"),
    type_choice: bool = typer.Option(False, "--type-choice",
                                     help="Add bio_types (keep: every type) before the "
                                     "linkers, so spacy.load(..., config=...) can restrict "
                                     "the entity types"),
    drop_below: Optional[float] = typer.Option(None, "--drop-below", min=0.0,
                                               help="With --drop-nil, also drop entities "
                                               "whose best link scores under this; the "
                                               "linkers keep their own NIL threshold, so "
                                               "gold spans still get their best concept"),
    unlink_labels: Optional[str] = typer.Option(None, "--unlink-labels",
                                                help="With --drop-below, keep the entities "
                                                "of these labels (comma-separated) whose "
                                                "best link scores under it, as NIL"),
    propagate: Optional[str] = typer.Option(None, "--propagate", help="Add bio_propagate "
                                            "after the NER with these rules (comma-"
                                            "separated): abbreviations (a defined short "
                                            "form takes its long form's label), repeats "
                                            "(an entity's text, wherever it recurs)"),
    variants: bool = typer.Option(False, "--variants", help="Add bio_variants after the "
                                  "NER: sequence variants in their written notations "
                                  "(V600E, c.1799T>A, rs113488022), where the variant "
                                  "rule table normalizes them"),
):
    """Add LINKER_DIR's bio_linker after NER_DIR's ner and save: a text-in, links-out pipeline.
    A linker of another name already in NER_DIR stays: linkers are added one at a time."""
    import math

    from ..runners.assemble import assemble_pipeline

    # typer's min=0.0 lets inf and nan through (the linker's own check compares them)
    for option, value in (("--nil-threshold", nil_threshold), ("--drop-below", drop_below)):
        if value is not None and not math.isfinite(value):
            raise BioLinkError(Errors.E480.format(option=option, value=value,
                                                  what="a finite number >= 0"))
    nlp = assemble_pipeline(ner_dir, linker_dir, output_dir, force=force, name=name,
                            patterns=patterns, drop_nil=drop_nil,
                            nil_threshold=nil_threshold,
                            propagate=comma_list(propagate),
                            drop_nil_labels=comma_list(drop_nil_labels),
                            drop_below=drop_below, unlink_labels=comma_list(unlink_labels),
                            type_choice=type_choice, variants=variants)
    msg.good(f"Saved pipeline to {output_dir}: {nlp.pipe_names}")


@app.command("ner-patterns")
@fail_cleanly
def ner_patterns_cli(
    output: Path = typer.Argument(..., help="JSONL file of span_ruler patterns to write"),
    corpus: List[Path] = typer.Option(..., "--corpus", "-c", help="Training DocBin from "
                                      "`convert`, or a directory of them (repeatable); "
                                      "never the test corpus"),
    min_precision: float = typer.Option(0.8, "--min-precision", help="Share of a term's "
                                        "occurrences in the corpora annotated with its label"),
    min_count: int = typer.Option(2, "--min-count", help="Annotated occurrences needed"),
    min_length: int = typer.Option(3, "--min-length", help="Shortest term, in characters"),
    force: bool = typer.Option(False, "--force", help="Replace an existing OUTPUT"),
):
    """Patterns for spaCy's span_ruler from the training corpora's high-precision terms,
    for `assemble --patterns`: the dictionary as evidence beside the NER."""
    from ..ner.term_patterns import patterns_from_corpora, write_term_patterns

    check_output_path(output, what="the patterns", example="patterns.jsonl")
    check_not_an_input(output, [("--corpus", path) for path in corpus], what="the patterns")
    if output.exists() and not force:
        raise BioLinkError(Errors.E763.format(path=output))
    if not 0.0 <= min_precision <= 1.0:
        raise BioLinkError(Errors.E480.format(option="--min-precision", what="a number from 0 "
                                              "to 1", value=min_precision))
    check_range("--min-count", min_count, 1, MAX_COUNT)
    check_range("--min-length", min_length, 1, MAX_COUNT)
    patterns = patterns_from_corpora(corpus, min_precision=min_precision, min_count=min_count,
                                     min_length=min_length)
    n = write_term_patterns(output, patterns, force=force)
    by_label = collections.Counter(p["label"] for p in patterns)
    msg.good(f"Wrote {n} patterns to {output}: "
             + ", ".join(f"{label} {count}" for label, count in sorted(by_label.items())))


@app.command("merge-corpora")
@fail_cleanly
def merge_corpora_cli(
    output: Path = typer.Argument(..., help="PubTator file to write"),
    corpora: List[Path] = typer.Argument(..., help="PubTator corpora (.gz ok), in order"),
    mention_type: Optional[str] = typer.Option(None, "--type",
                                               help="Keep only mentions of this of the six "
                                                    "types (Disease, Chemical, ...)"),
    exclude_pmids: List[Path] = typer.Option([], "--exclude-pmids",
                                             help="A file of PMIDs (one a line), or a corpus, "
                                                  "whose documents are left out (repeatable)"),
    pmids: Optional[Path] = typer.Option(None, "--pmids",
                                         help="A file of PMIDs (one a line), or a corpus: "
                                              "keep only these documents (a split)"),
    force: bool = typer.Option(False, "--force", help="Replace an existing OUTPUT"),
):
    """Several PubTator corpora as one training file for the trainers (`train
    --paths.train`): one type's mentions, the held-out documents left out, a PMID two
    corpora share kept in both (the later copy renamed). With --pmids, one corpus's
    split: e.g. the documents kept from a trainer for calibration."""
    from ..corpora.bioc import read_pmid_file
    from ..corpora.merge import merge_pubtator
    from ..corpora.types import SIX_TYPES

    if mention_type is not None and mention_type not in SIX_TYPES:
        raise typer.BadParameter(f"{mention_type!r} is none of the six types: "
                                 f"{', '.join(SIX_TYPES)}", param_hint="--type")
    check_output_path(output, kind="file", what="the merged corpus", force=force,
                      example="train.PubTator", force_option=True)
    if output.exists() and not force:
        raise typer.BadParameter(f"{output} exists: pass --force to replace it",
                                 param_hint="OUTPUT")
    held_out = set()
    for path in exclude_pmids:
        held_out |= read_pmid_file(path, "--exclude-pmids")
    kept = read_pmid_file(pmids, "--pmids") if pmids is not None else None
    stats = merge_pubtator(output, corpora, mention_type=mention_type,
                           exclude_pmids=held_out, pmids=kept)
    msg.good(f"Wrote {output}: {stats.documents} documents, {stats.mentions} "
             f"{mention_type or 'mentions of any type'}"
             + (" mentions" if mention_type else "")
             + f"; {stats.held_out} held-out documents left out, {stats.renamed} repeated "
               f"PMIDs renamed")


@app.command("convert", context_settings={"allow_extra_args": True,
                                          "ignore_unknown_options": True})
@fail_cleanly
def convert_cli(
    ctx: typer.Context,
    input_path: Path = typer.Argument(..., help="PubTator or BioC XML/JSON corpus (.gz ok)"),
    output_path: Path = typer.Argument(..., help="DocBin to write (.spacy)"),
    types: Optional[str] = typer.Option(None, "--types", help="Comma-separated mention types"),
    pmids: Optional[Path] = typer.Option(None, "--pmids", help="File of PMIDs to keep, one a line"),
    keep_types: bool = typer.Option(False, "--keep-types",
                                    help="Label entities with the corpus' own mention types "
                                    "(NCBI's SpecificDisease, DiseaseClass, ...) instead of "
                                    "Disease, the label configs/ner.cfg's NER predicts"),
    # Named apart from `config`: only its [nlp] is read, so the files of its [paths] (the
    # training DocBins this command may be writing) are no inputs (check_outputs_spare_inputs)
    tokenizer_config: Optional[Path] = typer.Option(None, "--config",
                                          help="Tokenize as this training config's [nlp] "
                                          "(lang and tokenizer) does; default spaCy's "
                                          "English tokenizer"),
    six_types: bool = typer.Option(False, "--six-types",
                                   help="Label entities with the six PubTator types (Gene, "
                                   "Disease, Chemical, Species, Variant, CellLine; "
                                   "corpora/types.py); mentions of none of them stay in "
                                   "doc.spans only"),
    partial: bool = typer.Option(False, "--partial",
                                 help="With --six-types: mark missing (unknown to the NER) "
                                 "the tokens that may hold a type this corpus does not "
                                 "annotate (--unknown-terms-from matches, mentions of none "
                                 "of the six), so it teaches nothing about those types"),
    annotates: Optional[str] = typer.Option(None, "--annotates",
                                            help="With --partial: the six types this corpus "
                                            "annotates, comma-separated (default: those its "
                                            "mentions carry)"),
    unknown_terms_from: List[Path] = typer.Option(
        [], "--unknown-terms-from",
        help="With --partial: a PubTator file whose mention texts, of the types this corpus "
        "does not annotate, mark tokens missing (repeatable; training splits only)"),
    unknown_terms_gazetteer: Optional[str] = typer.Option(
        None, "--unknown-terms-gazetteer",
        help="With --partial and --config: the names of the config's bio_gazetteer terms "
        "of these types (comma-separated), where this corpus does not annotate them, mark "
        "tokens missing too: dictionary names the NER sees tagged are no negatives in a "
        "corpus that never annotates their type. The config's paths as overrides, e.g. "
        "--paths.mesh DIR"),
    sample: Optional[int] = typer.Option(None, "--sample",
                                         help="With --six-types: keep this many documents, "
                                         "drawn with a fixed seed (large caption corpora)"),
    exclude_pmids: Optional[Path] = typer.Option(
        None, "--exclude-pmids",
        help="A file of PMIDs (one a line), or a corpus, whose documents are left out: "
        "the dev and test documents of other corpora that this one holds too"),
):
    """Convert a PubTator or BioC corpus to a spaCy DocBin for `spacy train` and end-to-end
    evaluation (a BioC document, all its passages, is one Doc)."""
    from spacy.cli._util import parse_config_overrides

    from ..corpora import convert_pubtator
    from ..corpora.docbin import NCBI_DISEASE_LABELS, tokenizer_nlp_from_config

    check_output_path(output_path, what="the DocBin", example="train.spacy")
    overrides = parse_config_overrides(ctx.args)
    for key, value in overrides.items():
        if value is True:  # "--paths.mesh" with nothing after it
            raise BioLinkError(Errors.E770.format(option=f"--{key}"))
    if overrides and unknown_terms_gazetteer is None:
        raise BioLinkError(Errors.E769.format(given=", ".join(f"--{k}" for k in overrides),
                                              needs="--unknown-terms-gazetteer"))
    if unknown_terms_gazetteer is not None and (tokenizer_config is None or not partial):
        raise BioLinkError(Errors.E769.format(given="--unknown-terms-gazetteer",
                                              needs="--partial and --config"))
    type_set, pmid_set = corpus_filters(types, pmids)
    held_out = None
    if exclude_pmids is not None:
        from ..corpora.bioc import read_pmid_file

        held_out = read_pmid_file(exclude_pmids, "--exclude-pmids")
    nlp = (tokenizer_nlp_from_config(tokenizer_config)
           if tokenizer_config is not None else None)
    if six_types:
        if type_set or pmid_set:
            raise BioLinkError(Errors.E544.format(option="--types" if type_set else "--pmids"))
        gazetteer_types = None
        if unknown_terms_gazetteer is not None:
            from ..corpora.partial import parse_six_types

            gazetteer_types = parse_six_types(unknown_terms_gazetteer,
                                              "--unknown-terms-gazetteer") or set()
        _convert_six_types(input_path, output_path, nlp, partial=partial, annotates=annotates,
                           unknown_terms_from=unknown_terms_from, sample=sample,
                           exclude_pmids=held_out or frozenset(),
                           gazetteer_types=gazetteer_types, gazetteer_config=tokenizer_config,
                           overrides=overrides)
        return
    for option, given in (("--partial", partial), ("--annotates", annotates),
                          ("--unknown-terms-from", unknown_terms_from),
                          ("--unknown-terms-gazetteer", unknown_terms_gazetteer),
                          ("--sample", sample is not None)):
        if given:
            raise BioLinkError(Errors.E542.format(option=option))
    convert = convert_pubtator
    if input_path.is_file():
        from ..corpora.bioc import bioc_format, convert_bioc

        # BioC by content: one Doc per BioC document, all its passages.
        if bioc_format(input_path) is not None:
            convert = convert_bioc
    stats = convert(input_path, output_path, types=type_set, pmids=pmid_set, nlp=nlp,
                    labels=None if keep_types else NCBI_DISEASE_LABELS, exclude_pmids=held_out)
    msg.good(f"Wrote {output_path}")
    msg.table([("docs", stats.docs), ("mentions", stats.mentions),
               ("without id (kb_id \"\")", stats.without_id), ("ents", stats.ents),
               ("misaligned (widened to tokens)", stats.misaligned),
               ("overlapping (not in ents)", stats.overlapping_dropped),
               ("unplaceable (left out)", stats.unplaceable),
               ("text mismatches", stats.text_mismatches)])


def _convert_six_types(input_path: Path, output_path: Path, nlp, *, partial: bool,
                       annotates: Optional[str], unknown_terms_from: List[Path],
                       sample: Optional[int], exclude_pmids=frozenset(),
                       gazetteer_types: Optional[Set[str]] = None,
                       gazetteer_config: Optional[Path] = None,
                       overrides: Optional[Dict] = None) -> None:
    """convert --six-types: corpora/partial.py's six-type DocBin, partial or naive;
    the names of `gazetteer_config`'s bio_gazetteer terms of `gazetteer_types` mark
    missing too, where the corpus does not annotate their type (only those are read)."""
    import spacy

    from ..corpora.partial import (UnknownTerms, convert_six_types, mention_terms,
                                   parse_six_types)
    from ..corpora.types import SIX_TYPES

    if sample is not None:
        check_range("--sample", sample, 1, MAX_COUNT)
    nlp = nlp if nlp is not None else spacy.blank("en")
    annotated = parse_six_types(annotates)
    unknown = None
    if partial and (unknown_terms_from or gazetteer_types is not None):
        wanted = set(SIX_TYPES) - annotated if annotated is not None else None
        terms = mention_terms(unknown_terms_from, wanted)
        if gazetteer_types is not None:
            from ..ner.gazetteer import config_gazetteer_terms

            # The config is read (and checked) either way; a dictionary only for a type
            # this corpus does not annotate.
            read = gazetteer_types if wanted is None else gazetteer_types & wanted
            for label, names in config_gazetteer_terms(gazetteer_config, read,
                                                       overrides).items():
                terms.setdefault(label, set()).update(names)
        unknown = UnknownTerms(nlp, terms)
    stats, marked = convert_six_types(input_path, output_path, nlp, partial=partial,
                                      annotates=annotated, unknown=unknown, sample=sample,
                                      exclude_pmids=exclude_pmids)
    msg.good(f"Wrote {output_path}")
    by_type = ", ".join(f"{k} {v}" for k, v in sorted((marked.missing_by_type or {}).items()))
    msg.table([("docs", stats.docs), ("mentions", stats.mentions), ("ents", stats.ents),
               ("misaligned (widened to tokens)", stats.misaligned),
               ("unplaceable (left out)", stats.unplaceable),
               ("annotated types", ",".join(marked.annotated)),
               ("tokens", marked.tokens),
               ("missing tokens", f"{marked.missing_tokens} ({by_type or 'none'})")])
