"""End-to-end scores: the whole pipeline (NER, then bio_linker) on raw text vs gold docs.

The gold docs are those `convert_pubtator` writes: every gold mention is in
`doc.spans["mentions"]` (or `doc.ents` for docs without that group), at token-aligned
offsets, with the corpus ids in `kb_id_`. The predictions are the spans bio_linker links
(`BioLinker.spans_to_link`: doc.ents, or its spans_key, filtered by its labels); with
several linkers, every linker's spans, or one linker's (`linker=NAME`; then only the gold
mentions whose type is one of its labels, when it has labels).

NER: a prediction is right when its character offsets equal a gold mention's (and its
label the gold type, with match_labels). Offsets are compared as sets: two gold
mentions on the same stretch of text count once.

Linking: a prediction is right when its span is right and its concepts equal the gold
concepts. Ids are compared as concepts of the linker's dictionary (with several linkers,
of the first dictionary in pipeline order that has the id), so an alternative id
matches its concept's primary id; a composite `A|B` (or `A+B`) is right only for a
prediction whose kb_id_ names the same set of concepts. Gold mentions with no concept
(`-1`, or a composite with a `-1` part) count for NER only, and so do predictions on
their spans; predictions linked to nothing (`nil_id` or "") are not linking predictions.
"""
import os
import re
from pathlib import Path
from typing import Dict, FrozenSet, Iterable, List, Optional, Set, Tuple, Union

from spacy.language import Language
from spacy.tokens import Doc, Span
from ..io.progress import progress_bar

from ..corpora.docbin import NO_ID, TYPES_ATTR, read_docbin
from ..kb.dictionary import ConceptDictionary
from ..errors import BioLinkError, Errors
from ..io.util import PathLike
from ..linker.find import require_linkers
from ..text.docs import check_max_length
from .gold_mentions import find_linker

Key = Tuple

ID_SEPARATORS = re.compile(r"[|+]")


def evaluate_end_to_end(nlp: Language, gold: Union[PathLike, Iterable[Doc]], *,
                        types: Optional[Set[str]] = None, match_labels: bool = False,
                        gold_spans_key: str = "mentions", batch_size: int = 64,
                        progress: bool = False, linker: Optional[str] = None,
                        path: PathLike = "<nlp>") -> Dict:
    """NER and linking precision, recall and F1 of `nlp` on the texts of the gold docs.

    gold: a `.spacy` DocBin path or gold Docs. types: score only gold mentions of these
    types and predictions with these labels. match_labels: require label == gold type.
    linker: score only the linker of that name (default: every linker of `nlp`); `path`
    names the pipeline in errors.
    """
    if linker is not None:
        linkers = [find_linker(nlp, path, linker, command="evaluate-e2e")]
        labels = set(linkers[0].cfg.get("labels") or ())
        if labels:
            types = labels if types is None else set(types) & labels
    else:
        linkers = [pipe for _, pipe in require_linkers(nlp, path)]
    for pipe in linkers:
        if not pipe.is_initialized:
            raise BioLinkError(Errors.E101)
    dictionaries = [pipe.dictionary for pipe in linkers]
    no_link = set(NO_ID) | {pipe.cfg["nil_id"] for pipe in linkers}
    gold_docs = _gold_docs(nlp, gold)
    ner = {"n_gold": 0, "n_pred": 0, "n_correct": 0}
    link = {"n_gold": 0, "n_pred": 0, "n_correct": 0}
    counts = {"n_docs": 0, "n_gold_mentions": 0, "n_gold_without_id": 0, "n_gold_composite": 0,
              "n_pred_on_gold_without_id": 0}
    texts = _checked_texts(nlp, gold_docs, gold)
    predicted_docs = nlp.pipe(progress_bar(texts, desc="end-to-end", unit="doc", disable=not progress),
                              batch_size=batch_size)
    for gold_doc, pred_doc in zip(gold_docs, predicted_docs):
        counts["n_docs"] += 1
        gold_spans = [s for s, corpus_type in _gold_spans_with_types(gold_doc, gold_spans_key)
                      if types is None or s.label_ in types or corpus_type in types]
        pred_spans = [s for pipe in linkers for s in pipe.spans_to_link(pred_doc)
                      if types is None or s.label_ in types]
        gold_links: Dict[Key, Set[FrozenSet]] = {}
        for span in gold_spans:
            key = _key(span, match_labels)
            counts["n_gold_mentions"] += 1
            gold_links.setdefault(key, set())
            concepts = _concepts(span.kb_id_, dictionaries, no_link)
            if concepts is None:
                counts["n_gold_without_id"] += 1
                continue
            counts["n_gold_composite"] += len(concepts) > 1
            gold_links[key].add(concepts)
        predicted: Dict[Key, str] = {}
        for span in pred_spans:
            predicted.setdefault(_key(span, match_labels), span.kb_id_)
        ner["n_gold"] += len(gold_links)
        ner["n_pred"] += len(predicted)
        ner["n_correct"] += len(gold_links.keys() & predicted.keys())
        link["n_gold"] += sum(len(alternatives) for alternatives in gold_links.values())
        for key, kb_id in predicted.items():
            concepts = _concepts(kb_id, dictionaries, no_link)
            if concepts is None:
                continue
            if key in gold_links and not gold_links[key]:
                counts["n_pred_on_gold_without_id"] += 1
                continue
            link["n_pred"] += 1
            link["n_correct"] += concepts in gold_links.get(key, ())
    return {
        "ner": _prf(ner),
        "linking": _prf(link),
        **counts,
        "types": sorted(types) if types else None,
        "match_labels": match_labels,
    }


def _gold_docs(nlp: Language, gold: Union[PathLike, Iterable[Doc]]) -> List[Doc]:
    if isinstance(gold, (str, os.PathLike)):
        path = Path(gold)
        if not path.exists():
            raise BioLinkError(Errors.E305.format(path=path))
        return read_docbin(path, nlp.vocab, "Gold DocBin")
    return list(gold)


def _gold_spans(doc: Doc, key: str) -> Iterable[Span]:
    return doc.spans[key] if key in doc.spans else doc.ents


def _gold_spans_with_types(doc: Doc, key: str) -> List[Tuple[Span, str]]:
    """Each gold span with the corpus type convert recorded for it (its label when none
    was), so `types` still selects NCBI-disease's types once convert labels them Disease."""
    if key not in doc.spans:
        return [(span, span.label_) for span in doc.ents]
    group = doc.spans[key]
    recorded = group.attrs.get(TYPES_ATTR)
    if recorded is None or len(recorded) != len(group):
        return [(span, span.label_) for span in group]
    return list(zip(group, recorded))


def _key(span: Span, match_labels: bool) -> Key:
    if match_labels:
        return (span.start_char, span.end_char, span.label_)
    return (span.start_char, span.end_char)


def _concepts(kb_id: str, dictionaries: List[ConceptDictionary], no_link: Set[str]
              ) -> Optional[FrozenSet]:
    """The concepts a kb_id names, or None when it (or one part of it) names none.

    A concept is (which dictionary, its index there), from the first dictionary that has
    the id; an id no dictionary has stands for itself, so it can still match the same id.
    """
    if kb_id.strip() in no_link:
        return None
    concepts = set()
    for concept_id in ID_SEPARATORS.split(kb_id):
        concept_id = concept_id.strip()
        if concept_id in no_link:
            return None
        found = next(((i, index) for i, index in
                      ((i, d.concept_index(concept_id)) for i, d in enumerate(dictionaries))
                      if index is not None), None)
        concepts.add(concept_id if found is None else found)
    return frozenset(concepts)


def _prf(counts: Dict[str, int]) -> Dict:
    p = counts["n_correct"] / counts["n_pred"] if counts["n_pred"] else 0.0
    r = counts["n_correct"] / counts["n_gold"] if counts["n_gold"] else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"p": p, "r": r, "f": f, **counts}


def format_end_to_end_table(result: Dict) -> str:
    """The end-to-end result as a Markdown table (NER and linking P/R/F1 and counts), with a
    line on the gold mentions that only NER could score."""
    header = ["level", "P", "R", "F1", "gold", "pred", "correct"]
    rows = [[level, *(f"{result[level][m]:.4f}" for m in ("p", "r", "f")),
             *(str(result[level][n]) for n in ("n_gold", "n_pred", "n_correct"))]
            for level in ("ner", "linking")]
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |" for r in rows]
    lines.append(f"{result['n_docs']} docs, {result['n_gold_mentions']} gold mentions: "
                 f"{result['n_gold_without_id']} without an id (NER only, with "
                 f"{result['n_pred_on_gold_without_id']} predictions on them), "
                 f"{result['n_gold_composite']} composite")
    return "\n".join(lines)


def _checked_texts(nlp: Language, gold_docs: Iterable[Doc], gold: object) -> Iterable[str]:
    """The gold documents' texts, each checked against nlp.max_length before nlp.pipe
    meets it (E470 names the document, where spaCy's E088 would not)."""
    source = gold if isinstance(gold, (str, Path)) else "gold docs"
    for i, doc in enumerate(gold_docs):
        check_max_length(nlp, doc.text, f"{source}: document {i} (PMID "
                                        f"{doc.user_data.get('pmid', '?')})")
        yield doc.text
