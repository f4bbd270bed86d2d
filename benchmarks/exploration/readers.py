#!/usr/bin/env python
"""Read time and peak memory of the UMLS and OBO dictionary readers on generated files.

Generates (once, into --workdir) a UMLS META directory whose MRCONSO.RRF holds --strings
English strings (~3 per concept, UMLS's ratio) plus MRSTY.RRF (1-2 types per concept)
and MRDEF.RRF (a definition for a third of the concepts), and an OBO file of --terms
terms (2-4 synonyms, 3 xrefs each, 2% obsolete). Each measurement runs in a fresh
process, so its peak RSS (ru_maxrss) is that reader's alone:

  umls             load_dictionary(META, "umls"): MRCONSO + MRSTY + MRDEF
  umls-conso-only  the same MRCONSO alone: the difference is what the joins cost
  umls-stream      read_umls's concepts only, no dictionary built: the reader's own memory
  obo              load_dictionary(file, "obo")
  obo-fastobo / obo-pronto / obo-obonet   the bare parsers on the same file

    python benchmarks/exploration/readers.py --workdir /tmp/readers --strings 1000000 3000000 \
        --terms 100000 [--parsers] [--output readers.json]
    python benchmarks/exploration/readers.py --workdir /tmp/readers --strings 10000000 \
        --umls-kinds umls-stream --terms 0
"""
import argparse
import json
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

WORDS = ("cardiac renal hepatic neural acute chronic familial juvenile syndrome disease "
         "deficiency carcinoma dystrophy type insulin resistance lesion fever anemia "
         "infection disorder congenital primary secondary idiopathic benign malignant").split()
TUIS = ["T047", "T191", "T033", "T121", "T109", "T037", "T046", "T184", "T023", "T061"]


def _name(rng: random.Random, i: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 5))) + f" {i}"


def write_meta(directory: Path, n_strings: int, seed: int = 0) -> Path:
    rng = random.Random(seed)
    directory.mkdir(parents=True, exist_ok=True)
    n = 0
    cui_no = 0
    with open(directory / "MRCONSO.RRF", "w", encoding="utf8") as conso, \
            open(directory / "MRSTY.RRF", "w", encoding="utf8") as sty, \
            open(directory / "MRDEF.RRF", "w", encoding="utf8") as mrdef:
        while n < n_strings:
            cui_no += 1
            cui = f"C{cui_no:07d}"
            for j in range(min(rng.randint(1, 5), n_strings - n)):
                n += 1
                pref = "P|L|PF" if j == 0 else "S|L|VO"
                ts, lui_kind, stt = pref.split("|")
                sab = rng.choice(["MSH", "SNOMEDCT_US", "NCI", "MDR", "ICD10CM"])
                suppress = "N" if rng.random() > 0.03 else "O"
                conso.write(f"{cui}|ENG|{ts}|L{n:07d}|{stt}|S{n:07d}|{'Y' if j == 0 else 'N'}|"
                            f"A{n:08d}|||D{cui_no:06d}|{sab}|PT|D{cui_no:06d}|{_name(rng, n)}|0|"
                            f"{suppress}|256|\n")
            for tui in sorted(rng.sample(TUIS, rng.randint(1, 2))):
                sty.write(f"{cui}|{tui}|A1.2.3|Some Type|AT{cui_no:08d}|256|\n")
            if rng.random() < 0.33:
                mrdef.write(f"{cui}|A{n:08d}|AT{cui_no:08d}||MSH|A definition of concept "
                            f"{cui_no}, a {_name(rng, cui_no)}.|N|256|\n")
    return directory


def write_obo(path: Path, n_terms: int, seed: int = 0) -> Path:
    rng = random.Random(seed)
    with open(path, "w", encoding="utf8") as f:
        f.write("format-version: 1.2\ndata-version: bench/2024\nontology: mondo\n\n")
        for i in range(1, n_terms + 1):
            name = _name(rng, i)
            f.write(f"[Term]\nid: MONDO:{i:07d}\nname: {name}\n")
            f.write(f'def: "A disease number {i}." [PMID:1]\n')
            for s in range(rng.randint(2, 4)):
                scope = rng.choice(["EXACT", "EXACT", "RELATED", "NARROW"])
                f.write(f'synonym: "{name} syn{s}" {scope} []\n')
            f.write(f"xref: MESH:D{i:06d}\nxref: OMIM:{100000 + i}\nxref: UMLS:C{i:07d}\n")
            if i > 1:
                f.write(f"is_a: MONDO:{rng.randint(1, i - 1):07d} ! parent\n")
            if i % 50 == 0:
                f.write("is_obsolete: true\n")
            f.write("\n")
    return path


CHILD = r"""
import json, resource, sys, time
kind, path = sys.argv[1], sys.argv[2]
import spacy_biolink.kb.readers.dictionaries  # imports are not the reader's cost
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
out = {}
if kind in ("umls", "obo"):
    from spacy_biolink.kb.readers import load_dictionary
    d = load_dictionary(path, kind)
    out = {"concepts": d.n_concepts, "names": d.n_names}
elif kind == "umls-conso-only":
    from spacy_biolink.kb.readers import load_dictionary
    d = load_dictionary(path + "/MRCONSO.RRF", "umls")
    out = {"concepts": d.n_concepts, "names": d.n_names}
elif kind == "umls-stream":
    from spacy_biolink.kb.readers.umls import read_umls
    n = names = 0
    for c in read_umls(path):
        n += 1; names += len(c.names)
    out = {"concepts": n, "names": names}
elif kind == "obo-fastobo":
    import fastobo
    out = {"frames": sum(1 for _ in fastobo.iter(path))}
elif kind == "obo-pronto":
    import pronto
    out = {"terms": len(pronto.Ontology(path).terms())}
elif kind == "obo-obonet":
    import obonet
    out = {"nodes": len(obonet.read_obo(path))}
out.update(seconds=round(time.perf_counter() - t, 1),
           peak_rss_mb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
           rss_before_mb=round(base / 1024))
print(json.dumps(out))
"""


def measure(kind: str, path: Path) -> dict:
    result = subprocess.run([sys.executable, "-c", CHILD, kind, str(path)], capture_output=True,
                            text=True)
    if result.returncode != 0:
        raise SystemExit(result.stderr[-2000:])
    return json.loads(result.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workdir", type=Path, required=True)
    p.add_argument("--strings", type=int, nargs="*", default=[1_000_000])
    p.add_argument("--terms", type=int, default=100_000)
    p.add_argument("--parsers", action="store_true", help="also time fastobo, pronto, obonet")
    p.add_argument("--umls-kinds", nargs="*", default=["umls", "umls-conso-only", "umls-stream"])
    p.add_argument("--output", type=Path)
    args = p.parse_args(argv)
    rows = []
    for n in args.strings:
        meta = args.workdir / f"META-{n}"
        if not (meta / "MRDEF.RRF").is_file():
            started = time.perf_counter()
            write_meta(meta, n)
            print(f"generated {meta} ({time.perf_counter() - started:.0f}s)", flush=True)
        size = round((meta / "MRCONSO.RRF").stat().st_size / 2**20)
        for kind in args.umls_kinds:
            row = {"reader": kind, "strings": n, "mrconso_mb": size, **measure(kind, meta)}
            print(json.dumps(row), flush=True)
            rows.append(row)
    if args.terms:
        obo = args.workdir / f"terms-{args.terms}.obo"
        if not obo.is_file():
            write_obo(obo, args.terms)
        size = round(obo.stat().st_size / 2**20)
        kinds = ["obo"] + (["obo-fastobo", "obo-pronto", "obo-obonet"] if args.parsers else [])
        for kind in kinds:
            row = {"reader": kind, "terms": args.terms, "file_mb": size, **measure(kind, obo)}
            print(json.dumps(row), flush=True)
            rows.append(row)
    if args.output is not None:
        args.output.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
