"""Several PubTator corpora as one, for trainers that read one training file: the mentions
of one of the six types, the held-out documents left out, and a PMID that two corpora
share (NCBI-disease and BC5CDR annotate some of the same abstracts, each its own way)
kept in both, the later copy under a PMID prefixed with 9s so that it reads as another
document.
"""
from dataclasses import dataclass
from typing import AbstractSet, Optional, Sequence

from ..io.files import atomic_file, open_text
from ..io.util import PathLike
from .pubtator import read_pubtator
from .types import six_type_label


@dataclass
class MergeStats:
    documents: int = 0
    mentions: int = 0
    held_out: int = 0
    renamed: int = 0


def merge_pubtator(output: PathLike, corpora: Sequence[PathLike], *,
                   mention_type: Optional[str] = None,
                   exclude_pmids: AbstractSet[str] = frozenset(),
                   pmids: Optional[AbstractSet[str]] = None) -> MergeStats:
    """Write `corpora`'s documents to `output` (atomically) in the order given; with
    `mention_type` (a six-type label, e.g. "Disease") only its mention lines are kept;
    with `pmids`, only those documents (a split of one corpus: the others count as held
    out, like `exclude_pmids`).
    Title, abstract and relation lines stay as they are. Each corpus goes through the
    PubTator reader first, so a file that is not PubTator is refused where it goes wrong
    (file:line) before anything is written, instead of copied as a document."""
    for corpus in corpora:
        for _ in read_pubtator(corpus):
            pass
    stats = MergeStats()
    seen = set()
    with atomic_file(output) as out:
        for corpus in corpora:
            with open_text(corpus, "Corpus to merge") as fileh:
                blocks = [block for block in fileh.read().split("\n\n") if block.strip()]
            for block in blocks:
                lines = block.strip("\n").split("\n")
                pmid = lines[0].split("|", 1)[0]
                if pmid in exclude_pmids or (pmids is not None and pmid not in pmids):
                    stats.held_out += 1
                    continue
                renamed = pmid
                while renamed in seen:
                    renamed = "9" + renamed
                stats.renamed += renamed != pmid
                seen.add(renamed)
                kept = []
                for line in lines:
                    fields = line.split("\t")
                    if len(fields) >= 5 and fields[1].isdigit():
                        if mention_type and six_type_label(fields[4]) != mention_type:
                            continue
                        stats.mentions += 1
                    kept.append(renamed + line[len(pmid):])
                out.write("\n".join(kept) + "\n\n")
                stats.documents += 1
    return stats
