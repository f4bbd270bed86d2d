"""Linking the documents of a file with a saved pipeline (`python -m spacy_biolink link`).

For people who do not write Python: documents in, one JSON object per document out.

Input (.gz ok):
* BioC XML or BioC JSON (told by content; `.xml`, `.json`, `.bioc`): one document per BioC
  document, its passages placed at their offsets in one text (corpora/bioc.py), so an
  abbreviation defined in one passage is known in all. Its annotations, when it has any,
  are the spans to link, as a .jsonl "entities" list is (labelled with their six-type
  label, BioRED's DiseaseOrPhenotypicFeature as Disease); the output's annotations are
  the linked entities, in their place.
* `.txt`: one document a line; blank lines are skipped.
* `.jsonl`: one JSON object a line with a `"text"` string. Every other key (`"id"`,
  `"pmid"`, ...) is copied to the output record unchanged. An optional `"entities"` list
  of `[start, end, label]` (or `{"start", "end", "label"}` objects, as `link` writes them)
  gives the spans to link, for pipelines without an NER, e.g. gold mentions. Offsets are
  characters of `"text"`; one that cuts a token is widened to whole tokens, as `convert`
  does. An NER in the pipeline keeps given entities and may add others around them.

Output, one line a document: the passthrough keys, `"text"`, and `"entities"`: a list of
`{"start", "end", "text", "label", "kb_id", "kb_ents": [[id, score], ...], "kb_names":
{id: canonical name}}` plus `"kb_parts": [{"text", "kb_ents"}, ...]` for a composite
mention that bio_linker split. kb_names holds the canonical name of each id in kb_id,
kb_ents and kb_parts, so a reader sees what D003924 is without a lookup.

A pipeline with several linkers (a disease and a chemical linker, each given its
`labels`) has every linker's results: each entity's ids, names and NIL come from the
linker that linked it, named under `"linker"` (null for a span whose label no linker
takes). With one linker, records have no `"linker"` key.

Output as BioC JSON or XML instead (`output_format` "bioc-json"/"bioc-xml", or an output
named .json, .bioc.json or .xml): the input's collection, documents, passages and texts
(a .txt or .jsonl document as one passage at offset 0), each entity an annotation of the
passage it starts in, with infons `type` (its label), `identifier` (its kb_id), `score`,
`name` and, with several linkers, `linker`, at the input's offsets. They replace the input's
annotations; its relations, which name those annotations, are not written.

The input is read twice: once to check every line before the pipeline loads (a typo on
line 90 000 should not cost an hour of linking), once to link. The output is written
beside its target and renamed into place, so an error leaves no half-written file.
"""
from dataclasses import dataclass, field
import gzip
import json
import logging
from pathlib import Path
from typing import (Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple,
                    Union)
import warnings

from spacy.language import Language
from spacy.tokens import Doc, Span

from ..errors import BioLinkError, Errors, Warnings
from ..linker.extensions import KB_PARTS_KEY, install_extensions
from ..linker.find import is_linker, linked_spans, linker_pipes, require_linkers
from ..io.files import atomic_file, check_input_file, check_output_path, iter_lines
from ..io.util import PathLike
from ..kb.lookup import canonical_name_reader
from ..text.docs import make_doc
from ..corpora.types import six_type_label
from ..corpora.bioc import (BIOC_FORMATS, BioCDocument, BioCWriter, bioc_format,
                            output_format_of, read_bioc, read_bioc_collection, record_to_bioc)

logger = logging.getLogger(__name__)

TEXT_KEY = "text"
ENTITIES_KEY = "entities"
FORMATS = ("txt", "jsonl")
BIOC_INPUT_FORMATS = ("bioc",) + BIOC_FORMATS
OUTPUT_FORMATS = ("jsonl",) + BIOC_FORMATS
_SUFFIX_FORMATS = {".txt": "txt", ".text": "txt", ".jsonl": "jsonl", ".ndjson": "jsonl"}


@dataclass
class InputDocument:
    """One document of an input file: its text, the keys to copy, the spans it gives."""

    text: str
    line: int
    passthrough: Dict[str, Any] = field(default_factory=dict)
    # (start_char, end_char, label) triples; None when the input gave no "entities" key
    entities: Optional[List[Tuple[int, int, str]]] = None
    # Entities that overlap once widened to tokens: the longest kept (a BioC document's
    # annotations, two in one token of spaCy's), instead of an error (a .jsonl's).
    keep_longest: bool = False


@dataclass
class LinkStats:
    docs: int = 0
    entities: int = 0
    linked: int = 0
    nil: int = 0
    docs_without_entities: int = 0


def input_format(path: PathLike, format: Optional[str] = None) -> str:
    """"txt" or "jsonl": `format` when given, else from the name (`.gz` looked through)."""
    if format is not None:
        if format not in FORMATS:
            raise BioLinkError(Errors.E751.format(path=path))
        return format
    path = Path(path)
    suffix = Path(path.stem).suffix if path.suffix == ".gz" else path.suffix
    found = _SUFFIX_FORMATS.get(suffix.lower())
    if found is None:
        raise BioLinkError(Errors.E751.format(path=path))
    return found


def read_input_documents(path: PathLike, *, format: Optional[str] = None
                         ) -> Iterator[InputDocument]:
    """The documents of a .txt or .jsonl file, checked line by line (see the module doc)."""
    path = Path(path)
    if not path.exists():
        raise BioLinkError(Errors.E750.format(path=path))
    check_input_file(path, "Input file")
    if is_bioc_input(path, format):
        for document in read_bioc(path, format=format):
            yield bioc_input_document(document)
        return
    fmt = input_format(path, format)
    # Control characters are kept: they are text to link (a form feed between pages),
    # and spaCy tokenizes them as whitespace.
    for line_no, line in iter_lines(path, "Input file"):
        if not line.strip():
            continue
        if fmt == "txt":
            yield InputDocument(text=line, line=line_no)
        else:
            yield _parse_json_line(path, line_no, line)


def is_bioc_input(path: PathLike, format: Optional[str] = None) -> bool:
    """Whether `link` reads `path` as BioC: `format` bioc, bioc-xml or bioc-json, or no
    format given and a BioC collection inside (E360 for a `format` bioc that is not)."""
    if format is not None and format not in BIOC_INPUT_FORMATS:
        return False
    found = bioc_format(path, format)
    if found is None and format is not None:
        raise BioLinkError(Errors.E360.format(path=path))
    return found is not None


def bioc_input_document(document: BioCDocument) -> InputDocument:
    """A BioC document as `link` input: its text, its id copied to the output record, and
    its annotations, if it has any, as the spans to link (as a .jsonl "entities" list),
    labelled with their six-type label (corpora/types.py) or, for another type, their own.
    Of overlapping annotations (in their characters, or in the tokens they are widened to)
    the longest, then the first, is kept: a Doc's entities cannot overlap."""
    if not document.mentions:
        return InputDocument(text=document.text, line=document.line,
                             passthrough={"id": document.pmid})
    entities = []
    for mention in sorted(document.mentions, key=lambda m: (m.start - m.end, m.start)):
        entities.append((mention.start, mention.end,
                         six_type_label(mention.type) or mention.type))
    kept: List[Tuple[int, int, str]] = []
    taken: List[Tuple[int, int]] = []
    for start, end, label in entities:
        if all(end <= s or start >= e for s, e in taken):
            kept.append((start, end, label))
            taken.append((start, end))
    if len(kept) < len(entities):
        logger.info("BioC document %s: %d overlapping annotation(s) left out of the spans "
                    "to link", document.pmid, len(entities) - len(kept))
    return InputDocument(text=document.text, line=document.line,
                         passthrough={"id": document.pmid}, entities=sorted(kept),
                         keep_longest=True)


def _parse_json_line(path: Path, line_no: int, line: str) -> InputDocument:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as err:
        raise BioLinkError(Errors.E752.format(path=path, line=line_no, reason=err)) from None
    if not isinstance(record, dict):
        raise BioLinkError(Errors.E753.format(
            path=path, line=line_no, reason=f"found a JSON {type(record).__name__}, not an object"))
    if TEXT_KEY not in record:
        raise BioLinkError(Errors.E753.format(
            path=path, line=line_no, reason=f"the object has no \"text\" key (keys: {sorted(record)})"))
    text = record.pop(TEXT_KEY)
    if not isinstance(text, str):
        raise BioLinkError(Errors.E753.format(
            path=path, line=line_no, reason=f"\"text\" is a {type(text).__name__}, not a string"))
    entities = None
    if ENTITIES_KEY in record:
        entities = _parse_entities(path, line_no, record.pop(ENTITIES_KEY), text)
    return InputDocument(text=text, line=line_no, passthrough=record, entities=entities)


def _parse_entities(path: Path, line_no: int, value: Any, text: str) -> List[Tuple[int, int, str]]:
    def bad(reason: str, item: Any = value) -> BioLinkError:
        return BioLinkError(Errors.E754.format(path=path, line=line_no, value=item, reason=reason))

    if not isinstance(value, list):
        raise bad("not a list")
    entities = []
    for item in value:
        if isinstance(item, dict):
            item = [item.get("start"), item.get("end"), item.get("label")]
        if not isinstance(item, (list, tuple)) or len(item) != 3:
            raise bad("each entity needs a start, an end and a label", item)
        start, end, label = item
        # bool is an int subclass: [false, true, "Disease"] would be read as 0 and 1.
        if not (isinstance(start, int) and isinstance(end, int) and isinstance(label, str)
                and not isinstance(start, bool) and not isinstance(end, bool)):
            raise bad("start and end must be integers (not true/false), label a string", item)
        if not 0 <= start < end <= len(text):
            raise bad(f"offsets outside the text (0-{len(text)}) or empty", item)
        entities.append((start, end, label))
    return entities


def make_input_doc(nlp: Language, document: InputDocument, path: PathLike = "<input>") -> Doc:
    """A tokenized Doc with the document's given entities (if any) as doc.ents."""
    doc = make_doc(nlp, document.text, f"{path}:{document.line}")
    if document.entities is None:
        return doc
    spans = []
    for start, end, label in document.entities:
        span = doc.char_span(start, end, label=label, alignment_mode="expand")
        if span is None:
            raise BioLinkError(Errors.E754.format(path=path, line=document.line,
                                                  value=[start, end, label],
                                                  reason="it covers no token"))
        spans.append(span)
    if document.keep_longest:
        from spacy.util import filter_spans

        spans = filter_spans(spans)
    try:
        doc.ents = spans
    except ValueError as err:
        raise BioLinkError(Errors.E754.format(path=path, line=document.line,
                                              value=[[s.start_char, s.end_char, s.label_] for s in spans],
                                              reason=f"overlapping spans ({err})")) from None
    return doc


def entity_record(span: Span, kb: Optional[Mapping] = None) -> Dict[str, Any]:
    """One entity's output object; with `kb` (bio_linker's `kb`), the canonical name of
    each of its ids under "kb_names"."""
    record = {"start": span.start_char, "end": span.end_char, "text": span.text,
              "label": span.label_, "kb_id": span.kb_id_,
              "kb_ents": [[concept, score] for concept, score in span._.kb_ents]}
    ids = [concept for concept, _ in span._.kb_ents] + span.kb_id_.split("|")
    # get_kb_parts answers for every span; only a split composite stored its own parts
    if (KB_PARTS_KEY, span.start_char, span.end_char) in span.doc.user_data:
        record["kb_parts"] = [{"text": text, "kb_ents": [[c, s] for c, s in ents]}
                              for text, ents in span._.kb_parts]
        ids += [c for _, ents in span._.kb_parts for c, _ in ents]
    if kb is not None:
        name_of = canonical_name_reader(kb)
        record["kb_names"] = {concept: name_of(concept)
                              for concept in dict.fromkeys(ids) if concept in kb}
    return record


def doc_record(doc: Doc, passthrough: Optional[Dict[str, Any]] = None, *,
               spans_key: Optional[str] = None, kb: Optional[Mapping] = None) -> Dict[str, Any]:
    """The output object of one document: passthrough keys, text, entities."""
    spans: Sequence[Span] = doc.ents if spans_key is None else doc.spans.get(spans_key, [])
    record = dict(passthrough or {})
    record[TEXT_KEY] = doc.text
    record[ENTITIES_KEY] = [entity_record(span, kb) for span in spans]
    return record


def entity_setting_pipes(nlp: Language) -> List[str]:
    """Pipes that (may) write doc.ents, besides the linkers, which only relabel them."""
    return [name for name in nlp.pipe_names
            if "doc.ents" in nlp.get_pipe_meta(name).assigns and not is_linker(nlp, name)]


def warn_if_nothing_to_link(nlp: Language, without_entities: int, total: int, *,
                            model_path: PathLike) -> None:
    """Say so when no pipe finds entities and some documents bring none: bio_linker would
    quietly write empty entity lists for them."""
    if without_entities and not entity_setting_pipes(nlp):
        warnings.warn(Warnings.W750.format(path=model_path, pipes=nlp.pipe_names,
                                           n=without_entities, total=total))
        # Said here with the input's counts: each linker's own W900 would repeat it.
        for _, pipe in linker_pipes(nlp):
            check = getattr(pipe, "nothing_to_link", None)
            if check is not None:
                check.warned = True


def check_pipe_settings(batch_size: int, n_process: int) -> None:
    """nlp.pipe's batch_size and n_process, checked before any work: batch size 0 made
    `link` write an empty file and exit 0, n_process 0 fail deep in spaCy."""
    import os

    # Upper bounds too: 99999999999999999999 overflowed (batch size) or opened processes
    # until the system ran out of files (n_process), after the model was loaded.
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or \
            not 1 <= batch_size <= MAX_BATCH_SIZE:
        raise BioLinkError(Errors.E480.format(option="--batch-size (batch_size)",
                                              what=f"an integer in [1, {MAX_BATCH_SIZE}]",
                                              value=batch_size))
    if isinstance(n_process, bool) or not isinstance(n_process, int) \
            or not (1 <= n_process <= MAX_PROCESSES or n_process == -1):
        raise BioLinkError(Errors.E480.format(
            option="--n-process (n_process)",
            what=f"an integer in [1, {MAX_PROCESSES}] (this machine has "
                 f"{os.cpu_count() or 1} CPUs; more processes only compete for them), or -1 "
                 "(one per CPU)", value=n_process))


# The most documents nlp.pipe is given per batch, and the most worker processes.
MAX_BATCH_SIZE = 1_000_000
MAX_PROCESSES = 1024


def linker_kb(nlp: Language) -> Optional[Mapping]:
    """The concept lookup of the pipeline's first linker, for the canonical names records
    show; None without a linker. LinkedRecords uses each entity's own linker's."""
    found = linker_pipes(nlp)
    return found[0][1].kb if found else None


class LinkedRecords:
    """Output records of a pipeline's docs, with every linker's results: each entity's
    kb_names from the concept lookup of the linker that linked it, and NIL counted with
    that linker's nil_id. Built once per pipeline (it reads each linker's kb once)."""

    def __init__(self, nlp: Language):
        self.linkers = linker_pipes(nlp)
        self.several = len(self.linkers) > 1
        self.kbs: Dict[Optional[str], Optional[Mapping]] = {
            name: pipe.kb for name, pipe in self.linkers}
        self.nil_ids: Dict[Optional[str], str] = {
            name: pipe.cfg.get("nil_id", "NIL") for name, pipe in self.linkers}
        first = self.linkers[0][0] if self.linkers else None
        # A span no linker takes: with one linker, looked up as before the pipeline could
        # have several; with several, in none of their lookups.
        self.kbs[None] = {} if self.several else self.kbs.get(first)
        self.nil_ids[None] = self.nil_ids.get(first, "NIL")

    def record(self, doc: Doc, passthrough: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        """The output object of one document: passthrough keys, text, entities."""
        if not self.linkers:
            return doc_record(doc, passthrough)
        record = dict(passthrough or {})
        record[TEXT_KEY] = doc.text
        entities = []
        for span, _, owner in linked_spans(doc, self.linkers):
            entity = entity_record(span, self.kbs[owner])
            if self.several:
                entity["linker"] = owner
            entities.append(entity)
        record[ENTITIES_KEY] = entities
        return record

    def count(self, stats: LinkStats, record: Dict[str, Any]) -> None:
        """Add one output record to `stats`: entities, linked, NIL (by its linker's nil_id)."""
        entities = record[ENTITIES_KEY]
        stats.docs += 1
        stats.entities += len(entities)
        stats.docs_without_entities += not entities
        for entity in entities:
            if entity["kb_id"] == self.nil_ids.get(entity.get("linker"), self.nil_ids[None]):
                stats.nil += 1
            elif entity["kb_id"]:
                stats.linked += 1


def link_documents(nlp: Language, documents: Iterable[InputDocument], *,
                   path: PathLike = "<input>", batch_size: int = 64, n_process: int = 1,
                   records: Optional[LinkedRecords] = None) -> Iterator[Dict[str, Any]]:
    """Output records for `documents`, in order, through nlp.pipe (every linker's results;
    `records`: a LinkedRecords of `nlp` already built)."""
    check_pipe_settings(batch_size, n_process)
    install_extensions()
    records = records if records is not None else LinkedRecords(nlp)
    docs = ((make_input_doc(nlp, document, path), document.passthrough) for document in documents)
    for doc, passthrough in nlp.pipe(docs, as_tuples=True, batch_size=batch_size,
                                     n_process=n_process):
        yield records.record(doc, passthrough)


def link_file(nlp: Union[Language, PathLike], input_path: PathLike, output_path: PathLike, *,
              format: Optional[str] = None, batch_size: int = 64, n_process: int = 1,
              progress: bool = True, force: bool = False,
              output_format: Optional[str] = None,
              keep_types: Optional[Sequence[str]] = None) -> LinkStats:
    """Link every document of `input_path` and write one JSON line each to `output_path`
    (or, with `output_format` bioc-json/bioc-xml or an output named so, one BioC
    collection; see the module doc).

    force: replace `output_path` even if it is read-only (E035 without it).
    keep_types: only entities of these labels are linked and written (a `bio_types` pipe
        is put before the first linker; None or empty keeps all).

    nlp: a pipeline with one or more bio_linker pipes, or the directory of a saved one
        (loaded after the input has been checked). An `output_path` ending in .gz is gzipped.
    """
    check_pipe_settings(batch_size, n_process)
    out_format = link_output_format(output_path, output_format)
    check_output_path(output_path, what="the linked documents "
                      f"({'JSONL' if out_format == 'jsonl' else 'BioC'})",
                      example="linked.jsonl" if out_format == "jsonl" else "linked.bioc.json",
                      force=force, force_option=True)
    collection = None
    sources: Optional[List[BioCDocument]] = None
    if is_bioc_input(input_path, format):
        # Read once and kept: writing BioC back needs each document's passages.
        collection, sources = read_bioc_collection(input_path, format)
        n_documents = len(sources)
        given_entities = sum(bool(document.mentions) for document in sources)
    else:
        n_documents = 0
        given_entities = 0
        for document in read_input_documents(input_path, format=format):
            n_documents += 1
            given_entities += document.entities is not None
    model_path = None
    if not isinstance(nlp, Language):
        from ..linker.pipeline import load_linker_pipeline

        model_path = nlp
        nlp = load_linker_pipeline(nlp)
    require_linkers(nlp, model_path or "<given nlp>")
    if keep_types:
        add_type_choice(nlp, keep_types)
    stats = LinkStats()
    warn_if_nothing_to_link(nlp, n_documents - given_entities, n_documents,
                            model_path=model_path or "<given nlp>")
    linked = LinkedRecords(nlp)
    from ..io.progress import progress_bar

    documents = (map(bioc_input_document, sources) if sources is not None
                 else read_input_documents(input_path, format=format))
    records = link_documents(nlp, documents, path=input_path, batch_size=batch_size,
                             n_process=n_process, records=linked)
    records = progress_bar(records, total=n_documents, unit="doc", disable=not progress,
                           desc="Linking")
    gzipped = Path(output_path).suffix == ".gz"
    with atomic_file(output_path, "wb" if gzipped or out_format != "jsonl" else "w") as raw:
        fileh = raw
        if gzipped:
            fileh = gzip.open(raw, "wt" if out_format == "jsonl" else "wb", encoding=(
                "utf8" if out_format == "jsonl" else None))
        try:
            if out_format == "jsonl":
                for record in records:
                    fileh.write(json.dumps(record, ensure_ascii=False) + "\n")
                    linked.count(stats, record)
            else:
                writer = BioCWriter(fileh, out_format, collection)
                for number, record in enumerate(records):
                    writer.write(record_to_bioc(record, sources[number] if sources else None,
                                                number=number))
                    linked.count(stats, record)
                writer.close()
        finally:
            if gzipped:
                fileh.close()
    logger.info("Linked %d docs: %d entities, %d linked, %d NIL", stats.docs, stats.entities,
                stats.linked, stats.nil)
    return stats


def link_output_format(output_path: PathLike, output_format: Optional[str] = None) -> str:
    """jsonl, bioc-json or bioc-xml: `output_format` when given, else from the output's name
    (.xml, .json, .bioc[.json]; anything else is JSONL, as before BioC)."""
    if output_format is not None:
        if output_format not in OUTPUT_FORMATS:
            reason = ("parquet is written by --engine ray only" if output_format == "parquet"
                      else "not a format link writes")
            raise BioLinkError(Errors.E365.format(value=output_format, reason=reason))
        return output_format
    return output_format_of(output_path) or "jsonl"


def add_type_choice(nlp: Language, keep: Sequence[str]) -> None:
    """Keep only entities of `keep` from here on: set the pipeline's bio_types pipe, or
    add one before its first linker."""
    from ..ner.type_choice import TYPES_NAME

    if TYPES_NAME in nlp.pipe_names:
        nlp.replace_pipe(TYPES_NAME, TYPES_NAME, config={"keep": list(keep)})
        return
    first_linker = next(name for name, _ in linker_pipes(nlp))
    nlp.add_pipe(TYPES_NAME, before=first_linker, config={"keep": list(keep)})
