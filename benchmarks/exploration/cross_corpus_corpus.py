#!/usr/bin/env python
"""One PubTator file of several corpora's documents, for training a name encoder across
corpora (issue 58): the mentions of one type (the six PubTator types), the held-out
documents left out, and a PMID that two corpora share (NCBI-disease and BC5CDR hold the
same abstracts, annotated each its own way) kept in both, the second copy renamed so the
reader takes it as another document.

    python benchmarks/exploration/cross_corpus_corpus.py Disease /tmp/xc/train_disease.txt \
        --exclude-pmids corpus/pubmed/held_out_pmids.txt \
        NCBI/NCBItrainset_corpus.txt.gz B/CDR_TrainingSet.PubTator.txt.gz \
        D/biored/Train.PubTator.gz D/pubtator6/tmVar3_Train.PubTator.gz
    python benchmarks/exploration/cross_corpus_corpus.py Disease /tmp/xc/dev_disease.txt \
        NCBI/NCBIdevelopset_corpus.txt B/CDR_DevelopmentSet.PubTator.txt.gz D/biored/Dev.PubTator.gz
    sb train configs/fast_encoder.cfg --output /tmp/xc/fast --paths.dictionary MEDIC \
        --paths.train /tmp/xc/train_disease.txt --paths.dev /tmp/xc/dev_disease.txt \
        --training.max_minutes 25
    sb init-linker L --dictionary MEDIC --encoder /tmp/xc/fast/hybrid \
        --augment /tmp/xc/train_disease.txt --components.bio_linker.encoder.dense_weight 1.0 \
        --components.bio_linker.encoder.sparse_weight 0.5
    sb evaluate L DEV --types Disease   # each dev set apart
"""
import argparse

from spacy_biolink.corpora.bioc import read_pmid_file
from spacy_biolink.corpora.types import six_type_label
from spacy_biolink.io.util import open_text


def main() -> None:
    """Write the merged corpus and print how many documents and mentions it holds."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("type", help="one of the six types, e.g. Disease or Chemical")
    parser.add_argument("output")
    parser.add_argument("corpora", nargs="+")
    parser.add_argument("--exclude-pmids", default=None)
    args = parser.parse_args()
    held_out = read_pmid_file(args.exclude_pmids) if args.exclude_pmids else set()
    seen, documents, mentions = set(), 0, 0
    with open(args.output, "w", encoding="utf8") as out:
        for corpus in args.corpora:
            with open_text(corpus) as fileh:
                blocks = [b for b in fileh.read().split("\n\n") if b.strip()]
            for block in blocks:
                lines = block.strip("\n").split("\n")
                pmid = lines[0].split("|", 1)[0]
                if pmid in held_out:
                    continue
                renamed = pmid
                while renamed in seen:
                    renamed = "9" + renamed
                seen.add(renamed)
                kept = []
                for line in lines:
                    fields = line.split("\t")
                    if len(fields) >= 5 and fields[1].isdigit():
                        if six_type_label(fields[4]) != args.type:
                            continue
                        mentions += 1
                    kept.append(renamed + line[len(pmid):])
                out.write("\n".join(kept) + "\n\n")
                documents += 1
    print(f"{args.output}: {documents} documents, {mentions} {args.type} mentions")


if __name__ == "__main__":
    main()
