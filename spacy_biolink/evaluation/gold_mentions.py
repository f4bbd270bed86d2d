"""Gold-mention linking accuracy (acc@k) of a pipeline on a PubTator corpus.

Every gold mention with an id is one query (until composite splitting: a mention with
several ids, `|` or `+`, is one query that is right when the predicted concept shares any
id with them). Mentions are skipped, and counted, when they have no id (`-1`) or when
none of their ids is in the linker's dictionary.
"""
from collections import Counter, defaultdict
from typing import Dict, Iterable, List, Optional, Sequence, Set

from spacy.language import Language
from spacy.util import minibatch
from tqdm import tqdm

from ..component import BioLinker, Mention
from ..errors import BioLinkError, Errors
from ..corpora.pubtator import read_pubtator
from ..util import PathLike


def find_linker(nlp: Language, path: PathLike = "<nlp>") -> BioLinker:
    for _, pipe in nlp.pipeline:
        if isinstance(pipe, BioLinker):
            return pipe
    raise BioLinkError(Errors.E402.format(path=path, pipes=", ".join(nlp.pipe_names) or "none"))


def evaluate_gold_mentions(nlp: Language, corpus: PathLike, *, types: Optional[Set[str]] = None,
                           pmids: Optional[Set[str]] = None, ks: Sequence[int] = (1, 5),
                           batch_size: int = 64, progress: bool = False) -> Dict:
    linker = find_linker(nlp)
    if not linker.is_initialized:
        raise BioLinkError(Errors.E101)
    dictionary = linker.dictionary
    depth = max(max(ks), linker.cfg["k"])
    threshold = linker.cfg["threshold"]
    skipped: Counter = Counter()
    hits = {k: 0 for k in ks}
    by_type: Dict[str, Counter] = defaultdict(Counter)
    n_mentions = n_evaluated = 0
    docs = read_pubtator(corpus, types=types, pmids=pmids)
    for batch in minibatch(tqdm(docs, desc="evaluate", unit="doc", disable=not progress), batch_size):
        mentions: List[Mention] = []
        golds: List[Set[str]] = []
        mention_types: List[str] = []
        for pubtator_doc in batch:
            doc = nlp.make_doc(pubtator_doc.text)
            for m in pubtator_doc.mentions:
                n_mentions += 1
                ids = set(m.ids)
                if not ids:
                    skipped["no_id"] += 1
                    continue
                if all(dictionary.concept_index(i) is None for i in ids):
                    skipped["not_in_dictionary"] += 1
                    continue
                mentions.append(Mention(doc, m.start, m.end, m.text.strip()))
                golds.append(ids)
                mention_types.append(m.type)
        for candidates, gold, mention_type in zip(linker.predict_mentions(mentions, k=depth),
                                                  golds, mention_types):
            ranked = [c for c, score in candidates if score >= threshold]
            rank = next((i for i, c in enumerate(ranked) if gold & set(dictionary.ids_of(c))), None)
            n_evaluated += 1
            by_type[mention_type]["n"] += 1
            for k in ks:
                if rank is not None and rank < k:
                    hits[k] += 1
                    by_type[mention_type][f"acc@{k}"] += 1
    result = {f"acc@{k}": hits[k] / n_evaluated if n_evaluated else 0.0 for k in ks}
    result.update({
        "n_mentions": n_mentions,
        "n_evaluated": n_evaluated,
        "n_skipped": sum(skipped.values()),
        "skipped": {"no_id": skipped["no_id"], "not_in_dictionary": skipped["not_in_dictionary"]},
        "by_type": {t: {"n": c["n"], **{f"acc@{k}": c[f"acc@{k}"] / c["n"] for k in ks}}
                    for t, c in sorted(by_type.items())},
        "corpus": str(corpus),
        "types": sorted(types) if types else None,
        "composite_rule": "one query per mention; right if any gold id matches",
    })
    return result


def format_table(result: Dict, ks: Iterable[int] = (1, 5)) -> str:
    ks = list(ks)
    header = ["mentions", "n"] + [f"acc@{k}" for k in ks]
    rows = [["all", str(result["n_evaluated"])] + [f"{result[f'acc@{k}']:.4f}" for k in ks]]
    for mention_type, scores in result["by_type"].items():
        rows.append([mention_type, str(scores["n"])] + [f"{scores[f'acc@{k}']:.4f}" for k in ks])
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |" for r in rows]
    skipped = result["skipped"]
    lines.append(f"skipped {result['n_skipped']} of {result['n_mentions']} mentions: "
                 f"{skipped['no_id']} without an id, {skipped['not_in_dictionary']} with no id "
                 f"in the dictionary")
    return "\n".join(lines)
