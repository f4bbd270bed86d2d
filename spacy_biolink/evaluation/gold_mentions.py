"""Gold-mention linking accuracy (acc@k) of a pipeline on a PubTator corpus.

The protocol every encoder is judged with (SEEDS.md, "Shared evaluation protocol"):

- Every gold mention with an id is a query; duplicates are kept. Mentions are skipped,
  and counted, when they have no id (`-1`) or when none of their ids is in the dictionary,
  and, for a linker given `labels`, when their type is not one of those labels (in a
  pipeline the linker would not take them: another linker links them).
- Mentions go through the linker's own preprocessing (abbreviations, normalization)
  and stages, as in linking: type_filter (the mention's type as its label), the
  score threshold, the verifier (a rejected candidate is not an answer) and the
  reranker.
- A composite mention (`D1|D2`) is split as BioSyn does: when the linker splits
  composites and the text splits into one part per id, each part is a query and the
  mention is right at k only if every part is; otherwise it is kept whole.
- Two rules for which ids a part may match, both reported:
  strict: each part must match its own gold id, one part per id (in any order: the
  corpora do not always list the ids in text order); a composite kept whole cannot
  name all its concepts with one answer and counts as wrong;
  lenient (BioSyn's code): a part may match any gold id of the whole mention.
  `D1+D2` (one mention needing both) is right under both rules if it matches either.
- Top-level acc@k follow the lenient rule, as published figures do.
- acc@k counts distinct concepts: the k best concepts, not the k best names.
"""
import warnings
from collections import Counter, defaultdict
from itertools import permutations
from typing import Dict, Iterable, List, Optional, Sequence, Set

from spacy.language import Language
from spacy.util import minibatch
from ..io.progress import progress_bar

from ..linker.component import BioLinker
from ..linker.find import the_linker, the_linker_pipe
from ..corpora.pubtator import read_pubtator
from ..corpora.types import corpus_types_for, six_type_label
from ..errors import BioLinkError, Errors, Warnings
from ..corpora.types import gold_id_parts
from ..index.concepts import Candidates
from ..linker.policy import Mention
from ..io.util import PathLike
from ..text.docs import make_doc

RULES = ("strict", "lenient")


def find_linker(nlp: Language, path: PathLike = "<nlp>", name: Optional[str] = None, *,
                command: str = "evaluate") -> BioLinker:
    """The linker of `nlp` named `name`, or its only one (linker.find.the_linker): a
    BioLinkError naming the pipes when there is none, or naming the linkers when there are
    several and no `name` (`path` says which pipeline, `command` who asks, for the message)."""
    return the_linker(nlp, name, command=command, path=path)


class _Query:
    """One gold mention: its type, gold ids, where it is, and (once the composite rule has
    seen its text) the ids each linked part must match under the strict rule."""

    __slots__ = ("type", "id_parts", "strict_golds", "lenient_gold", "where")

    def __init__(self, mention_type: str, id_parts: List[List[str]], lenient_gold: Set[str],
                 where: Optional[Dict] = None):
        self.type = mention_type
        self.id_parts = id_parts
        self.strict_golds: List[Set[str]] = [lenient_gold]
        self.lenient_gold = lenient_gold
        self.where = where


def evaluate_gold_mentions(nlp: Language, corpus: PathLike, *, types: Optional[Set[str]] = None,
                           pmids: Optional[Set[str]] = None, ks: Sequence[int] = (1, 5),
                           batch_size: int = 64, progress: bool = False,
                           errors: Optional[List[Dict]] = None, linker: Optional[str] = None,
                           path: PathLike = "<nlp>") -> Dict:
    """acc@k of `nlp`'s bio_linker on the gold mentions of `corpus`.

    linker: the name of the linker to evaluate, needed when `nlp` has several (`path`
    names the pipeline in the error that says so).

    errors: a list that receives one record per mention wrong at acc@1 under the lenient
    rule (where it is, the texts linked, gold ids, and the three best concepts with a
    name of each), for a person to read.
    """
    ks = list(ks)
    if not ks or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in ks):
        raise BioLinkError(Errors.E481.format(option="ks", value=ks))
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise BioLinkError(Errors.E480.format(option="batch_size", what="an integer >= 1",
                                              value=batch_size))
    linker_name, linker = the_linker_pipe(nlp, linker, command="evaluate", path=path)
    if not linker.is_initialized:
        raise BioLinkError(Errors.E101)
    dictionary = linker.dictionary
    labels = set(linker.cfg.get("labels") or ())
    depth = max(max(ks), linker.cfg["k"])
    # Labels whose ids a stage builds itself (variants, stages/variants.py): their
    # mentions are evaluated whether or not the dictionary holds their ids.
    open_labels = {label for stage in linker.stages.values()
                   for label in getattr(stage, "open_labels", ())}
    skipped: Counter = Counter()
    composites: Counter = Counter()
    hits = {rule: Counter() for rule in RULES}
    by_type: Dict[str, Counter] = defaultdict(Counter)
    n_mentions = n_evaluated = 0
    overlaps: List[str] = []  # one entry per overlapping pair, the first few described
    n_overlaps = 0
    if types:
        # "--types Disease" also keeps BioRED's DiseaseOrPhenotypicFeature and NCBI-disease's
        # four disease types: one name per type whatever the corpus calls it.
        types = set(types) | corpus_types_for(types)
    docs = read_pubtator(corpus, types=types, pmids=pmids)
    for batch in minibatch(progress_bar(docs, desc="evaluate", unit="doc", disable=not progress), batch_size):
        queries: List[_Query] = []
        mentions: List[Mention] = []
        for pubtator_doc in batch:
            doc = make_doc(nlp, pubtator_doc.text, f"{corpus}: PMID {pubtator_doc.pmid}")
            n_overlaps += _overlapping_pairs(corpus, pubtator_doc, overlaps)
            for m in pubtator_doc.mentions:
                n_mentions += 1
                id_parts = gold_id_parts(m.raw_ids, m.type)
                all_ids = {i for part in id_parts for i in part}
                # A corpus's own type name (BioRED's ChemicalEntity) is the linker's label
                # (Chemical) it maps to.
                label = (six_type_label(m.type) or m.type) if labels and m.type not in labels \
                    else m.type
                if labels and label not in labels:
                    skipped["not_linker_label"] += 1
                elif not all_ids:
                    skipped["no_id"] += 1
                elif all(dictionary.concept_index(i) is None for i in all_ids) and not (
                        open_labels and {label, six_type_label(m.type)} & open_labels):
                    skipped["not_in_dictionary"] += 1
                else:
                    # The mention's type is the label type_filter keys on, as convert
                    # labels spans.
                    mentions.append(Mention(doc, m.start, m.end, m.text, label))
                    where = None
                    if errors is not None:
                        where = {"pmid": pubtator_doc.pmid, "line": m.line, "text": m.text,
                                 "start": m.start, "end": m.end, "gold": m.raw_ids}
                    queries.append(_Query(m.type, id_parts, all_ids, where))
        # The linker's own path (its stages included), with the protocol's composite rule.
        links = linker.link(mentions, depth,
                            parts=lambda i, text: _protocol_parts(linker, queries[i], text,
                                                                  composites))
        for query, mention_links in zip(queries, links):
            part_candidates = [candidates for _, candidates in mention_links]
            ranked = [_ranked_ids(linker, candidates) for candidates in part_candidates]
            n_evaluated += 1
            by_type[query.type]["n"] += 1
            strict = _strict_rank(ranked, query.strict_golds)
            lenient = _lenient_rank(ranked, query.lenient_gold)
            for rule, rank in (("strict", strict), ("lenient", lenient)):
                for k in ks:
                    if rank is not None and rank < k:
                        hits[rule][k] += 1
                        by_type[query.type][f"{rule} acc@{k}"] += 1
            if errors is not None and lenient != 0:
                errors.append(_error_record(linker, query, mention_links, lenient))

    if n_overlaps:
        warnings.warn(Warnings.W312.format(n=n_overlaps, path=corpus, example=overlaps[0]))

    def acc(count: int, n: int) -> float:
        return count / n if n else 0.0

    result = {f"acc@{k}": acc(hits["lenient"][k], n_evaluated) for k in ks}
    for rule in RULES:
        result[rule] = {f"acc@{k}": acc(hits[rule][k], n_evaluated) for k in ks}
    result.update({
        "n_mentions": n_mentions,
        "n_evaluated": n_evaluated,
        "n_skipped": sum(skipped.values()),
        "skipped": {"no_id": skipped["no_id"], "not_in_dictionary": skipped["not_in_dictionary"],
                    **({"not_linker_label": skipped["not_linker_label"]} if labels else {})},
        "composites": {"n": composites["n"], "split": composites["split"],
                       "kept_whole": composites["n"] - composites["split"]},
        "by_type": {t: {"n": c["n"], **{f"{rule} acc@{k}": acc(c[f"{rule} acc@{k}"], c["n"])
                                        for rule in RULES for k in ks}}
                    for t, c in sorted(by_type.items())},
        "corpus": str(corpus),
        "types": sorted(types) if types else None,
        "protocol": {
            "top_level": "lenient",
            "strict": "each composite part must match its own id, one part per id, in any "
                      "order; a composite kept whole is wrong",
            "lenient": "a part may match any gold id of its mention (BioSyn's code)",
            "composites": "split when the linker splits composites and the text gives "
                          "one part per id, else kept whole",
            "duplicates": "kept",
            "acc@k": "k best distinct concepts",
        },
        "linker": {"name": linker_name,
                   **{key: linker.cfg[key] for key in ("resolve_abbreviations",
                                                       "split_composites")}},
    })
    return result


def _overlapping_pairs(corpus: PathLike, document, examples: List[str]) -> int:
    """The number of pairs of `document`'s gold mentions that share characters; the first
    pair of the corpus is described in `examples` (file:line of each)."""
    mentions = sorted(document.mentions, key=lambda m: (m.start, m.end))
    n = 0
    for i, first in enumerate(mentions):
        for second in mentions[i + 1:]:
            if second.start >= first.end:
                break
            n += 1
            if not examples:
                examples.append(
                    f"{corpus}:{first.line} {first.text!r} at {first.start}-{first.end} and "
                    f"{corpus}:{second.line} {second.text!r} at {second.start}-{second.end} "
                    f"of document {document.pmid}")
    return n


def _protocol_parts(linker: BioLinker, query: _Query, text: str, composites: Counter
                    ) -> List[str]:
    """The texts the protocol links for a mention (its abbreviations resolved): a composite
    with one part per gold id is split (when the linker splits composites), anything
    else kept whole; sets the strict rule's golds to match."""
    if len(query.id_parts) > 1:
        composites["n"] += 1
        parts = linker.linker.composite_parts(text)
        if len(parts) == len(query.id_parts):
            composites["split"] += 1
            query.strict_golds = [set(p) for p in query.id_parts]
            return parts
        query.strict_golds = [set()]
    return [text]


def _error_record(linker: BioLinker, query: _Query, mention_links, rank: Optional[int]) -> Dict:
    dictionary = linker.dictionary
    parts = []
    for text, candidates in mention_links:
        top = [{"ids": [c] if isinstance(c, str) else list(dictionary.ids_of(c)),
                "concept_name": "" if isinstance(c, str) else (dictionary.names_of(c) or [""])[0],
                "score": round(float(score), 4)}
               for c, score in candidates[:3]]
        parts.append({"text": text, "query": linker.linker.query_key(text), "top": top})
    return {**(query.where or {}), "type": query.type, "lenient_rank": rank, "parts": parts}


def _ranked_ids(linker: BioLinker, candidates: Candidates) -> List[Set[str]]:
    threshold = linker.cfg["threshold"]
    # A string is an id a stage built itself (policy.reported_id).
    return [{c} if isinstance(c, str) else set(linker.dictionary.ids_of(c))
            for c, score in candidates if score >= threshold]


def _first_rank(ranked: List[Set[str]], gold: Set[str]) -> Optional[int]:
    return next((i for i, ids in enumerate(ranked) if ids & gold), None)


def _lenient_rank(ranked_parts: List[List[Set[str]]], gold: Set[str]) -> Optional[int]:
    """The rank (k-1) at which every part has hit some gold id, or None."""
    ranks = [_first_rank(ranked, gold) for ranked in ranked_parts]
    return None if None in ranks else max(ranks)


# Beyond this many parts, trying every pairing costs more than the order is worth.
MAX_PARTS_TO_PAIR = 6


def _strict_rank(ranked_parts: List[List[Set[str]]], golds: List[Set[str]]) -> Optional[int]:
    """The rank (k-1) at which the parts hit distinct gold parts, one each, or None."""
    ranks = [[_first_rank(ranked, gold) for gold in golds] for ranked in ranked_parts]
    n = len(golds)
    pairings = permutations(range(n)) if n <= MAX_PARTS_TO_PAIR else [range(n)]
    best = None
    for pairing in pairings:
        paired = [ranks[part][gold] for part, gold in enumerate(pairing)]
        if None not in paired and (best is None or max(paired) < best):
            best = max(paired)
    return best


def format_table(result: Dict, ks: Iterable[int] = (1, 5)) -> str:
    """The gold-mention result as a Markdown table: acc@k of each rule, overall and by mention
    type, then a line on the mentions skipped and why."""
    ks = list(ks)
    header = ["mentions", "n"] + [f"{rule} acc@{k}" for rule in RULES for k in ks]
    rows = [["all", str(result["n_evaluated"])]
            + [f"{result[rule][f'acc@{k}']:.4f}" for rule in RULES for k in ks]]
    for mention_type, scores in result["by_type"].items():
        rows.append([mention_type, str(scores["n"])]
                    + [f"{scores[f'{rule} acc@{k}']:.4f}" for rule in RULES for k in ks])
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |" for r in rows]
    skipped = result["skipped"]
    composites = result["composites"]
    lines.append(f"skipped {result['n_skipped']} of {result['n_mentions']} mentions: "
                 f"{skipped['no_id']} without an id, {skipped['not_in_dictionary']} with no id "
                 f"in the dictionary"
                 + (f", {skipped['not_linker_label']} of a type not in the linker's labels"
                    if "not_linker_label" in skipped else "")
                 + f"; composites: {composites['split']} of {composites['n']} "
                 f"split into one part per id, {composites['kept_whole']} kept whole")
    return "\n".join(lines)
