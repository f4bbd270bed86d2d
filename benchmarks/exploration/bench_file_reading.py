"""Line reading speed: the dictionary readers' _lines (files.iter_lines: UTF-8 checked
with path:line errors, BOM, gzip by magic bytes, control characters rejected) and
read_medic, against the text-mode reader they replace (io.TextIOWrapper over gzip.open).

    PYTHONPATH=$PWD python benchmarks/exploration/bench_file_reading.py [--lines 2000000]

The file is MEDIC's lines repeated, written once plain and once gzipped.
"""
import argparse
import gzip
import io
import tempfile
import time
from pathlib import Path

from spacy_biolink.kb.readers import dictionaries

ASSET = Path(__file__).resolve().parents[2] / "assets" / "medic_06Jul2012.txt.gz"


def old_lines(path: Path):
    """util.open_text before files.py, with the readers' loop around it."""
    raw = gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")
    with io.TextIOWrapper(raw, encoding="utf8", newline="") as fileh:
        for line_no, line in enumerate(fileh, start=1):
            line = line.rstrip("\r\n")
            if line.strip():
                yield line_no, line


def timed(func, path) -> float:
    started = time.perf_counter()
    count = sum(1 for _ in func(path))
    elapsed = time.perf_counter() - started
    return elapsed, count


def old_read_medic(path: Path):
    """read_medic as it was: the old line loop, no control-character checks."""
    saved = dictionaries._lines, dictionaries._checked
    dictionaries._lines = old_lines
    dictionaries._checked = lambda path, line_no, fmt, line, concept: concept
    try:
        yield from dictionaries.read_medic(path)
    finally:
        dictionaries._lines, dictionaries._checked = saved


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=2_000_000)
    args = parser.parse_args()
    medic = gzip.decompress(ASSET.read_bytes()).splitlines(keepends=True)
    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / "dict.txt"
        with open(plain, "wb") as fileh:
            for i in range(args.lines):
                fileh.write(medic[i % len(medic)])
        gz = Path(tmp) / "dict.txt.gz"
        gz.write_bytes(gzip.compress(plain.read_bytes(), compresslevel=1))
        print(f"{args.lines} lines, {plain.stat().st_size / 1e6:.0f} MB plain")
        print("| file | lines: old text mode (s) | lines: _lines, checked (s) | ratio "
              "| read_medic: old (s) | read_medic: now (s) | ratio |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for name, path in (("plain", plain), ("gzip", gz)):
            old, n_old = timed(old_lines, path)
            new, n_new = timed(dictionaries._lines, path)
            assert n_old == n_new, (n_old, n_new)
            old_concepts, _ = timed(old_read_medic, path)
            concepts, _ = timed(dictionaries.read_medic, path)
            print(f"| {name} | {old:.2f} | {new:.2f} | {new / old:.2f} | {old_concepts:.2f} | "
                  f"{concepts:.2f} | {concepts / old_concepts:.2f} |")


if __name__ == "__main__":
    main()
