"""Distilling a teacher encoder into the fast name encoder (issue 32, recipe 3).

The teacher is any dense name encoder given by path: a Hugging Face / sentence-transformers
directory (mean-pooled, as sentence-transformers pools MiniLM) or an encoder this package
trained and saved (`train configs/triplet.cfg`, loaded with the safe loader). It runs once:
its unit vectors of the training texts (dictionary names and training mentions) and each
text's nearest names under it are cached on disk as .npy files beside a JSON key (teacher
directory, its files' sizes and times, the texts' hash), so a later run with the same teacher
and texts skips the teacher and a changed one is never served stale vectors.

The student then learns the teacher's similarity structure: batches of texts, each seed
text beside its nearest names (the teacher's, and from the second epoch the student's own,
so its mistakes are corrected), and for each text the KL divergence from the teacher's
softmax over the batch (cosine / temperature) to the student's. No projection between the
two spaces is needed, so the student keeps its own width.
"""
import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy

from ..errors import BioLinkError, Errors
from ..io.files import atomic_file
from .samplers import concept_batches

logger = logging.getLogger("spacy_biolink")

CACHE_FORMAT = 1


def resolve_teacher(path: Optional[str]) -> Path:
    """The teacher directory: `path`, or the installed MiniLM package when it is empty."""
    from ..encoders.transformer import resolve_backbone

    if path in (None, "", "null"):
        return resolve_backbone(None)
    path = Path(path)
    if path.is_file() and (path.parent / "encoder.cfg").is_file():
        # A saved encoder's `model` file looks like the model to pass; its directory is.
        raise BioLinkError(Errors.E697.format(path=path, parent=path.parent))
    if not path.is_dir() or not ((path / "encoder.cfg").is_file()
                                 or (path / "config.json").is_file()):
        raise BioLinkError(Errors.E695.format(path=path))
    return path


def load_teacher(path: Path, max_length: int = 25):
    """A thinc dense encoder for the teacher at `path` (a saved spacy-biolink encoder, or a
    Hugging Face directory mean-pooled over its last layer)."""
    from spacy.util import registry

    if (path / "encoder.cfg").is_file():
        from ..encoders.saved import load_encoder

        model, _ = load_encoder(path)
        if model.attrs.get("output") != "dense":
            raise BioLinkError(Errors.E696.format(path=path, output=model.attrs.get("output")))
        return model
    from ..encoders.transformer import backbone_settings, load_backbone

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    model = registry.resolve({"model": {
        "@architectures": "spacy-biolink.TransformerEncoder.v1",
        "backbone_config": backbone_settings(path), "pooling": "mean",
        "max_length": max_length, "normalize": True}})["model"]
    load_backbone(model, path)
    return model


def cache_key(teacher: Path, texts: List[str], n_names: int, n_nearest: int) -> Dict:
    """What the cached vectors depend on: the teacher directory and its files (size and
    modification time), the texts in order, how many of them are names, the neighbours kept."""
    files = sorted(p for p in teacher.rglob("*") if p.is_file())
    stamp = hashlib.sha256()
    for p in files:
        stat = p.stat()
        stamp.update(f"{p.relative_to(teacher)}\t{stat.st_size}\t{stat.st_mtime_ns}\n".encode())
    digest = hashlib.sha256("\n".join(texts).encode("utf8")).hexdigest()
    return {"format": CACHE_FORMAT, "teacher": str(teacher.resolve()),
            "teacher_files": stamp.hexdigest(), "texts_sha256": digest, "n_texts": len(texts),
            "n_names": n_names, "n_nearest": n_nearest}


def teacher_targets(teacher: Path, texts: List[str], n_names: int, n_nearest: int,
                    cache_dir: Path) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """(unit teacher vectors of `texts`, each text's `n_nearest` nearest names under the
    teacher, itself left out) where texts[:n_names] are the names. Read from `cache_dir`
    when a cached pair has the same key, else computed and cached there."""
    key = cache_key(teacher, texts, n_names, n_nearest)
    name = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]
    vectors_path = cache_dir / f"teacher_{name}.vectors.npy"
    nearest_path = cache_dir / f"teacher_{name}.nearest.npy"
    key_path = cache_dir / f"teacher_{name}.json"
    if key_path.is_file() and vectors_path.is_file() and nearest_path.is_file():
        try:
            stored = json.loads(key_path.read_text(encoding="utf8"))
            vectors = numpy.load(vectors_path, allow_pickle=False)
            nearest = numpy.load(nearest_path, allow_pickle=False)
        except (OSError, ValueError) as err:
            logger.warning("teacher cache %s unreadable (%s): recomputing", key_path, err)
        else:
            if stored == key and len(vectors) == len(texts) == len(nearest):
                logger.info("teacher vectors from the cache %s", vectors_path)
                return vectors, nearest
    logger.info("teacher %s: encoding %d texts (cached in %s)", teacher, len(texts), cache_dir)
    from ..encoders.transformer import embed

    model = load_teacher(teacher)
    vectors = numpy.ascontiguousarray(embed(model, texts, normalize=True), dtype=numpy.float32)
    nearest = nearest_names(vectors, vectors[:n_names], n_nearest,
                            exclude_self=numpy.arange(len(texts)) < n_names)
    cache_dir.mkdir(parents=True, exist_ok=True)
    with atomic_file(vectors_path, "wb") as fileh:
        numpy.save(fileh, vectors, allow_pickle=False)
    with atomic_file(nearest_path, "wb") as fileh:
        numpy.save(fileh, nearest, allow_pickle=False)
    # The key last: a cache without it (an interrupted write) is never read.
    with atomic_file(key_path) as fileh:
        json.dump(key, fileh, indent=1)
    return vectors, nearest


def nearest_names(queries: numpy.ndarray, names: numpy.ndarray, k: int,
                  exclude_self: Optional[numpy.ndarray] = None) -> numpy.ndarray:
    """(n_queries, k) int32 rows of `names` with the highest inner product, best first
    (exact faiss search); where exclude_self[i], query i is names row i and is left out of
    its own list."""
    import faiss

    k = min(k, max(len(names) - 1, 1))
    index = faiss.IndexFlatIP(names.shape[1])
    index.add(numpy.ascontiguousarray(names, dtype=numpy.float32))
    _, ids = index.search(numpy.ascontiguousarray(queries, dtype=numpy.float32), k + 1)
    if exclude_self is None:
        return ids[:, :k].astype(numpy.int32)
    out = numpy.empty((len(queries), k), dtype=numpy.int32)
    for i, row in enumerate(ids.tolist()):
        if exclude_self[i]:
            row = [n for n in row if n != i]
        out[i] = row[:k]
    return out


def distil_batches(n_texts: int, neighbours: numpy.ndarray, batch_size: int,
                   hard: int, rng: numpy.random.Generator) -> List[List[int]]:
    """One pass over the texts in random order: each batch holds seeds and up to `hard` of
    each seed's neighbours (rows of `neighbours`, name indices = text indices) not yet in
    the batch, up to `batch_size` texts. A text already in this pass is not a seed again:
    the alignment phase's batching (`concept_batches`) with texts for concepts."""
    return concept_batches(numpy.arange(n_texts), neighbours, batch_size, hard, rng)


def similarity_kl(student, teacher, temperature: float):
    """Mean over rows of KL(teacher || student), each a softmax over the batch's other
    texts of cosine / temperature. student: (batch, d) L2-normalised torch tensor with
    gradients; teacher: (batch, d') L2-normalised torch tensor."""
    import torch

    eye = torch.eye(len(student), dtype=torch.bool, device=student.device)
    s = (student @ student.T / temperature).masked_fill(eye, float("-inf"))
    t = (teacher @ teacher.T / temperature).masked_fill(eye, float("-inf"))
    log_s = torch.log_softmax(s, dim=1).masked_fill(eye, 0.0)
    log_t = torch.log_softmax(t, dim=1).masked_fill(eye, 0.0)
    return (log_t.exp() * (log_t - log_s)).sum(dim=1).mean()


def interleave(first: numpy.ndarray, second: numpy.ndarray) -> numpy.ndarray:
    """Rows of `first` and `second` taken alternately, each row's repeats dropped, cut to
    the width of `first` (the teacher's and the student's nearest names mixed)."""
    width = first.shape[1]
    out = numpy.empty_like(first)
    for i in range(len(first)):
        merged = list(dict.fromkeys(
            v for pair in zip(first[i].tolist(), second[i].tolist()) for v in pair))
        out[i] = (merged + first[i].tolist())[:width]
    return out
