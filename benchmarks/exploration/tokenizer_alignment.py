"""Gold mentions that do not fall on token boundaries, per corpus and type: spaCy's English
tokenizer beside spacy-biolink.BioTokenizer.v1 (issue 34, session 18).

A mention off token boundaries cannot be found by a token-level NER and is widened when
`convert` writes the DocBin. The tokenizer's rules were chosen on BC5CDR train + dev and
NCBI-disease train + dev (never test); --examples prints mentions still cut.

  python benchmarks/exploration/tokenizer_alignment.py --data-dir ../shared/data [--examples 40]
"""
import argparse
import collections
import json
from pathlib import Path

import spacy

from spacy_biolink.corpora.pubtator import read_pubtator

CORPORA = {"bc5cdr_train": "bc5cdr/CDR_TrainingSet.PubTator.txt.gz",
           "bc5cdr_dev": "bc5cdr/CDR_DevelopmentSet.PubTator.txt.gz",
           "ncbi_train": "ncbi_disease/NCBItrainset_corpus.txt.gz",
           "ncbi_dev": "ncbi_disease/NCBIdevelopset_corpus.txt"}


def misaligned(nlp, path: Path, ncbi: bool, examples: int):
    """{type: [cut, total]} and the token count of one corpus; prints `examples` cuts."""
    cut, total, tokens, shown = collections.Counter(), collections.Counter(), 0, 0
    for document in read_pubtator(path):
        doc = nlp.make_doc(document.text)
        tokens += len(doc)
        for mention in document.mentions:
            label = "Disease" if ncbi else mention.type
            total[label] += 1
            if doc.char_span(mention.start, mention.end) is None:
                cut[label] += 1
                if shown < examples:
                    shown += 1
                    print(f"  {mention.text!r} in "
                          f"{document.text[max(0, mention.start - 15):mention.end + 15]!r}")
    return {label: [cut[label], total[label]] for label in sorted(total)}, tokens


def main() -> None:
    """Print (and write) the counts for both tokenizers."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", default="../shared/data")
    parser.add_argument("--examples", type=int, default=0)
    parser.add_argument("--output")
    args = parser.parse_args()
    tokenizers = {"spacy": spacy.blank("en"),
                  "bio": spacy.blank("en", config={"nlp": {"tokenizer": {
                      "@tokenizers": "spacy-biolink.BioTokenizer.v1"}}})}
    out = {}
    for corpus, name in CORPORA.items():
        for tokenizer, nlp in tokenizers.items():
            counts, tokens = misaligned(nlp, Path(args.data_dir) / name, corpus.startswith("ncbi"),
                                        args.examples if tokenizer == "bio" else 0)
            out.setdefault(corpus, {})[tokenizer] = {"cut": counts, "tokens": tokens}
            print(f"{corpus:13s} {tokenizer:6s} tokens {tokens:7d} " + "  ".join(
                f"{label} {c}/{n} ({c / n:.2%})" for label, (c, n) in counts.items()))
    if args.output:
        Path(args.output).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
