"""PubTator corpora as spaCy Docs and `.spacy` DocBins, for training NER and evaluating.

Each document becomes one Doc over `title + " " + abstract` (the text the offsets count
in), with `doc.user_data["pmid"]`. Gold mentions are stored twice:

* `doc.spans[spans_key]` holds every mention, in file order, nested and overlapping ones
  included; `group.attrs["part_texts"]` is aligned with it and gives each mention's
  composite part strings (the 7th column; an empty list for most mentions).
* `doc.ents` holds a non-overlapping subset (longest first, then earliest), because
  spaCy's NER can only learn one entity per token. Every token outside it is `O`.

Span label = mention type, except NCBI-disease's four types, which become `Disease`
(the NER's one label; `labels=None` keeps them; the types stay in the span group's
`types` attribute). `kb_id_` = the mention's normalized ids, joined as the corpus
joins them (`A|B` a composite, one concept per part; `A+B` one mention needing both).
A CUI-less mention (`-1`) gets `kb_id_ = ""`, spaCy's own "no concept": the
EntityLinker skips such entities when training and linking scorers leave them out. A
composite with one CUI-less part keeps `-1` in that place (`D1|-1`), so the ids stay
aligned with the part strings.

Offsets that cut a token are widened to whole tokens (`alignment_mode="expand"`) and
counted, never silently shifted.
"""
import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Set

import spacy
from spacy.language import Language
from spacy.tokens import Doc, DocBin, Span, SpanGroup
from spacy.util import filter_spans

from ..errors import BioLinkError, Errors
from ..kb.ids import normalize_medic_id, split_gold_ids
from ..io.files import atomic_file
from ..io.util import PathLike
from ..text.docs import make_doc
from .pubtator import PubTatorDocument, PubTatorMention, read_pubtator
from .types import NCBI_NUMBERED, VARIANT, gold_id_parts, six_type_label

logger = logging.getLogger(__name__)

PMID_KEY = "pmid"
PART_TEXTS_ATTR = "part_texts"
# Beside the spans of doc.spans["mentions"]: each mention's type as the corpus wrote it,
# kept when `labels` maps it to another span label.
TYPES_ATTR = "types"
# NCBI-disease's four mention types are all diseases: the NER in front of bio_linker
# (configs/ner.cfg) predicts one `Disease` label, and `spacy evaluate` compares span labels,
# so the gold DocBins carry that label too (its NER P/R/F were 0.00 against the corpus
# types). Types not listed (BC5CDR's Chemical and Disease) are kept as they are.
NCBI_DISEASE_LABELS = {"SpecificDisease": "Disease", "DiseaseClass": "Disease",
                       "CompositeMention": "Disease", "Modifier": "Disease"}
NO_ID = ("-1", "-", "")
MAX_EXAMPLES = 5


@dataclass
class ConversionStats:
    """What the conversion did to the mentions; `examples_*` hold the first few cases."""

    docs: int = 0
    mentions: int = 0
    ents: int = 0
    without_id: int = 0
    misaligned: int = 0
    overlapping_dropped: int = 0
    unplaceable: int = 0
    text_mismatches: int = 0
    examples_misaligned: List[str] = field(default_factory=list)
    examples_unplaceable: List[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """The counts as a plain dict, for JSON reports."""
        return asdict(self)

    def summary(self) -> str:
        """One line for the log: counts of docs, mentions and the problems met converting them."""
        return (f"{self.docs} docs, {self.mentions} mentions ({self.without_id} without id), "
                f"{self.ents} ents, {self.misaligned} misaligned (widened to tokens), "
                f"{self.overlapping_dropped} overlapping left out of doc.ents, "
                f"{self.unplaceable} unplaceable, {self.text_mismatches} text mismatches")


def read_docbin(path: PathLike, vocab, what: str = "DocBin") -> List[Doc]:
    """The docs of a .spacy file, with E025 (naming the file) for anything that is not a
    DocBin: msgpack and zlib raise many kinds of errors on bad bytes."""
    from ..io.files import read_bytes

    data = read_bytes(path, what)
    try:
        return list(DocBin().from_bytes(data).get_docs(vocab))
    except Exception as err:  # noqa: BLE001 - msgpack and zlib raise many kinds
        raise BioLinkError(Errors.E025.format(path=path, reason=f"{type(err).__name__}: "
                                              f"{err}")) from None


def corpus_kb_id(raw_ids: str, corpus_type: str = "") -> str:
    """The kb_id_ for a corpus id field: normalized ids with the corpus's `|` and `+` kept.

    Read by the mention's type (corpora/types.py `gold_id_parts`): a gene's or a species'
    bare number stays bare (6528 is NCBI Gene's, not OMIM:6528), the first of the genes
    GNormPlus lists for one mention stands for them, and a variant's id is its tmVar form
    without what tmVar attached after `;`."""
    label = six_type_label(corpus_type)
    if label in NCBI_NUMBERED or label == VARIANT:
        parts = gold_id_parts(raw_ids, corpus_type)
        if not any(parts):
            return ""
        return "|".join(part[0] if part else "-1" for part in parts)
    if not split_gold_ids(raw_ids):
        return ""
    return "|".join("+".join(_one_id(i) for i in alternative.split("+"))
                    for alternative in raw_ids.split("|"))


def _one_id(raw: str) -> str:
    return "-1" if raw.strip() in NO_ID else normalize_medic_id(raw)


def pubtator_to_docs(nlp: Language, documents: Iterable[PubTatorDocument], *,
                     types: Optional[Set[str]] = None, spans_key: str = "mentions",
                     stats: Optional[ConversionStats] = None,
                     labels: Optional[Dict[str, str]] = None) -> Iterator[Doc]:
    """Yield one Doc per document, tokenized with `nlp.make_doc` (no pipe runs).

    types: keep only mentions of these (corpus) types. stats: updated in place as docs
    are yielded. labels: corpus type -> span label (types not in it keep their own;
    None: every type is its own label); the corpus types stay in the span group's
    `types` attribute.
    """
    labels = labels or {}
    stats = stats if stats is not None else ConversionStats()
    for document in documents:
        doc = make_doc(nlp, document.text, f"PMID {document.pmid}")
        doc.user_data[PMID_KEY] = document.pmid
        spans: List[Span] = []
        part_texts: List[List[str]] = []
        corpus_types: List[str] = []
        for mention in document.mentions:
            if types is not None and mention.type not in types:
                continue
            stats.mentions += 1
            kb_id = corpus_kb_id(mention.raw_ids, mention.type)
            stats.without_id += not kb_id
            label = labels.get(mention.type, mention.type)
            span = doc.char_span(mention.start, mention.end, label=label, kb_id=kb_id)
            if span is None:
                span = doc.char_span(mention.start, mention.end, label=label, kb_id=kb_id,
                                     alignment_mode="expand")
                if span is None:
                    stats.unplaceable += 1
                    _example(stats.examples_unplaceable, document, mention, None)
                    continue
                stats.misaligned += 1
                _example(stats.examples_misaligned, document, mention, span)
            spans.append(span)
            part_texts.append(list(mention.part_texts))
            corpus_types.append(mention.type)
        doc.spans[spans_key] = SpanGroup(doc, name=spans_key, spans=spans,
                                         attrs={PART_TEXTS_ATTR: part_texts,
                                                TYPES_ATTR: corpus_types})
        doc.ents = filter_spans(spans)
        stats.docs += 1
        stats.ents += len(doc.ents)
        stats.overlapping_dropped += len(spans) - len(doc.ents)
        stats.text_mismatches += len(document.offset_mismatches)
        yield doc


def _example(examples: List[str], document: PubTatorDocument, mention: PubTatorMention,
             span: Optional[Span]) -> None:
    if len(examples) < MAX_EXAMPLES:
        widened = "no token span" if span is None else f"widened to {span.text!r}"
        examples.append(f"{document.pmid} line {mention.line}: {mention.text!r} at "
                        f"{mention.start}-{mention.end}, {widened}")


def tokenizer_nlp_from_config(config_path: PathLike, command: str = "convert",
                              what: str = "DocBins") -> Language:
    """A blank pipeline with the language and tokenizer of a training config's [nlp]
    section, and nothing else resolved (no vectors, no components): what `convert` and
    `ner-vectors` need to tokenize text the way `spacy train` with that config will (E306,
    naming `command` and the `what` it makes, when the file or its [nlp] section is
    missing or its tokenizer is not registered)."""
    from ..io.files import read_config

    config_path = Path(config_path)

    def refused(reason: str) -> BioLinkError:
        return BioLinkError(Errors.E306.format(command=command, what=what, path=config_path,
                                               reason=reason))

    if not config_path.is_file():
        raise refused("no such file")
    # Bad bytes, a BOM and parse errors as every config the package reads (file and line).
    config = read_config(config_path)
    nlp_section = config.get("nlp")
    if not nlp_section or "lang" not in nlp_section:
        raise refused("no [nlp] lang")
    overrides = {}
    if "tokenizer" in nlp_section:
        overrides = {"nlp": {"tokenizer": dict(nlp_section["tokenizer"])}}
    try:
        return spacy.blank(nlp_section["lang"], config=overrides)
    except Exception as err:  # catalogue's RegistryError: an unknown @tokenizers name
        raise refused(f"its tokenizer could not be built ({err})") from err


def convert_pubtator(input_path: PathLike, output_path: PathLike, *,
                     nlp: Optional[Language] = None, types: Optional[Set[str]] = None,
                     pmids: Optional[Set[str]] = None, spans_key: str = "mentions",
                     labels: Optional[Dict[str, str]] = NCBI_DISEASE_LABELS,
                     exclude_pmids: Optional[Set[str]] = None) -> ConversionStats:
    """Convert a PubTator file (.gz ok) to a `.spacy` DocBin (see the module docstring).

    The whole corpus is read before anything is written, and the file is written beside
    its target and renamed into place, so a malformed input leaves no file behind.
    nlp: whose tokenizer to use (default `spacy.blank("en")`); tokenize with the
    pipeline you will train, or the entities may not align with its tokens.
    labels: corpus type -> span label; by default NCBI-disease's four types become
    `Disease`, the label configs/ner.cfg's NER predicts, so `spacy evaluate` scores NER
    against it. None keeps the corpus types as labels. Either way the corpus types stay
    in `doc.spans[spans_key].attrs["types"]`.
    exclude_pmids: documents left out (the dev and test documents of other corpora that
    this one holds too, so that what is measured on them was never trained on).
    """
    output_path = Path(output_path)
    if output_path.suffix != ".spacy":
        raise BioLinkError(Errors.E304.format(path=output_path))
    nlp = nlp if nlp is not None else spacy.blank("en")
    stats = ConversionStats()
    documents = (d for d in read_pubtator(input_path, types=types, pmids=pmids)
                 if not exclude_pmids or d.pmid not in exclude_pmids)
    write_converted(pubtator_to_docs(nlp, documents, spans_key=spans_key, stats=stats,
                                     labels=labels),
                    input_path, output_path, stats, types=types, pmids=pmids)
    return stats


def write_converted(docs: Iterable[Doc], input_path: PathLike, output_path: PathLike,
                    stats: ConversionStats, *, types: Optional[Set[str]] = None,
                    pmids: Optional[Set[str]] = None) -> None:
    """Write a converter's `docs` (counted in `stats` as they are made) to the `.spacy`
    file `output_path`, whole or not at all, and log what the conversion did; E954 when
    no document was left (`types`/`pmids`, the filters that left none, are named)."""
    doc_bin = DocBin(store_user_data=True)
    for doc in docs:
        doc_bin.add(doc)
    if not stats.docs:
        # An empty DocBin trains and evaluates on nothing, and spaCy says so only later.
        filters = ([f"pmids {sorted(pmids)[:5]}"] if pmids else []) + \
            ([f"types {sorted(types)}"] if types else [])
        raise BioLinkError(Errors.E954.format(
            path=input_path, output=output_path,
            filters=f" with {' and '.join(filters)}" if filters else ""))
    data = doc_bin.to_bytes()
    with atomic_file(output_path, "wb") as fileh:
        fileh.write(data)
    logger.info("Converted %s to %s: %s", input_path, output_path, stats.summary())
    if stats.misaligned:
        logger.warning("%d mention(s) did not fall on token boundaries and were widened to "
                       "whole tokens, e.g. %s", stats.misaligned, "; ".join(stats.examples_misaligned))
    if stats.unplaceable:
        logger.warning("%d mention(s) cover no token and were left out, e.g. %s",
                       stats.unplaceable, "; ".join(stats.examples_unplaceable))
