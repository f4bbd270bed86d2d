"""What `link`'s output records cost: each id's canonical name read alone
(ConceptLookup.canonical_name, since session 23) against building the id's whole concept
record (every alias) to take its name, as before. The same linked Docs, the two ways
interleaved, best of --repeats; the records are checked to be equal.

    python benchmarks/exploration/record_names.py PIPELINE CORPUS.PubTator[.gz] [--repeats 5]

Prints the pipeline's own time over the same Docs (one nlp.pipe pass) for scale.
"""
import argparse
from collections.abc import Mapping
import time

import spacy

from spacy_biolink.corpora.pubtator import read_pubtator
from spacy_biolink.runners.local import LinkedRecords


class WholeRecordLookup(Mapping):
    """A linker's lookup seen as any scispaCy-shaped mapping: a name is read through the
    concept's whole record, the path every id took before ConceptLookup.canonical_name."""

    def __init__(self, kb):
        self.kb = kb

    def __getitem__(self, concept_id):
        return self.kb[concept_id]

    def __contains__(self, concept_id):
        return concept_id in self.kb

    def __iter__(self):
        return iter(self.kb)

    def __len__(self):
        return len(self.kb)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("pipeline")
    p.add_argument("corpus")
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    nlp = spacy.load(args.pipeline)
    texts = [d.text for d in read_pubtator(args.corpus)]
    start = time.perf_counter()
    docs = list(nlp.pipe(texts, batch_size=64))
    pipe_s = time.perf_counter() - start
    name_only = LinkedRecords(nlp)
    whole = LinkedRecords(nlp)
    whole.kbs = {name: WholeRecordLookup(kb) if kb else kb for name, kb in whole.kbs.items()}
    best = {"name alone": float("inf"), "whole record": float("inf")}
    for _ in range(args.repeats):
        for label, records in (("name alone", name_only), ("whole record", whole)):
            start = time.perf_counter()
            built = [records.record(doc) for doc in docs]
            best[label] = min(best[label], time.perf_counter() - start)
            if label == "name alone":
                reference = built
            else:
                assert built == reference, "the two ways gave different records"
    n_entities = sum(len(r["entities"]) for r in reference)
    print(f"{len(docs)} docs, {n_entities} entities; nlp.pipe pass {pipe_s:.2f} s")
    for label, seconds in best.items():
        print(f"records, {label}: {seconds:.2f} s (best of {args.repeats})")
    print(f"whole record / name alone: {best['whole record'] / best['name alone']:.1f}x")


if __name__ == "__main__":
    main()
