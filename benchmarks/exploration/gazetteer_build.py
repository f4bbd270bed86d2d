"""bio_gazetteer over MEDIC (Disease) and MeSH 2024 D + supplementary records (Chemical):
read and build time, peak memory, saved size and load time, tagging speed beside
tokenizing, and the dictionary alone as an NER on a gold DocBin (exact span and type; a
name of two types counts as both).

  python benchmarks/exploration/gazetteer_build.py --data-dir ../shared/data \
      --gold corpus/dev/bc5cdr.spacy --out /tmp/gaz_only
"""
import argparse
import json
import resource
import time
from pathlib import Path

import spacy
from spacy.tokens import DocBin

from spacy_biolink.ner.gazetteer import GAZETTEER_NAME, TYPE_SEPARATOR, gazetteer_terms


def peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def main() -> None:
    """Build, save, load, time and score the gazetteer; print the figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", default="../shared/data")
    parser.add_argument("--gold", required=True, help="DocBin converted with the NER's tokenizer")
    parser.add_argument("--out", required=True, help="Where to save the gazetteer-only pipeline")
    args = parser.parse_args()
    data = Path(args.data_dir)
    out = {}
    nlp = spacy.blank("en", config={"nlp": {"tokenizer": {
        "@tokenizers": "spacy-biolink.BioTokenizer.v1"}}})
    out["peak_gb_before"] = peak_gb()
    started = time.time()
    terms = gazetteer_terms({
        "Disease": {"path": str(data / "medic" / "medic_06Jul2012.txt.gz"), "format": "medic"},
        "Chemical": {"path": str(data / "mesh2024"), "format": "mesh-tsv", "mesh_branches": ["D"]}})
    out["read_s"] = time.time() - started
    out["names"] = {label: len(names) for label, names in terms.items()}
    gazetteer = nlp.add_pipe(GAZETTEER_NAME)
    started = time.time()
    gazetteer.initialize(nlp=nlp, terms=terms)
    out["build_s"] = time.time() - started
    del terms
    out["terms"] = len(gazetteer)
    out["peak_gb_after_build"] = peak_gb()
    started = time.time()
    nlp.to_disk(args.out)
    out["save_s"] = time.time() - started
    out["saved_mb"] = (Path(args.out) / GAZETTEER_NAME / "terms.tsv.gz").stat().st_size / 1e6
    started = time.time()
    spacy.load(args.out)
    out["load_s"] = time.time() - started
    gold = list(DocBin().from_disk(args.gold).get_docs(nlp.vocab))
    texts = [doc.text for doc in gold]
    for _ in range(3):  # the last of three passes, after warm-up
        started = time.time()
        made = [nlp.make_doc(text) for text in texts]
        tokenize = time.time() - started
        started = time.time()
        tagged = [gazetteer(doc) for doc in made]
        tag = time.time() - started
    out["docs"] = len(texts)
    out["tokenize_docs_per_s"] = len(texts) / tokenize
    out["tag_docs_per_s"] = len(texts) / tag
    tp = fp = fn = 0
    for ref, doc in zip(gold, tagged):
        want = {(e.start_char, e.end_char, e.label_) for e in ref.ents}
        got = {(doc[s].idx, doc[e - 1].idx + len(doc[e - 1]), one)
               for s, e, label in gazetteer.matches(doc) for one in label.split(TYPE_SEPARATOR)}
        tp, fp, fn = tp + len(want & got), fp + len(got - want), fn + len(want - got)
    out["dictionary_as_ner"] = {"p": tp / (tp + fp), "r": tp / (tp + fn),
                                "f": 2 * tp / (2 * tp + fp + fn)}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
