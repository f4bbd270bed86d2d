"""link and visualize: documents in, linked JSONL (locally or on Ray) or a displaCy page out."""
import json
from pathlib import Path
from typing import Optional

import typer

from ..errors import BioLinkError, Errors
from ..io.files import check_output_path
from .app import (MAX_COUNT, app, check_at_least, check_range, fail_cleanly, msg,
                  write_output)
from .build import comma_list


@app.command("link")
@fail_cleanly
def link_cli(
    input_path: Path = typer.Argument(..., help=".txt (one document a line), .jsonl "
                                                "({\"text\": ...} a line, other keys kept) "
                                                "or BioC XML/JSON; .gz ok"),
    model: Path = typer.Option(..., "--model", "-m", help="Saved pipeline with bio_linker "
                                                          "(and an ner, to find entities)"),
    output: Path = typer.Option(..., "--output", "-o", help="JSONL to write, one object a "
                                "document (BioC for an output named .bioc.json, .json or .xml)"),
    format: Optional[str] = typer.Option(None, "--format", "-f",
                                         help="txt|jsonl|bioc; inferred from INPUT's name "
                                         "(and a BioC file's content) if omitted"),
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
                                                help="jsonl (default), bioc-json or bioc-xml "
                                                "(default from OUTPUT's name); ray: jsonl "
                                                "or parquet"),
    types: Optional[str] = typer.Option(None, "--types", help="Only entities of these "
                                        "labels, comma-separated (e.g. Disease,Chemical); "
                                        "default every type"),
    code: Optional[Path] = typer.Option(None, "--code", help="ray: Python file each worker "
                                        "imports first (custom components)"),
    force: bool = typer.Option(False, "--force", help="Replace OUTPUT even if it is "
                               "read-only (refused without it, as cp does)"),
):
    """Find and link the entities of every document of INPUT; write them as JSON lines
    (or as BioC JSON/XML)."""
    import time

    from ..runners.local import MAX_BATCH_SIZE

    # Both engines: too large a count overflowed or ran out of files deep inside (E480).
    check_range("--batch-size", batch_size, 1, MAX_BATCH_SIZE)
    check_range("--num-workers", num_workers, 1, MAX_COUNT)
    check_range("--num-gpus", num_gpus, 0, 1024, integer=False)
    if engine != "local" and types is not None:
        raise BioLinkError(Errors.E367.format(types=types, engine=engine))
    if engine != "local":
        return _link_distributed(input_path, model, output, engine=engine, batch_size=batch_size,
                                 num_workers=num_workers, address=address, num_gpus=num_gpus,
                                 output_format=output_format, code=code)
    ray_only = {"--num-workers": num_workers, "--address": address, "--num-gpus": num_gpus,
                "--code": code}
    if any(value is not None for value in ray_only.values()):
        raise BioLinkError(Errors.E809.format(
            options=", ".join(k for k, v in ray_only.items() if v is not None)))
    if input_path.is_dir():
        raise BioLinkError(Errors.E810.format(path=input_path))
    from ..runners.local import link_file, link_output_format

    # Checked before any work: a typo must not cost the pipeline's loading.
    link_output_format(output, output_format)
    started = time.perf_counter()
    stats = link_file(model, input_path, output, format=format, batch_size=batch_size,
                      n_process=n_process, force=force, output_format=output_format,
                      keep_types=comma_list(types))
    msg.good(f"Wrote {output} ({time.perf_counter() - started:.1f}s)")
    msg.table([("docs", stats.docs), ("entities", stats.entities), ("linked", stats.linked),
               ("NIL", stats.nil), ("docs without entities", stats.docs_without_entities)])


def _link_distributed(input_path: Path, model: Path, output: Path, *, engine: str, **options):
    """`link --engine ray`: spacy_biolink.runners.distributed does the work; this only reports."""
    from ..runners.distributed import link_corpus

    if engine != "ray":
        raise BioLinkError(Errors.E811.format(what="engine", value=engine, options="local, ray"))
    options = {k: v for k, v in options.items() if v is not None}
    report = link_corpus(input_path, model, output, **options)
    msg.good(f"Wrote {report['shards_done_now']} shard(s) to {output} on "
             f"{report['workers']} worker(s) "
             f"({report['this_run']['docs_per_second']} docs/s, {report['seconds']:.1f}s); "
             f"{report['shards_done_earlier']} done earlier; report: {output / '_report.json'}")
    if report.get("workers_note"):
        msg.info(report["workers_note"])
    msg.table([("docs in", report["docs_in"]), ("docs out", report["docs_out"]),
               ("malformed (not linked)", report["errors"]), ("entities", report["entities"])])


def _parse_kb_url_template(value: Optional[str]):
    """A URL with {}, or a JSON object {"PREFIX": URL, "": URL} for ids of several sources;
    checked here, before any work (http(s) only, exactly one {})."""
    from ..runners.visualize import KbUrls

    if value is None:
        return value
    template = value
    if value.lstrip().startswith("{\""):
        try:
            template = json.loads(value)
        except json.JSONDecodeError as err:
            from ..errors import Errors

            raise BioLinkError(Errors.E755.format(value=value, reason=f"not valid JSON: {err}")) from None
    KbUrls(template, source="--kb-url-template")
    return template


@app.command("visualize")
@fail_cleanly
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
    """Write an HTML page (displaCy) of the linked entities, each id a link to its concept
    (every linker's, each id named from the dictionary of the linker that linked it)."""
    from ..errors import Errors
    from ..runners.local import (InputDocument, make_input_doc, read_input_documents,
                                 warn_if_nothing_to_link)
    from ..linker.find import require_linkers
    from ..linker.pipeline import load_linker_pipeline
    from ..runners.visualize import MEDIC_KB_URL_TEMPLATES, kb_url_template_of, render_linked

    check_output_path(output, what="the HTML page", example="linked.html")
    if (input_path is None) == (text is None):
        raise BioLinkError(Errors.E757.format(got="both" if text is not None else "neither"))
    check_at_least("--limit", limit, 1)
    check_range("--doc", doc, 0, MAX_COUNT)
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
    linkers = require_linkers(nlp, model)
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
    html = render_linked(docs, kb_url_template=template, page=True, linkers=linkers)
    n_ents = sum(len(d.ents) for d in docs)
    write_output(output, html, said=f": {len(docs)} document(s), {n_ents} entities")
