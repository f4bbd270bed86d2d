"""benchmarks/realistic_dictionary.py: the seed's names come first, then synthetic names whose
distinct words keep growing as Heaps' law asks (new rare words spliced from the seed's),
with Zipfian frequencies; deterministic for a seed."""
import collections
import importlib.util
from pathlib import Path

import pytest

from spacy_biolink.text.normalize import MentionNormalizer

ROOT = Path(__file__).resolve().parents[1]


def generator():
    spec = importlib.util.spec_from_file_location(
        "realistic_dictionary", ROOT / "benchmarks" / "realistic_dictionary.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FOLD = MentionNormalizer(lowercase=True, remove_punctuation=True, spelling_variants=True,
                         strip_plurals=True).name


def folded_words(path: Path) -> collections.Counter:
    counts = collections.Counter()
    with open(path, encoding="utf8") as fileh:
        for line in fileh:
            counts.update(FOLD(line.split("\t")[0]).split())
    return counts


def test_mesh_sample_grows_its_words_as_heaps_law_asks(shared_data, tmp_path):
    module = generator()
    mesh = shared_data / "mesh2024"
    if not all((mesh / f).exists() for f in module.MESH_FILES):
        pytest.skip(f"MeSH 2024's TSV exports are absent from {mesh}")
    seed = []
    for pair in module.read_mesh(mesh):
        seed.append(pair)
        if len(seed) == 20_000:
            break
    out = tmp_path / "real.tsv"
    stats = module.write_realistic(seed, 80_000, out, seed=0)
    lines = out.read_text(encoding="utf8").splitlines()
    assert len(lines) == stats["names"] == 80_000
    assert lines[:3] == [f"{name}\t{cid}" for name, cid in seed[:3]]
    counts = folded_words(out)
    seed_words = {w for name, _ in seed for w in FOLD(name).split()}
    # Measured: 28,630 distinct folded words in 80k names, 7,588 of them the seed's; Heaps'
    # law from the seed's 7,588 words in 57,230 tokens (b = 0.96) asks for 28,569.
    assert len(seed_words) == stats["mesh_words"] == 7_588
    assert len(counts) == pytest.approx(28_630, rel=0.005)
    assert len(counts) == pytest.approx(
        stats["mesh_words"] * (stats["tokens"] / stats["mesh_tokens"]) ** 0.96, rel=0.01)
    # Zipfian: a long tail of words seen once, a head of words seen thousands of times.
    frequencies = sorted(counts.values(), reverse=True)
    once = sum(1 for c in frequencies if c == 1) / len(frequencies)
    assert once == pytest.approx(0.4652, abs=0.005)
    assert frequencies[0] > 100 * frequencies[len(frequencies) // 10]


def test_tiny_seed_is_deterministic_and_brings_new_words(tmp_path):
    module = generator()
    seed = [("acute lymphoblastic leukemia", "D054198"), ("breast neoplasms", "D001943"),
            ("2,4-dinitrophenol", "D019806"), ("BRCA1 protein", "D019313"),
            ("Escherichia coli", "D004926"), ("cyp2d6 gene", "C000001"),
            ("Homo sapiens", "D006801"), ("tumor suppressor protein p53", "D016159")] * 3
    first, second = tmp_path / "a.tsv", tmp_path / "b.tsv"
    stats = module.write_realistic(seed, 3_000, first, seed=1)
    module.write_realistic(seed, 3_000, second, seed=1)
    assert first.read_bytes() == second.read_bytes()
    counts = folded_words(first)
    seed_words = {w for name, _ in seed for w in FOLD(name).split()}
    assert stats["names"] == 3_000 and seed_words < set(counts)
    # New words far outnumber the seed's, as Heaps' law asks of a 25-word seed.
    assert len(counts) > 20 * len(seed_words)
