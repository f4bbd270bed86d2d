#!/usr/bin/env python
"""What id_preference changes in kb_id_: every gold mention of a PubTator corpus linked by
one saved pipeline twice, with id_preference = [] (each concept's primary id, as before
the option) and as configured. Counts the kb_id_ strings that change and how many equal
a gold id of their mention (acc@1 from `evaluate` counts any of a concept's ids, so it
cannot move).

    python benchmarks/exploration/id_preference.py MODEL CORPUS [--types Disease]
"""
import argparse
import sys
import warnings

import spacy

from spacy_biolink.corpora.pubtator import read_pubtator
from spacy_biolink.kb.ids import split_gold_ids


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("corpus")
    p.add_argument("--types", default=None, help="comma-separated mention types")
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    before = spacy.load(args.model, config={"components": {"bio_linker": {"id_preference": []}}})
    after = spacy.load(args.model)
    types = set(args.types.split(",")) if args.types else None
    n = changed = omim_to_mesh = gold_before = gold_after = 0
    for document in read_pubtator(args.corpus, types=types):
        docs = []
        for nlp in (before, after):
            doc = nlp.make_doc(document.text)
            spans = [doc.char_span(m.start, m.end, label=m.type, alignment_mode="expand")
                     for m in document.mentions]
            doc.ents = spacy.util.filter_spans([s for s in spans if s is not None])
            docs.append(nlp(doc))
        golds = {(m.start, m.end): set(split_gold_ids(m.raw_ids)) for m in document.mentions}
        for a, b in zip(docs[0].ents, docs[1].ents):
            n += 1
            gold = golds.get((a.start_char, a.end_char), set())
            gold_before += a.kb_id_ in gold
            gold_after += b.kb_id_ in gold
            if a.kb_id_ != b.kb_id_:
                changed += 1
                omim_to_mesh += a.kb_id_.startswith("OMIM:") and not b.kb_id_.startswith("OMIM:")
    print(f"mentions linked: {n}; kb_id_ changed: {changed} (OMIM -> MeSH: {omim_to_mesh}); "
          f"kb_id_ equal to a gold id: {gold_before} with primary ids, {gold_after} with "
          f"id_preference {list(after.get_pipe('bio_linker').id_preference)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
