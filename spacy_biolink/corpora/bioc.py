"""BioC XML and BioC JSON corpora (BioRED, PubTator3, the BioCreative corpora), read and written
with the maintained `bioc` package.

A BioC document is a list of passages (title, abstract, full-text sections), each with an
`offset` into the document and its own annotations, whose locations are document offsets
too. One BioCDocument here is one document: its passages are placed in one text at their
offsets, the gaps filled with spaces, so that BioRED's title (offset 0) and abstract (offset
len(title) + 1) give the text, offsets and mentions its PubTator file gives, and every
annotation offset is a text offset. A passage that starts at or before the end of the one
before it (offsets that restart at 0, or no gap) is placed one space after it instead, and
`Passage.shift` records how far: writing converts the offsets back, so output offsets are
always the input's.

Annotations become PubTatorMention objects (BioCMention, which also names the annotation),
so `convert`, `link` and `evaluate-e2e` treat BioC and PubTator corpora alike. An
annotation's type is its `type` infon, its ids its `identifier` infon (or `Identifier`,
`MESH`, `NCBI Gene`, ...; none is `-1`, a mention without id); one with several locations
(a discontinuous mention) covers from its first to its last character.

`bioc`'s JSON reader needs every optional key (`infons`, `relations`, `sentences`); the
BioC JSON BioRED and PubTator3 distribute leaves them out, so they are filled in before it
reads the collection. A top-level list of documents, or PubTator3's `{"PubTator3": [...]}`,
is read as a collection of those documents.
"""
import datetime
import io
import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, IO, Iterable, Iterator, List, Mapping, Optional, Sequence, Set

from ..errors import BioLinkError, Errors, Warnings
from ..io.files import atomic_file, check_input_file, iter_lines, open_binary, read_bytes
from ..io.util import PathLike
from .pubtator import PubTatorDocument, PubTatorMention

# Infon keys that hold an annotation's ids, in the order they are looked for.
IDENTIFIER_KEYS = ("identifier", "Identifier", "MESH", "MeSH", "NCBI Gene", "NCBIGene",
                   "NCBI Taxonomy", "Cellosaurus", "ID", "id")
TYPE_KEY = "type"
# doc.user_data key of a converted BioC document's passages: [BioC offset, text offset, length]
PASSAGES_KEY = "passages"
NO_IDENTIFIER = "-1"
# A gap between passages is kept as spaces up to this many characters; a longer one is
# closed up to one space (and recorded as a shift), so a stray offset costs no memory.
MAX_GAP = 10_000
BIOC_FORMATS = ("bioc-xml", "bioc-json")
_SUFFIXES = {".xml": "bioc-xml", ".bioc": None, ".json": "bioc-json"}
_SNIFF_BYTES = 4096


@dataclass
class Passage:
    """Where one BioC passage's text lies in its document's text."""

    offset: int  # the passage's BioC offset, as read
    start: int  # where its text starts in BioCDocument.text
    length: int
    infons: Dict[str, str] = field(default_factory=dict)

    @property
    def shift(self) -> int:
        """Document text offset minus BioC offset, for every character of this passage."""
        return self.start - self.offset

    @property
    def end(self) -> int:
        """Where its text ends in BioCDocument.text."""
        return self.start + self.length


@dataclass
class BioCMention(PubTatorMention):
    """A PubTator-shaped mention read from a BioC annotation (offsets in the document text)."""

    annotation_id: str = ""
    passage: int = 0


@dataclass
class BioCDocument(PubTatorDocument):
    """One BioC document: `pmid` is its id, `text` every passage at its place, `passages`
    where each lies, `source` the `bioc.BioCDocument` read (for writing it back)."""

    full_text: str = ""
    passages: List[Passage] = field(default_factory=list)
    infons: Dict[str, str] = field(default_factory=dict)
    source: Any = None

    @property
    def text(self) -> str:
        """All passages at their offsets, gaps filled with spaces."""
        return self.full_text

    def passage_at(self, start: int) -> int:
        """Index of the passage whose text holds document text offset `start` (the one
        before the gap it falls in, or the first)."""
        found = 0
        for i, passage in enumerate(self.passages):
            if passage.start <= start:
                found = i
            else:
                break
        return found

    def bioc_offset(self, start: int) -> int:
        """The BioC (input) offset of document text offset `start`."""
        return start - self.passages[self.passage_at(start)].shift if self.passages else start


def bioc_format(path: PathLike, format: Optional[str] = None) -> Optional[str]:
    """"bioc-xml" or "bioc-json" when `path` is a BioC file (by `format`, else by its
    content: an XML `<collection>`, or a JSON object with "documents" or list of documents
    with "passages"), None when it is not one. `.gz` is looked through. `format` "bioc":
    either, told by the content."""
    if format is not None and format != "bioc":
        return format if format in BIOC_FORMATS else None
    path = Path(path)
    suffix = (Path(path.stem).suffix if path.suffix == ".gz" else path.suffix).lower()
    if format is None and suffix in (".jsonl", ".ndjson", ".txt", ".text", ".pubtator",
                                     ".spacy"):
        return None
    if not path.is_file():
        return _SUFFIXES.get(suffix)
    with open_binary(path, "BioC file") as stream:
        head = stream.read(_SNIFF_BYTES)
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"<"):
        return "bioc-xml" if b"<collection" in head or b"<document" in head else None
    if text.startswith((b"{", b"[")):
        if b'"passages"' in head or b'"documents"' in head:
            return "bioc-json"
        # The first document may start beyond the first few kilobytes (long infons).
        return _SUFFIXES.get(suffix)
    return None


def load_collection(path: PathLike, format: Optional[str] = None):
    """The `bioc.BioCCollection` of a BioC XML or JSON file (.gz ok)."""
    from bioc import biocjson
    from bioc.biocxml.decoder import BioCXMLDecoder

    path = check_input_file(path, "BioC file")
    fmt = bioc_format(path, format)
    if fmt is None:
        raise BioLinkError(Errors.E360.format(path=path))
    data = read_bytes(path, "BioC file")
    if fmt == "bioc-xml":
        from lxml import etree

        try:
            return BioCXMLDecoder().decode(io.BytesIO(data))
        except etree.XMLSyntaxError as err:
            raise BioLinkError(Errors.E361.format(
                path=path, where=f":{err.lineno}" if err.lineno else "", kind="XML",
                reason=err.msg)) from None
        except (ValueError, TypeError, AttributeError, KeyError) as err:
            raise BioLinkError(Errors.E361.format(path=path, where="", kind="XML",
                                                  reason=f"{type(err).__name__}: {err}")) from None
    try:
        obj = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as err:
        raise BioLinkError(Errors.E361.format(path=path, where="", kind="JSON",
                                              reason=f"not UTF-8 ({err})")) from None
    except json.JSONDecodeError as err:
        raise BioLinkError(Errors.E361.format(path=path, where=f":{err.lineno}", kind="JSON",
                                              reason=err.msg)) from None
    try:
        return biocjson.decoder.parse_collection(_complete_collection(obj))
    except (ValueError, TypeError, AttributeError, KeyError) as err:
        raise BioLinkError(Errors.E361.format(path=path, where="", kind="JSON",
                                              reason=f"{type(err).__name__}: {err}")) from None


def _complete_collection(obj: Any) -> Dict:
    """`obj` with the keys `bioc`'s JSON reader requires and BioRED's JSON leaves out."""
    if isinstance(obj, list):
        obj = {"documents": obj}
    elif isinstance(obj, dict) and "documents" not in obj:
        if "passages" in obj:
            obj = {"documents": [obj]}
        else:
            # PubTator3's export: {"PubTator3": [documents]}
            lists = [value for value in obj.values() if isinstance(value, list)]
            if len(lists) == 1:
                obj = {"documents": lists[0]}
    if not isinstance(obj, dict) or not isinstance(obj.get("documents"), list):
        raise ValueError("no \"documents\" list: a BioC JSON collection is an object "
                         "{\"source\", \"date\", \"key\", \"documents\": [...]}")
    out = {"source": obj.get("source", ""), "date": obj.get("date", ""),
           "key": obj.get("key", ""), "infons": obj.get("infons") or {},
           "documents": [_complete_document(d) for d in obj["documents"]]}
    if "version" in obj:
        out["version"] = obj["version"]
    return out


def _complete_document(doc: Dict) -> Dict:
    doc = dict(doc, infons=doc.get("infons") or {}, relations=[
        _with(r, infons={}, nodes=[]) for r in doc.get("relations") or []],
        passages=[_complete_passage(p) for p in doc.get("passages") or []])
    doc["id"] = str(doc.get("id", ""))
    if "annotations" in doc:
        doc["annotations"] = [_with(a, infons={}, text="") for a in doc["annotations"]]
    return doc


def _complete_passage(passage: Dict) -> Dict:
    return dict(passage, infons=passage.get("infons") or {},
                sentences=[dict(_with(s, infons={}, text=""), annotations=[
                    _with(a, infons={}, text="") for a in s.get("annotations") or []],
                    relations=[_with(r, infons={}, nodes=[]) for r in s.get("relations") or []])
                    for s in passage.get("sentences") or []],
                annotations=[_with(a, infons={}, text="")
                             for a in passage.get("annotations") or []],
                relations=[_with(r, infons={}, nodes=[]) for r in passage.get("relations") or []])


def _with(obj: Dict, **defaults) -> Dict:
    out = dict(obj)
    for key, value in defaults.items():
        if out.get(key) is None:
            out[key] = value
    out.setdefault("id", "")
    return out


def passage_text(passage) -> str:
    """A passage's text; a passage given as sentences only, its sentences at their offsets."""
    if passage.text:
        return passage.text
    parts: List[str] = []
    end = passage.offset
    for sentence in passage.sentences:
        if sentence.offset > end:
            parts.append(" " * (sentence.offset - end))
        elif parts and sentence.offset < end:
            parts.append(" ")
        parts.append(sentence.text or "")
        end = max(end, sentence.offset) + len(sentence.text or "")
    return "".join(parts)


def to_biolink_document(document, path: PathLike = "<BioC>", *,
                        types: Optional[Set[str]] = None) -> BioCDocument:
    """One `bioc.BioCDocument` as a BioCDocument: passages placed, annotations as mentions
    (only those of `types`, corpus type names, when given)."""
    texts: List[str] = []
    passages: List[Passage] = []
    end = 0
    for bioc_passage in document.passages:
        text = passage_text(bioc_passage)
        offset = int(bioc_passage.offset)
        separator = 1 if texts else 0
        start = offset if end + separator <= offset <= end + MAX_GAP else end + separator
        texts.append(" " * (start - end))
        texts.append(text)
        passages.append(Passage(offset, start, len(text), dict(bioc_passage.infons)))
        end = start + len(text)
    full_text = "".join(texts)
    titles = [p for p, bp in zip(passages, document.passages)
              if str(bp.infons.get("type", "")).lower() in ("title", "front")]
    title = full_text[titles[0].start:titles[0].end] if titles else ""
    doc = BioCDocument(pmid=str(document.id), title=title, full_text=full_text,
                       passages=passages, infons=dict(document.infons), source=document)
    annotated = [(i, a) for i, p in enumerate(document.passages) for a in p.annotations]
    annotated += [(i, s_a) for i, p in enumerate(document.passages)
                  for s in p.sentences for s_a in s.annotations]
    annotated += [(None, a) for a in getattr(document, "annotations", [])]
    for index, annotation in annotated:
        mention = _mention(doc, index, annotation, path)
        if mention is None or (types is not None and mention.type not in types):
            continue
        doc.mentions.append(mention)
    doc.mentions.sort(key=lambda m: (m.start, m.end))
    for mention in doc.mentions:
        if mention.end > len(full_text) or \
                full_text[mention.start:mention.end].strip() != mention.text.strip():
            doc.offset_mismatches.append(mention)
    return doc


def _mention(doc: BioCDocument, index: Optional[int], annotation, path: PathLike
             ) -> Optional[BioCMention]:
    if not annotation.locations:
        return None
    infons = annotation.infons
    corpus_type = infons.get(TYPE_KEY)
    if not corpus_type:
        raise BioLinkError(Errors.E362.format(path=path, doc=doc.pmid, id=annotation.id,
                                              text=annotation.text, infons=dict(infons)))
    raw_ids = next((str(infons[k]) for k in IDENTIFIER_KEYS if infons.get(k)), NO_IDENTIFIER)
    starts = []
    ends = []
    for location in annotation.locations:
        offset, length = int(location.offset), int(location.length)
        if length <= 0 or offset < 0:
            raise BioLinkError(Errors.E363.format(path=path, doc=doc.pmid, id=annotation.id,
                                                  text=annotation.text, offset=offset,
                                                  length=length))
        passage = index if index is not None else _passage_of_offset(doc, offset)
        shift = doc.passages[passage].shift if doc.passages else 0
        starts.append(offset + shift)
        ends.append(offset + length + shift)
    start, end = min(starts), max(ends)
    return BioCMention(start, end, annotation.text or "", corpus_type, raw_ids, 0,
                       annotation_id=str(annotation.id),
                       passage=index if index is not None else doc.passage_at(start))


def _passage_of_offset(doc: BioCDocument, offset: int) -> int:
    found = 0
    for i, passage in enumerate(doc.passages):
        if passage.offset <= offset:
            found = i
    return found


def read_bioc(path: PathLike, *, types: Optional[Set[str]] = None,
              pmids: Optional[Set[str]] = None, format: Optional[str] = None
              ) -> Iterator[BioCDocument]:
    """Yield the documents of a BioC XML or JSON file (.gz ok) in file order, as
    read_pubtator does a PubTator file's: `types`/`pmids` keep only those mentions/documents.
    A document id seen twice is an error (E364); mentions whose text is not the text at
    their offsets are in each document's offset_mismatches, counted in one warning."""
    path = Path(path)
    if not path.exists():
        raise BioLinkError(Errors.E302.format(path=path))
    yield from bioc_documents(load_collection(path, format), path, types=types, pmids=pmids)


def read_bioc_collection(path: PathLike, format: Optional[str] = None):
    """(the `bioc.BioCCollection` read, its documents as a list of BioCDocument): what
    `link` needs to write the collection back with its own source, date and key."""
    collection = load_collection(path, format)
    return collection, list(bioc_documents(collection, path))


def bioc_documents(collection, path: PathLike = "<BioC>", *, types: Optional[Set[str]] = None,
                   pmids: Optional[Set[str]] = None) -> Iterator[BioCDocument]:
    """The documents of a `bioc.BioCCollection` as BioCDocuments (read_bioc's checks)."""
    seen: Dict[str, int] = {}
    n_mismatched = 0
    first_mismatch = None
    for number, document in enumerate(collection.documents, 1):
        doc = to_biolink_document(document, path, types=types)
        doc.line = number
        if doc.pmid in seen:
            raise BioLinkError(Errors.E364.format(path=path, id=doc.pmid, first=seen[doc.pmid],
                                                  second=number))
        seen[doc.pmid] = number
        if doc.offset_mismatches:
            n_mismatched += len(doc.offset_mismatches)
            if first_mismatch is None:
                m = doc.offset_mismatches[0]
                first_mismatch = (f"annotation {m.annotation_id} {m.text!r} at {m.start}-{m.end}"
                                  f" of document {doc.pmid}, text there "
                                  f"{doc.text[m.start:m.end]!r}")
        if pmids is None or doc.pmid in pmids:
            yield doc
    if n_mismatched:
        warnings.warn(Warnings.W002.format(n=n_mismatched, path=path, example=first_mismatch))


# ---------------------------------------------------------------- writing


def output_format_of(path: PathLike, format: Optional[str] = None) -> Optional[str]:
    """"bioc-xml" or "bioc-json" for an output named .xml / .bioc.json / .json (.gz
    looked through) or given as `format`; None otherwise."""
    if format is not None:
        return format if format in BIOC_FORMATS else None
    path = Path(path)
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    suffix = Path(name).suffix.lower()
    if suffix in (".xml", ".json"):
        return _SUFFIXES[suffix]
    if suffix == ".bioc":
        return "bioc-json"
    return None


def record_to_bioc(record: Mapping[str, Any], source: Optional[BioCDocument] = None, *,
                   number: int = 0):
    """A `bioc.BioCDocument` of one `link` output record: the source document's id,
    infons and passages (texts and offsets as read; their annotations and relations
    replaced), or, for a plain-text input, one passage at offset 0; each entity one
    annotation with infons `type` (its label) and `identifier` (its kb_id), plus `score`,
    `name` and `linker` where the record has them, at the input's offsets."""
    import bioc

    document = bioc.BioCDocument()
    if source is not None:
        document.id = source.pmid
        document.infons = dict(source.infons)
        passages = source.passages
        originals = source.source.passages if source.source is not None else [None] * len(passages)
        text = source.text
        for place, original in zip(passages, originals):
            out = bioc.BioCPassage()
            out.offset = place.offset
            out.infons = dict(place.infons)
            if original is not None and not original.text and original.sentences:
                for sentence in original.sentences:
                    copy = bioc.BioCSentence()
                    copy.offset, copy.text, copy.infons = (sentence.offset, sentence.text,
                                                           dict(sentence.infons))
                    out.add_sentence(copy)
            else:
                out.text = text[place.start:place.end]
            document.add_passage(out)
    else:
        passthrough = {k: v for k, v in record.items() if k not in ("text", "entities")}
        document.id = str(passthrough.pop("id", passthrough.pop("pmid", number)))
        document.infons = {k: v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
                           for k, v in passthrough.items()}
        passage = bioc.BioCPassage()
        passage.offset = 0
        passage.text = record["text"]
        document.add_passage(passage)
        passages = [Passage(0, 0, len(record["text"]))]
    for number, entity in enumerate(record.get("entities", [])):
        _add_annotation(document, passages, entity, str(number))
    return document


def _add_annotation(document, passages: Sequence[Passage], entity: Mapping[str, Any],
                    annotation_id: str) -> None:
    """One entity as an annotation of the passage it starts in; an entity across passages
    (the space between title and abstract) gets one location per passage."""
    import bioc

    start, end = entity["start"], entity["end"]
    annotation = bioc.BioCAnnotation()
    annotation.id = annotation_id
    annotation.text = entity["text"]
    annotation.infons[TYPE_KEY] = entity["label"]
    annotation.infons["identifier"] = entity["kb_id"]
    if entity.get("kb_ents"):
        annotation.infons["score"] = f"{entity['kb_ents'][0][1]:.4g}"
    name = (entity.get("kb_names") or {}).get(entity["kb_id"])
    if name:
        annotation.infons["name"] = name
    if entity.get("linker"):
        annotation.infons["linker"] = entity["linker"]
    owner = None
    for i, place in enumerate(passages):
        piece_start, piece_end = max(start, place.start), min(end, place.end)
        if piece_start < piece_end:
            owner = i if owner is None else owner
            annotation.add_location(bioc.BioCLocation(piece_start - place.shift,
                                                      piece_end - piece_start))
    if owner is None:  # an entity in a gap between passages: none of the text
        return
    document.passages[owner].add_annotation(annotation)


class BioCWriter:
    """Writes BioC documents one at a time to an open file: a BioC JSON collection
    (binary file handle encoded as UTF-8) or BioC XML (`bioc`'s document writer)."""

    def __init__(self, fileh: IO[bytes], format: str, collection_info: Optional[Any] = None):
        self.format = format
        self.fileh = fileh
        source = getattr(collection_info, "source", None) or "spacy-biolink"
        date = getattr(collection_info, "date", None) or datetime.date.today().isoformat()
        key = getattr(collection_info, "key", None) or ""
        infons = dict(getattr(collection_info, "infons", None) or {})
        self.first = True
        if format == "bioc-xml":
            import bioc
            from bioc.biocxml.encoder import BioCXMLDocumentWriter

            info = bioc.BioCCollection()
            info.source, info.date, info.key, info.infons = source, date, key, infons
            self._xml = BioCXMLDocumentWriter(fileh)
            self._xml.write_collection_info(info)
        else:
            head = json.dumps({"source": source, "date": date, "key": key, "infons": infons},
                              ensure_ascii=False)
            fileh.write((head[:-1] + ', "documents": [\n').encode("utf8"))

    def write(self, document) -> None:
        """Write one `bioc.BioCDocument`."""
        if self.format == "bioc-xml":
            self._xml.write_document(document)
            return
        from bioc.biocjson import toJSON

        text = json.dumps(toJSON(document), ensure_ascii=False)
        self.fileh.write(((",\n" if not self.first else "") + text).encode("utf8"))
        self.first = False

    def close(self) -> None:
        """Finish the collection."""
        if self.format == "bioc-xml":
            self._xml.close()
        else:
            self.fileh.write(b"\n]}\n")


def write_bioc(path: PathLike, documents: Iterable, format: Optional[str] = None,
               collection_info: Optional[Any] = None) -> int:
    """Write `bioc.BioCDocument`s to `path` as one collection (format from the name when
    None; `.gz` gzipped); the number written."""
    import gzip

    fmt = output_format_of(path, format) or "bioc-json"
    n = 0
    with atomic_file(path, "wb") as raw:
        fileh = gzip.open(raw, "wb") if str(path).endswith(".gz") else raw
        try:
            writer = BioCWriter(fileh, fmt, collection_info)
            for document in documents:
                writer.write(document)
                n += 1
            writer.close()
        finally:
            if fileh is not raw:
                fileh.close()
    return n


def read_corpus(path: PathLike, *, types: Optional[Set[str]] = None,
                pmids: Optional[Set[str]] = None) -> Iterator[PubTatorDocument]:
    """The documents of an annotated corpus file: BioC XML or JSON (by content, read_bioc)
    or PubTator (read_pubtator), each as a PubTatorDocument (BioCDocument for BioC)."""
    from .pubtator import read_pubtator

    path = Path(path)
    if path.is_file() and bioc_format(path) is not None:
        return read_bioc(path, types=types, pmids=pmids)
    return read_pubtator(path, types=types, pmids=pmids)


def convert_bioc(input_path: PathLike, output_path: PathLike, *, nlp=None,
                 types: Optional[Set[str]] = None, pmids: Optional[Set[str]] = None,
                 spans_key: str = "mentions", labels: Optional[Dict[str, str]] = None,
                 exclude_pmids: Optional[Set[str]] = None):
    """convert_pubtator for a BioC XML or JSON file: a `.spacy` DocBin of one Doc per BioC
    document (all its passages), its gold mentions as convert_pubtator stores them, and
    `doc.user_data["passages"]` the (BioC offset, text offset, length) of each passage."""
    import spacy

    from .docbin import ConversionStats, PMID_KEY, pubtator_to_docs, write_converted

    output_path = Path(output_path)
    if output_path.suffix != ".spacy":
        raise BioLinkError(Errors.E304.format(path=output_path))
    nlp = nlp if nlp is not None else spacy.blank("en")
    stats = ConversionStats()
    documents = [d for d in read_bioc(input_path, types=types, pmids=pmids)
                 if not exclude_pmids or d.pmid not in exclude_pmids]
    by_id = {d.pmid: d for d in documents}

    def with_passages(docs):
        for doc in docs:
            doc.user_data[PASSAGES_KEY] = [[p.offset, p.start, p.length]
                                           for p in by_id[doc.user_data[PMID_KEY]].passages]
            yield doc

    write_converted(with_passages(pubtator_to_docs(nlp, documents, spans_key=spans_key,
                                                   stats=stats, labels=labels)),
                    input_path, output_path, stats, types=types, pmids=pmids)
    return stats


def bioc_gold_docs(nlp, path: PathLike, *, labels: Optional[Dict[str, str]] = None,
                   spans_key: str = "mentions") -> List:
    """The gold Docs of a BioC file, as `convert` would write them, for evaluate-e2e."""
    from .docbin import pubtator_to_docs

    return list(pubtator_to_docs(nlp, read_bioc(path), spans_key=spans_key, labels=labels))


def read_pmid_file(path: PathLike, what: str = "PMID file") -> Set[str]:
    """The PMIDs of a file of one PMID a line (blank lines skipped), or of a corpus
    (PubTator or BioC: the PMIDs of its documents), for keeping or leaving out documents."""
    from ..io.files import check_no_control_characters

    path = Path(path)
    lines = [(n, line.strip()) for n, line in iter_lines(path, what)]  # E010 names `what`
    if any("|t|" in line or "\t" in line or line.startswith(("<", "{", "["))
           for _, line in lines[:50]):
        return {document.pmid for document in read_corpus(path)}
    pmids = set()
    for line_no, line in lines:
        check_no_control_characters(path, line_no, line, "a PMID")
        if line:
            pmids.add(line)
    return pmids
