"""Name-pair files: what `score-pairs` reads (one `name<TAB>name[<TAB>label]` a line)
and writes (the same with the verifier's probability)."""
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from ..errors import BioLinkError, Errors
from .util import PathLike


def read_pair_file(path: PathLike) -> Tuple[List[Tuple[str, str]], List[Optional[int]]]:
    """name1<TAB>name2[<TAB>label] lines (blank lines and `#` comments skipped) ->
    pairs and labels (None where a line has no label)."""
    from .files import check_no_control_characters, iter_lines

    path = Path(path)
    if not path.exists():
        raise BioLinkError(Errors.E707.format(path=path))
    pairs: List[Tuple[str, str]] = []
    labels: List[Optional[int]] = []
    for line_number, line in iter_lines(path, "Pair file"):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if (len(fields) not in (2, 3) or not fields[0].strip() or not fields[1].strip()
                or (len(fields) == 3 and fields[2].strip() not in ("0", "1", ""))):
            raise BioLinkError(Errors.E706.format(path=path, line=line_number, text=line))
        check_no_control_characters(path, line_number, line, "a pair line", allow="\t")
        pairs.append((fields[0], fields[1]))
        labels.append(int(fields[2]) if len(fields) == 3 and fields[2].strip() else None)
    return pairs, labels


def write_scored_pairs(path: PathLike, pairs: Sequence[Tuple[str, str]],
                       probs: Sequence[float]) -> None:
    """name1<TAB>name2<TAB>probability lines, written atomically."""
    from .files import atomic_file

    with atomic_file(path) as fileh:
        for (left, right), prob in zip(pairs, probs):
            fileh.write(f"{left}\t{right}\t{float(prob):.6f}\n")
