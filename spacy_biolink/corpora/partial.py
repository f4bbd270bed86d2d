"""Six-type training DocBins from corpora that each annotate only some of the six types.

Nine corpora teach the six-type NER (corpora/types.py), and each annotates a different
subset of the types: GNormPlus genes only, BC5CDR diseases and chemicals only. Merged as
they are, every gene of a BC5CDR abstract is an `O` token, a negative for Gene, and the
NER learns to miss genes (AIONER measured 70.0 F1 on BioRED test for such a naive
merge, against 91.3 with its fix).

The fix here is spaCy's missing value: a token whose `ent_iob` is 0 is unknown to the
NER (its oracle allows every move there, and the scorer ignores predictions on it), so
it teaches nothing either way. Marking every token outside the annotated entities
missing would throw away every negative of the annotated types too, so only the tokens
that may hold a mention of a type the corpus does not annotate are marked: those a term
list of that type matches (`UnknownTerms`, e.g. the mention texts of the other corpora's
training splits), and the corpus's own mentions of types that are none of the six
(GNormPlus's DomainMotif, NLM-Gene's Cell). All other tokens stay `O`, negatives for
every type, as in the naive merge.
"""
import random
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import AbstractSet, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

from spacy.language import Language
from spacy.matcher import PhraseMatcher
from spacy.tokens import Doc, DocBin, Span
from spacy.util import filter_spans

from ..errors import BioLinkError, Errors
from ..io.files import atomic_file
from ..io.util import PathLike
from .docbin import ConversionStats, pubtator_to_docs
from .pubtator import read_pubtator
from .types import CORPUS_TYPE_LABELS, SIX_TYPES, six_type_label

# Term lists match lowercased tokens; one- and two-letter terms ("B", "IL") would mark half
# of every abstract missing.
MIN_TERM_CHARS = 3
MAX_TERM_TOKENS = 12


@dataclass
class PartialStats:
    """What the missing-value marking did, beside the conversion's own counts."""

    docs: int = 0
    tokens: int = 0
    missing_tokens: int = 0
    missing_by_type: Optional[Dict[str, int]] = None
    not_six_mentions: int = 0
    annotated: Sequence[str] = ()

    def to_dict(self) -> dict:
        """The counts as a plain dict, for JSON reports."""
        return asdict(self)


def parse_six_types(text: Optional[str], option: str = "--annotates") -> Optional[Set[str]]:
    """The six-type labels of a comma-separated `text` (E540 naming `option` for a name
    that is none of them); None for None or an empty string."""
    if not text or not text.strip():
        return None
    names = {name.strip() for name in text.split(",") if name.strip()}
    unknown = sorted(name for name in names if name not in SIX_TYPES)
    if unknown:
        raise BioLinkError(Errors.E540.format(option=option, names=unknown,
                                              six=", ".join(SIX_TYPES)))
    return names


def annotated_six_types(paths: Iterable[PathLike]) -> Set[str]:
    """The six-type labels that the mentions of PubTator files `paths` carry."""
    found: Set[str] = set()
    for path in paths:
        for document in read_pubtator(path):
            for mention in document.mentions:
                label = six_type_label(mention.type)
                if label is not None:
                    found.add(label)
    return found


def mention_terms(paths: Iterable[PathLike],
                  labels: Optional[Set[str]] = None,
                  exclude_pmids: AbstractSet[str] = frozenset()) -> Dict[str, Set[str]]:
    """Six-type label -> the mention texts of PubTator files `paths` (only `labels`, when
    given; never those of documents in `exclude_pmids`), e.g. the terms that
    `UnknownTerms` marks missing."""
    terms: Dict[str, Set[str]] = {}
    for path in paths:
        for document in read_pubtator(path):
            if document.pmid in exclude_pmids:
                continue
            for mention in document.mentions:
                label = six_type_label(mention.type)
                if label is None or (labels is not None and label not in labels):
                    continue
                text = mention.text.strip()
                if len(text) >= MIN_TERM_CHARS:
                    terms.setdefault(label, set()).add(text)
    return terms


class UnknownTerms:
    """Term lists per six-type label, matched on lowercased tokens of the pipeline's
    tokenizer (PhraseMatcher on LOWER)."""

    def __init__(self, nlp: Language, terms: Dict[str, Iterable[str]]):
        self.matcher = PhraseMatcher(nlp.vocab, attr="LOWER")
        self.labels: List[str] = []
        for label, names in sorted(terms.items()):
            kept = sorted({n for n in names if len(n.strip()) >= MIN_TERM_CHARS})
            patterns = [d for d in nlp.tokenizer.pipe(kept) if 0 < len(d) <= MAX_TERM_TOKENS]
            if patterns:
                self.matcher.add(label, patterns)
                self.labels.append(label)

    def spans(self, doc: Doc, labels: Iterable[str]) -> List[Span]:
        """The matches in `doc` of the terms of `labels` (overlapping ones included)."""
        wanted = {doc.vocab.strings[label] for label in labels if label in self.labels}
        if not wanted:
            return []
        return [Span(doc, start, end, label=match_id)
                for match_id, start, end in self.matcher(doc) if match_id in wanted]


def mark_partial(doc: Doc, annotated: Set[str], unknown: Optional[UnknownTerms] = None,
                 spans_key: str = "mentions", stats: Optional[PartialStats] = None) -> Doc:
    """Set `doc.ents` to its six-type gold mentions (longest first) and mark missing
    (ent_iob 0) every other token that a term of a type outside `annotated` matches or a
    mention of no six type covers; the rest is `O`. Returns `doc`, changed in place."""
    mentions = list(doc.spans[spans_key]) if spans_key in doc.spans else list(doc.ents)
    six = [span for span in mentions if span.label_ in SIX_TYPES]
    others = [span for span in mentions if span.label_ not in SIX_TYPES]
    ents = filter_spans(six)
    covered = set()
    for ent in ents:
        covered.update(range(ent.start, ent.end))
    unannotated = [label for label in SIX_TYPES if label not in annotated]
    candidates = others + (unknown.spans(doc, unannotated) if unknown is not None else [])
    missing_tokens: Set[int] = set()
    by_type: Dict[str, int] = {}
    for span in candidates:
        tokens = set(range(span.start, span.end))
        # A term that overlaps an annotated entity is that entity's business, not unknown
        if tokens & covered:
            continue
        new = tokens - missing_tokens
        missing_tokens |= tokens
        by_type[span.label_] = by_type.get(span.label_, 0) + len(new)
    missing = [Span(doc, i, i + 1) for i in sorted(missing_tokens)]
    doc.set_ents(ents, missing=missing, default="outside")
    if stats is not None:
        stats.docs += 1
        stats.tokens += len(doc)
        stats.missing_tokens += len(missing_tokens)
        stats.not_six_mentions += len(others)
        totals = stats.missing_by_type if stats.missing_by_type is not None else {}
        for label, n in by_type.items():
            totals[label] = totals.get(label, 0) + n
        stats.missing_by_type = totals
    return doc


def six_type_docs(nlp: Language, input_path: PathLike, *, partial: bool = False,
                  annotates: Optional[Set[str]] = None,
                  unknown: Optional[UnknownTerms] = None,
                  sample: Optional[int] = None, seed: int = 0,
                  stats: Optional[ConversionStats] = None,
                  partial_stats: Optional[PartialStats] = None,
                  exclude_pmids: AbstractSet[str] = frozenset()) -> Iterator[Doc]:
    """The docs of a PubTator corpus with the six-type labels (corpora/types.py), every
    mention kept in doc.spans["mentions"] and only the six-type ones in doc.ents.

    partial: mark missing the tokens of types the corpus does not annotate
    (`mark_partial`); `annotates`: those it does (default: the types its mentions carry).
    sample: keep this many documents, drawn with `seed` (for the large caption corpora).
    exclude_pmids: documents left out before sampling: another corpus's dev or test
    documents that this one holds too (BioRED shares abstracts with BC5CDR and tmVar3).
    """
    documents = [d for d in read_pubtator(input_path) if d.pmid not in exclude_pmids]
    if sample is not None and sample < len(documents):
        keep = set(random.Random(seed).sample(range(len(documents)), sample))
        documents = [d for i, d in enumerate(documents) if i in keep]
    if annotates is None:
        annotates = {label for d in documents for m in d.mentions
                     if (label := six_type_label(m.type)) is not None}
    if partial_stats is not None:
        partial_stats.annotated = sorted(annotates)
    for doc in pubtator_to_docs(nlp, documents, stats=stats, labels=CORPUS_TYPE_LABELS):
        if partial:
            mark_partial(doc, annotates, unknown, stats=partial_stats)
        else:
            # The naive merge: every token outside a six-type mention is `O`
            doc.set_ents(filter_spans([s for s in doc.spans["mentions"]
                                       if s.label_ in SIX_TYPES]), default="outside")
            if partial_stats is not None:
                partial_stats.docs += 1
                partial_stats.tokens += len(doc)
        yield doc


def convert_six_types(input_path: PathLike, output_path: PathLike, nlp: Language, *,
                      partial: bool = False, annotates: Optional[Set[str]] = None,
                      unknown: Optional[UnknownTerms] = None, sample: Optional[int] = None,
                      seed: int = 0, exclude_pmids: AbstractSet[str] = frozenset()
                      ) -> Tuple[ConversionStats, PartialStats]:
    """Write the `six_type_docs` of a PubTator corpus to a `.spacy` DocBin (written beside
    its target and renamed into place; E541 when no document is left)."""
    output_path = Path(output_path)
    if output_path.suffix != ".spacy":
        raise BioLinkError(Errors.E304.format(path=output_path))
    stats, partial_stats = ConversionStats(), PartialStats()
    doc_bin = DocBin(store_user_data=True)
    for doc in six_type_docs(nlp, input_path, partial=partial, annotates=annotates,
                             unknown=unknown, sample=sample, seed=seed, stats=stats,
                             partial_stats=partial_stats, exclude_pmids=exclude_pmids):
        doc_bin.add(doc)
    if not stats.docs:
        raise BioLinkError(Errors.E541.format(path=input_path, output=output_path))
    data = doc_bin.to_bytes()
    with atomic_file(output_path, "wb") as fileh:
        fileh.write(data)
    return stats, partial_stats


def score_six_types(gold_docs: Sequence[Doc], pred_docs: Iterable[Doc],
                    types: Optional[Iterable[str]] = None,
                    spans_key: str = "mentions") -> Dict:
    """Exact-offset, exact-type NER precision/recall/F1 of `pred_docs` (their doc.ents)
    against the six-type gold mentions of `gold_docs` (doc.spans[spans_key], or doc.ents),
    micro over `types` (default all six) and per type. Only predictions of `types` count:
    a corpus that annotates genes alone is scored on genes alone."""
    wanted = list(types) if types is not None else list(SIX_TYPES)
    counts = {label: [0, 0, 0] for label in wanted}  # gold, predicted, correct
    for gold_doc, pred_doc in zip(gold_docs, pred_docs):
        spans = gold_doc.spans[spans_key] if spans_key in gold_doc.spans else gold_doc.ents
        gold = {(s.start_char, s.end_char, s.label_) for s in spans if s.label_ in counts}
        pred = {(e.start_char, e.end_char, e.label_) for e in pred_doc.ents
                if e.label_ in counts}
        for key in gold:
            counts[key[2]][0] += 1
        for key in pred:
            counts[key[2]][1] += 1
            counts[key[2]][2] += key in gold
    total = [sum(c[i] for c in counts.values()) for i in range(3)]
    return {"types": wanted, "ner": _prf(*total),
            "per_type": {label: _prf(*c) for label, c in counts.items()}}


def _prf(n_gold: int, n_pred: int, n_correct: int) -> Dict[str, float]:
    precision = n_correct / n_pred if n_pred else 0.0
    recall = n_correct / n_gold if n_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"p": precision, "r": recall, "f": f1, "n_gold": n_gold, "n_pred": n_pred,
            "n_correct": n_correct}
