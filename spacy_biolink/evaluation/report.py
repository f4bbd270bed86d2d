"""One table comparing linkers (encoders) and an acc@k plot, from `evaluate` JSON files."""
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from ..io.files import atomic_file
from ..io.util import PathLike


def _k_values(result: Dict) -> Sequence[int]:
    return sorted(int(key[4:]) for key in result.get("lenient", result) if key.startswith("acc@"))


def check_metrics(result: Dict, path: PathLike, command: str) -> Dict:
    """`result` if it has what comparison_table reads from `command`'s metrics, else
    E462 naming the file (a hand-edited or foreign JSON would fail mid-table)."""
    from ..errors import BioLinkError, Errors

    def bad(reason: str) -> BioLinkError:
        return BioLinkError(Errors.E462.format(path=path, command=command, reason=reason))

    def number(value) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool)

    if command == "evaluate-e2e":
        for part, keys in (("ner", ("f",)), ("linking", ("p", "r", "f"))):
            block = result.get(part)
            if not isinstance(block, dict) or not all(number(block.get(k)) for k in keys):
                raise bad(f"no \"{part}\" object with numbers {', '.join(keys)}")
        return result
    if not any(isinstance(result.get(rule), dict) for rule in ("lenient", "strict")):
        raise bad("no \"lenient\" or \"strict\" acc@k object")
    for rule in ("lenient", "strict"):
        block = result.get(rule, {})
        if not isinstance(block, dict):
            raise bad(f"\"{rule}\" is not an object")
        for key, value in block.items():
            if key.startswith("acc@") and not (number(value) and key[4:].isdigit()):
                raise bad(f"\"{rule}\" has {key!r}: {value!r}, not acc@K: number")
    return result


def comparison_table(results: Dict[str, Dict], end_to_end: Optional[Dict[str, Dict]] = None) -> str:
    """Markdown: one row per linker, gold-mention acc@1/acc@5 under both composite rules,
    and end-to-end linking P/R/F1 where given: on the linker's row where the names match,
    else on a row of its own (e.g. a whole pipeline, whichever linker it carries)."""
    end_to_end = end_to_end or {}
    header = ["linker", "lenient acc@1", "lenient acc@5", "strict acc@1", "strict acc@5",
              "mentions", "skipped"]
    if end_to_end:
        header += ["e2e NER F1", "e2e linking P", "e2e linking R", "e2e linking F1"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
    for name, result in results.items():
        row = [name]
        for rule in ("lenient", "strict"):
            for k in (1, 5):
                value = result.get(rule, {}).get(f"acc@{k}")
                row.append("-" if value is None else f"{value:.4f}")
        row += [str(result.get("n_evaluated", "-")), str(result.get("n_skipped", "-"))]
        if end_to_end:
            e2e = end_to_end.get(name)
            row += ["-"] * 4 if e2e is None else _end_to_end_cells(e2e)
        lines.append("| " + " | ".join(row) + " |")
    for name, e2e in end_to_end.items():
        if name not in results:
            row = [name] + ["-"] * 6 + _end_to_end_cells(e2e)
            lines.append("| " + " | ".join(row) + " |")
    first = next(iter(results.values()), {})
    lines.append("")
    lines.append(f"Corpus: {first.get('corpus', '?')}. Lenient: a composite part may match any gold "
                 "id of its mention (BioSyn's rule); strict: each part its own id.")
    return "\n".join(lines)


def _end_to_end_cells(e2e: Dict) -> List[str]:
    """NER F1 and linking P / R / F1 of one `evaluate-e2e` result, as table cells."""
    return [f"{e2e['ner']['f']:.4f}", *(f"{e2e['linking'][m]:.4f}" for m in ("p", "r", "f"))]


def plot_acc_at_k(results: Dict[str, Dict], path: PathLike, *, rule: str = "lenient",
                  title: str = "") -> Optional[Path]:
    """acc@k against k, one line per linker. Needs matplotlib (the `plots` extra)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, axis = plt.subplots(figsize=(6, 4))
    for name, result in results.items():
        scores = result.get(rule, {})
        ks = _k_values(result)
        axis.plot(ks, [scores[f"acc@{k}"] for k in ks], marker="o", label=name)
    axis.set_xlabel("k")
    axis.set_ylabel(f"acc@k ({rule})")
    axis.set_title(title or f"Gold-mention acc@k, {rule} rule")
    axis.grid(alpha=0.3)
    axis.legend(fontsize=8)
    fig.tight_layout()
    path = Path(path)
    with atomic_file(path, "wb") as fileh:
        fig.savefig(fileh, format="png", dpi=100)
    plt.close(fig)
    return path
