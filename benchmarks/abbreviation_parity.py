#!/usr/bin/env python
"""Abbreviation definitions: our Schwartz & Hearst code against scispaCy's, on whole corpora.

The linker detects definitions with `spacy_biolink.text.schwartz_hearst` so that the core
install needs no scispaCy (0.6.2 pins numpy < 2). This script checks, on every document
of the given PubTator files (tokenized with `spacy.blank("en")`, as the corpus readers
do), that nothing changed:

1. candidates: our `definition_candidates` against scispaCy's `filter_matches` on the same
   bracketed ranges (token offsets of both spans compared);
2. long forms: our `find_long_form` against scispaCy's `find_abbreviation`, per candidate
   (token offsets compared);
3. definitions: `AbbreviationResolver._detect` (short form -> long form text) against
   what scispaCy's own `abbreviation_detector` pipe defines on the same doc;
4. the linker's resolved map, `AbbreviationResolver.long_forms` (the text it queries
   with), against the same with scispaCy's pipe run first.

Needs scispaCy (`pip install -e ".[scispacy]"`). Usage, from the repository root:

    python benchmarks/abbreviation_parity.py /work/shared/data/ncbi_disease/*corpus.txt* \
        /work/shared/data/bc5cdr/CDR_*.PubTator.txt.gz

Prints one line per file and the totals; exits 1 if anything differs.
"""
import argparse
import sys
import time
from pathlib import Path

import spacy
from scispacy.abbreviation import AbbreviationDetector, filter_matches, find_abbreviation
from spacy.tokens import Doc
from tqdm import tqdm

from spacy_biolink.corpora.pubtator import read_pubtator
from spacy_biolink.text.abbreviations import AbbreviationResolver
from spacy_biolink.text.schwartz_hearst import MAX_INSIDE, definition_candidates, find_long_form

COUNTS = ("docs", "candidates", "long_forms", "definitions", "candidate_diffs",
          "long_form_diffs", "definition_diffs", "resolved_diffs")


def insides(doc: Doc):
    """Bracketed token ranges, brackets excluded, in scispaCy's Matcher order."""
    opens = [t.i for t in doc if t.text == "("]
    closes = [t.i for t in doc if t.text == ")"]
    return sorted(((o + 1, c) for o in opens for c in closes if o + 1 < c <= o + 1 + MAX_INSIDE),
                  key=lambda match: (match[1], -match[0]))


def offsets(span):
    return None if span is None else (span.start, span.end)


def compare(path: Path, nlp, detector, resolver, examples: list) -> dict:
    counts = dict.fromkeys(COUNTS, 0)
    seconds = {"ours": 0.0, "scispacy": 0.0}
    for document in tqdm(list(read_pubtator(path)), desc=path.name, leave=False):
        doc = nlp.make_doc(document.text)
        counts["docs"] += 1
        ranges = insides(doc)
        ours = list(definition_candidates(doc, ranges))
        theirs = filter_matches([(0, s, e) for s, e in ranges], doc)
        counts["candidates"] += len(ours)
        if [(offsets(lf), offsets(sf)) for lf, sf in ours] != \
                [(offsets(lf), offsets(sf)) for lf, sf in theirs]:
            counts["candidate_diffs"] += 1
            examples.append(("candidates", document.pmid))
        for long_candidate, short in theirs:
            long = find_long_form(long_candidate, short)
            counts["long_forms"] += long is not None
            if offsets(long) != offsets(find_abbreviation(long_candidate, short)[1]):
                counts["long_form_diffs"] += 1
                examples.append(("long form", document.pmid, short.text))
        start = time.perf_counter()
        found = resolver._detect(doc)
        resolved = resolver.long_forms(doc)
        seconds["ours"] += time.perf_counter() - start
        start = time.perf_counter()
        piped = detector(nlp.make_doc(document.text))
        expected = {}
        for short in piped._.abbreviations:
            expected.setdefault(short.text, short._.long_form.text)
        expected_resolved = resolver.long_forms(piped)
        seconds["scispacy"] += time.perf_counter() - start
        counts["definitions"] += len(found)
        if found != expected:
            counts["definition_diffs"] += 1
            examples.append(("definitions", document.pmid, found, expected))
        if resolved != expected_resolved:
            counts["resolved_diffs"] += 1
            examples.append(("resolved", document.pmid, resolved, expected_resolved))
    return {**counts, "seconds": seconds}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="+", type=Path, help="PubTator files (.gz read too)")
    args = parser.parse_args(argv)
    nlp = spacy.blank("en")
    detector = AbbreviationDetector(nlp)
    resolver = AbbreviationResolver(nlp.vocab)
    totals = dict.fromkeys(COUNTS, 0)
    examples: list = []
    import warnings

    # scispaCy's global Matcher warns on every doc without a definition.
    warnings.filterwarnings("ignore", message=r"\[W036\]")
    for path in args.paths:
        result = compare(path, nlp, detector, resolver, examples)
        for key in COUNTS:
            totals[key] += result[key]
        print(f"{path.name}: " + ", ".join(f"{key} {result[key]}" for key in COUNTS)
              + f"; seconds ours {result['seconds']['ours']:.2f} "
              f"(detection + resolution), scispaCy pipe {result['seconds']['scispacy']:.2f}")
    print("TOTAL: " + ", ".join(f"{key} {totals[key]}" for key in COUNTS))
    for example in examples[:10]:
        print("  differs:", example)
    differs = any(totals[key] for key in COUNTS if key.endswith("_diffs"))
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main())
