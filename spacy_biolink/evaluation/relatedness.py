"""Semantic similarity / relatedness: Spearman's rho between an encoder's cosine of two
terms and human judgements (UMNSRS similarity and relatedness, MayoSRS, MiniMayoSRS).

A pair is "covered" when the encoder has something to say about both terms: for word
vector encoders (SGW, CCA+DAN) at least one word of each term has a vector; for other
encoders, a non-zero encoding. rho is computed over covered pairs (what BNE and CCA+DAN
report) and, for comparing encoders that cover different pairs, over all pairs with the
uncovered ones given similarity 0. Pairs are term strings; the CUI columns are not used
(no dictionary here maps UMLS CUIs).
"""
import csv
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy

from ..errors import BioLinkError, Errors
from ..io.files import iter_lines
from ..io.util import PathLike

DATASETS = {"UMNSRS_similarity": "UMNSRS_similarity.csv",
            "UMNSRS_relatedness": "UMNSRS_relatedness.csv",
            "MayoSRS": "MayoSRS.txt",
            "MiniMayoSRS": "MiniMayoSRS.txt"}

Pair = Tuple[str, str, float]


def read_pairs(path: PathLike) -> List[Pair]:
    """(term1, term2, score) of a UMNSRS CSV (columns Mean, Term1, Term2) or of a
    tab-separated `term1 term2 score` file (MayoSRS.txt; a header line is skipped)."""
    path = Path(path)
    lines = [line for _, line in iter_lines(path, "Relatedness file") if line.strip()]
    if not lines:
        raise BioLinkError(Errors.E632.format(path=path, reason="empty file"))
    pairs: List[Pair] = []
    if "\t" not in lines[0] and "," in lines[0]:
        rows = list(csv.DictReader(lines))
        columns = {c.lower(): c for c in (rows[0].keys() if rows else [])}
        if not {"mean", "term1", "term2"} <= set(columns):
            raise BioLinkError(Errors.E632.format(path=path, reason="no Mean/Term1/Term2 header"))
        for number, row in enumerate(rows, start=2):
            pairs.append((row[columns["term1"]], row[columns["term2"]],
                          _score(row[columns["mean"]], path, number)))
        return pairs
    for number, line in enumerate(lines, start=1):
        fields = line.split("\t")
        if len(fields) < 3:
            raise BioLinkError(Errors.E632.format(path=path, reason=f"line {number} has "
                                                  f"{len(fields)} tab-separated fields"))
        if number == 1 and not _is_number(fields[-1]):
            continue
        pairs.append((fields[0], fields[1], _score(fields[-1], path, number)))
    return pairs


def _is_number(value: str) -> bool:
    try:
        float(value)
        return True
    except ValueError:
        return False


def _score(value: str, path: Path, number: int) -> float:
    if not _is_number(value):
        raise BioLinkError(Errors.E632.format(path=path, reason=f"line {number}: score "
                                              f"{value!r} is not a number"))
    return float(value)


def relatedness_scores(encode: Callable[[List[str]], numpy.ndarray], pairs: Sequence[Pair],
                       covered: Optional[Callable[[str], bool]] = None) -> Dict:
    """Spearman rho of cosine(encode(term1), encode(term2)) against the pair scores."""
    from scipy import sparse
    from scipy.stats import spearmanr

    firsts = encode([p[0] for p in pairs])
    seconds = encode([p[1] for p in pairs])
    if sparse.issparse(firsts):
        firsts, seconds = firsts.toarray(), seconds.toarray()
    firsts, seconds = numpy.asarray(firsts, numpy.float64), numpy.asarray(seconds, numpy.float64)
    norms = numpy.linalg.norm(firsts, axis=1) * numpy.linalg.norm(seconds, axis=1)
    cosines = numpy.where(norms > 0, (firsts * seconds).sum(axis=1) / numpy.maximum(norms, 1e-12), 0.0)
    if covered is None:
        is_covered = norms > 0
    else:
        is_covered = numpy.array([covered(a) and covered(b) for a, b, _ in pairs], bool)
    gold = numpy.array([p[2] for p in pairs])
    rho = _spearman(cosines[is_covered], gold[is_covered], spearmanr)
    rho_all = _spearman(numpy.where(is_covered, cosines, 0.0), gold, spearmanr)
    return {"spearman": rho, "spearman_all_pairs": rho_all, "pairs": len(pairs),
            "covered": int(is_covered.sum()), "not_covered": int((~is_covered).sum())}


def _spearman(predicted, gold, spearmanr) -> Optional[float]:
    if len(gold) < 3 or numpy.ptp(predicted) == 0:
        return None
    return float(spearmanr(predicted, gold).correlation)


def evaluate_relatedness(encode: Callable[[List[str]], numpy.ndarray], data_dir: PathLike, *,
                         covered: Optional[Callable[[str], bool]] = None,
                         fold: Optional[Callable[[str], str]] = None) -> Dict:
    """{data set: scores} for each of DATASETS found in `data_dir`. Terms are folded as
    bio_linker folds mentions (lowercase, punctuation -> space) before encoding."""
    if fold is None:
        from ..text.normalize import MentionNormalizer

        fold = MentionNormalizer().name
    data_dir = Path(data_dir)
    out = {}
    for name, file_name in DATASETS.items():
        if (data_dir / file_name).is_file():
            pairs = [(fold(a), fold(b), s) for a, b, s in read_pairs(data_dir / file_name)]
            out[name] = relatedness_scores(encode, pairs, covered)
    if not out:
        raise BioLinkError(Errors.E633.format(path=data_dir))
    return out
