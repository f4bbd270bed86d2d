"""The two MeSH readers on the whole of MeSH 2024: same concepts, and their time.

NLM's ASCII files (d2024.bin, c2024.bin) are not in ../shared/data, so this writes the
shipped TSV export (mesh2024/*.tsv.gz) in NLM's ASCII layout: one *NEWRECORD per
descriptor (MH, ENTRY with a `|`-subfield tail as NLM writes it, MN, UI) and per
supplementary record (NM, SY, HM naming the descriptor by its heading with a `*`, UI).
Then both readers load the full vocabulary (--branches as a filter) and the script says
whether they give the same ids, names and types, with each one's seconds (one process,
one after the other; noisy on a shared machine).

    python benchmarks/exploration/mesh_ascii_roundtrip.py --mesh ../shared/data/mesh2024 \
        --workdir /tmp/mesh_ascii --branches D
"""
import argparse
import gzip
import json
import time
import warnings
from pathlib import Path

from spacy_biolink import load_dictionary


def write_ascii(mesh: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    headings = {}
    desc = next(mesh.glob("*descriptors*"))
    supp = next(mesh.glob("*supplementary*"))
    with gzip.open(desc, "rt", encoding="utf8") as src, \
            open(out / "d2024.bin", "w", encoding="utf8") as dst:
        for line in src:
            ui, name, entries, trees = line.rstrip("\n").split("\t")[:4]
            headings[ui] = name
            dst.write(f"*NEWRECORD\nRECTYPE = D\nMH = {name}\n")
            for entry in filter(None, entries.split("|")):
                dst.write(f"ENTRY = {entry}|T109|NON|EQV|NLM (2024)|230101|abbcdef\n")
            for tree in filter(None, trees.split("|")):
                dst.write(f"MN = {tree}\n")
            dst.write(f"UI = {ui}\n\n")
    import csv

    with gzip.open(supp, "rt", encoding="utf8") as src, \
            gzip.open(out / "c2024.bin.gz", "wt", encoding="utf8") as dst:
        for line in src:
            cols = line.rstrip("\n").split("\t")
            if any(col.startswith('"') for col in cols[1:]):
                cols = next(csv.reader([line.rstrip("\n")], delimiter="\t", quotechar='"'))
            ui, name, synonyms, mapped = cols[:4]
            dst.write(f"*NEWRECORD\nRECTYPE = C\nNM = {name}\n")
            for part in synonyms.split("|"):
                for synonym in filter(None, (s.strip() for s in part.split("\t"))):
                    dst.write(f"SY = {synonym}|NRW|NLM (2024)|230101|abbcdef\n")
            for target in filter(None, mapped.replace(",", "|").split("|")):
                dst.write(f"HM = *{headings[target.lstrip('*')]}\n")
            dst.write(f"UI = {ui}\n\n")


def as_dict(dictionary):
    return {dictionary.primary_id(c): (sorted(dictionary.names_of(c)),
                                       sorted((dictionary.types[c] or "").split("|")))
            for c in range(dictionary.n_concepts)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mesh", type=Path, required=True)
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--branches", default=None, help="e.g. D or C,F03 (default all)")
    args = parser.parse_args()
    write_ascii(args.mesh, args.workdir)
    branches = args.branches.split(",") if args.branches else None
    result, loaded = {}, {}
    for fmt, path in (("mesh-tsv", args.mesh), ("mesh-ascii", args.workdir)):
        started = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            dictionary = load_dictionary(path, fmt, mesh_branches=branches)
        result[fmt] = {"seconds": round(time.perf_counter() - started, 1),
                       "concepts": dictionary.n_concepts, "names": dictionary.n_names,
                       "warnings": [str(w.message)[:200] for w in caught]}
        loaded[fmt] = as_dict(dictionary)
    result["same_concepts"] = loaded["mesh-tsv"] == loaded["mesh-ascii"]
    if not result["same_concepts"]:
        differ = [ui for ui in loaded["mesh-tsv"]
                  if loaded["mesh-tsv"][ui] != loaded["mesh-ascii"].get(ui)]
        result["differ"] = {"n": len(differ), "first": differ[:5]}
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
