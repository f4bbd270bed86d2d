#!/usr/bin/env python
"""Write a synthetic MEDIC-format dictionary of N names from a real dictionary's words.

Scale benchmarks need dictionaries the size of UMLS (10M names) that nobody can ship.
This one keeps a real dictionary's statistics where search cost depends on them: the
name-length distribution (in words) and the word frequencies (so character n-gram
postings are as skewed as in the real thing). Each synthetic concept has 1-5 names (the
first few variants share words, as real synonyms do). The real dictionary's own lines come
first, so its concepts stay findable and gold mentions still have their answers.
Deterministic for a given --seed.

    python benchmarks/synthetic_dictionary.py \
        --source ../shared/data/medic/medic_06Jul2012.txt.gz --names 1000000 \
        --output /tmp/synth_1M.txt
"""
import argparse
import gzip
import sys
from pathlib import Path


def read_source(path: Path):
    """The source lines (kept verbatim), its names' word lists."""
    opener = gzip.open if path.suffix == ".gz" else open
    lines, names = [], []
    with opener(path, "rt", encoding="utf8") as fileh:
        for line in fileh:
            line = line.rstrip("\n")
            if "||" not in line:
                continue
            lines.append(line)
            names.extend(n.split() for n in line.split("||", 1)[1].split("|") if n.strip())
    return lines, names


def write_synthetic(source: Path, n_names: int, output: Path, seed: int = 0) -> int:
    """Write about n_names names (the source's first, then synthetic concepts) to
    `output`; returns the number of names written."""
    import numpy
    from tqdm import tqdm

    rng = numpy.random.default_rng(seed)
    lines, names = read_source(source)
    vocab, counts = numpy.unique([w for name in names for w in name], return_counts=True)
    word_p = counts / counts.sum()
    lengths = numpy.array([len(n) for n in names])
    length_values, length_counts = numpy.unique(lengths, return_counts=True)
    length_p = length_counts / length_counts.sum()
    written = sum(len(line.split("||", 1)[1].split("|")) for line in lines)
    tmp = output.with_name(output.name + ".tmp")
    with open(tmp, "w", encoding="utf8") as out:
        for line in lines:
            out.write(line + "\n")
        concept = 0
        chunk = 100_000
        with tqdm(total=max(0, n_names - written), desc="synthetic names", unit="name",
                  mininterval=10) as bar:
            while written < n_names:
                # Draw a chunk of concepts at once: numpy's draws are the slow part.
                per_concept = rng.integers(1, 6, size=chunk)
                n_len = rng.choice(length_values, size=chunk, p=length_p)
                words = rng.choice(len(vocab), size=(chunk, int(length_values.max()) + 2),
                                   p=word_p)
                swaps = rng.integers(0, 3, size=(chunk, 5))
                alt_words = rng.choice(len(vocab), size=(chunk, 5), p=word_p)
                for i in range(chunk):
                    if written >= n_names:
                        break
                    base = list(words[i, :n_len[i]])
                    variants = []
                    for v in range(min(int(per_concept[i]), n_names - written)):
                        name = list(base)
                        if v:
                            # A synonym: one word replaced, and the order sometimes changed
                            # ("disease of the kidney" / "kidney disease").
                            name[int(rng.integers(len(name)))] = alt_words[i, v]
                            if swaps[i, v] == 1 and len(name) > 1:
                                name = name[1:] + name[:1]
                        variants.append(" ".join(vocab[name]))
                    concept += 1
                    out.write(f"SYN{concept:08d}||{'|'.join(variants)}\n")
                    written += len(variants)
                    bar.update(len(variants))
    tmp.replace(output)
    return written


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--source", type=Path, required=True, help="a MEDIC-format dictionary")
    p.add_argument("--names", type=int, required=True)
    p.add_argument("--output", type=Path, required=True)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if not args.source.exists():
        print(f"skipped: {args.source} is absent", file=sys.stderr)
        return 0
    n = write_synthetic(args.source, args.names, args.output, args.seed)
    print(f"{args.output}: {n} names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
