"""Issue 34, exploration: BC5CDR end to end on raw text with a trained NER, two linkers
(diseases `--dis`, chemicals `--chem`, each built by init-linker with
--components.bio_linker.labels), and optionally a span_ruler of high-precision training
terms after the NER (`--patterns`, from `python -m spacy_biolink ner-patterns`) and a last pipe dropping
entities no linker linked (`--drop-nil`). Prints NER P/R/F over both types (labels must
match) and NER / linking P/R/F per type, and docs/s of one nlp.pipe pass.

  python benchmarks/exploration/bc5cdr_ner_evidence.py NER_DIR GOLD.spacy \
      --dis DISEASE_LINKER --chem CHEMICAL_LINKER [--patterns P.jsonl] [--drop-nil]
"""
import sys, json, time, argparse
import spacy
from spacy.language import Language
from spacy.tokens import Span
import spacy_biolink
from spacy_biolink.linker.pipeline import load_linker_pipeline
from spacy_biolink.evaluation.end_to_end import evaluate_end_to_end

@Language.component("drop_nil_x")
def drop_nil(doc):
    doc.ents = [e for e in doc.ents if e.kb_id_ not in ("NIL", "")]
    return doc

ap = argparse.ArgumentParser()
ap.add_argument("ner"); ap.add_argument("gold")
ap.add_argument("--dis", required=True); ap.add_argument("--chem", required=True)
ap.add_argument("--patterns"); ap.add_argument("--drop-nil", action="store_true")
ap.add_argument("--types", default="Disease,Chemical"); ap.add_argument("--out")
a = ap.parse_args()
nlp = load_linker_pipeline(a.ner)
if a.patterns:
    r = nlp.add_pipe("span_ruler", config={"spans_key": None, "annotate_ents": True, "overwrite": False, "phrase_matcher_attr": "LOWER"})
    r.add_patterns([json.loads(l) for l in open(a.patterns)])
d = load_linker_pipeline(a.dis); nlp.add_pipe("bio_linker", name="bio_linker", source=d)
c = load_linker_pipeline(a.chem); nlp.add_pipe("bio_linker", name="chemical_linker", source=c)
if a.drop_nil: nlp.add_pipe("drop_nil_x")
from spacy.tokens import DocBin
texts = [d.text for d in DocBin().from_disk(a.gold).get_docs(nlp.vocab)]
list(nlp.pipe(texts[:5]))
t = time.time()
cached = list(nlp.pipe(texts, batch_size=64))
el = time.time() - t
cache = {d.text: d for d in cached}
nlp.pipe = lambda texts, **kw: (cache[x] for x in texts)
allr = evaluate_end_to_end(nlp, a.gold, match_labels=True)
out = {"all_ner": allr["ner"], "docs_per_s": allr["n_docs"] / el}
print(f"ALL  NER P {allr['ner']['p']:.4f} R {allr['ner']['r']:.4f} F {allr['ner']['f']:.4f} | link F {allr['linking']['f']:.4f} | {allr['n_docs']/el:.1f} docs/s ")
for ty in a.types.split(","):
    r = evaluate_end_to_end(nlp, a.gold, match_labels=True, types={ty})
    out[ty] = r
    print(f"{ty:9s} NER P {r['ner']['p']:.4f} R {r['ner']['r']:.4f} F {r['ner']['f']:.4f} | link P {r['linking']['p']:.4f} R {r['linking']['r']:.4f} F {r['linking']['f']:.4f}")

if a.out:
    json.dump(out, open(a.out, "w"), indent=1)
