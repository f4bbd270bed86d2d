"""Tokens of BC5CDR dev, as the NER config's tokenizer splits them, that find no row in a
`ner-vectors` directory, overall and inside gold Disease / Chemical mentions (issue 34,
session 19): vectors counted under spaCy's English tokenizer beside vectors counted with
`ner-vectors --config configs/ner_bc5cdr.cfg`.

  python benchmarks/exploration/ner_vectors_coverage.py ../shared/data/bc5cdr/CDR_DevelopmentSet.PubTator.txt.gz \
      --vectors default=VEC_DEFAULT --vectors config=VEC_CONFIG [--config configs/ner_bc5cdr.cfg]
"""
import argparse
from pathlib import Path

import spacy

from spacy_biolink.corpora.docbin import tokenizer_nlp_from_config
from spacy_biolink.corpora.pubtator import read_pubtator


def missing_rows(corpus: Path, config: Path, vectors: dict) -> dict:
    """{name: {group: (tokens, tokens without a row)}} over the corpus's non-punctuation
    tokens; groups: all, and each mention type (tokens inside a gold span)."""
    nlp = tokenizer_nlp_from_config(config)
    counts = {name: {} for name in vectors}
    for document in read_pubtator(corpus):
        doc = nlp.make_doc(document.text)
        types = {}
        for mention in document.mentions:
            span = doc.char_span(mention.start, mention.end, alignment_mode="contract")
            for token in span if span is not None else ():
                types[token.i] = mention.type
        for token in doc:
            if token.is_space or token.is_punct:
                continue
            key = nlp.vocab.strings.add(token.lower_)
            for name, table in vectors.items():
                for group in ("all", types.get(token.i)):
                    if group is not None:
                        seen, missed = counts[name].get(group, (0, 0))
                        counts[name][group] = (seen + 1, missed + (key not in table))
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="PubTator corpus (BC5CDR dev)")
    parser.add_argument("--vectors", action="append", required=True,
                        help="NAME=DIR, a ner-vectors output (repeatable)")
    parser.add_argument("--config", type=Path, default=Path("configs/ner_bc5cdr.cfg"),
                        help="The NER config whose tokenizer splits the text")
    args = parser.parse_args()
    vectors = {}
    for item in args.vectors:
        name, _, path = item.partition("=")
        vectors[name] = spacy.load(path).vocab.vectors
    for name, groups in missing_rows(args.corpus, args.config, vectors).items():
        cells = [f"{group} {missed}/{seen} ({missed / seen:.2%})"
                 for group, (seen, missed) in sorted(groups.items())]
        print(f"{name}: no row for " + ", ".join(cells))


if __name__ == "__main__":
    main()
