"""Training progress that a person can read: a JSONL log and a loss/accuracy plot."""
import json
import logging
from pathlib import Path
from typing import Dict, List

logger = logging.getLogger("spacy_biolink")

LOG_FILE = "training.jsonl"
PLOT_FILE = "training.png"


class TrainingLog:
    """One JSON line per record ({"epoch": 3, "loss": 0.12, "dev_acc@1": 0.8, ...}),
    appended as training goes, so a resumed run continues the same file."""

    def __init__(self, output_dir: Path, *, resume: bool = False):
        self.path = Path(output_dir) / LOG_FILE
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.records: List[Dict] = []
        if resume and self.path.is_file():
            self.records = [json.loads(line) for line in self.path.read_text().splitlines() if line]
        elif self.path.exists():
            self.path.unlink()

    def log(self, **record) -> None:
        """Append one record (keyword values) to the JSON-lines log at once and log it."""
        self.records.append(record)
        with self.path.open("a", encoding="utf8") as fileh:
            fileh.write(json.dumps(record) + "\n")
        logger.info(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                             for k, v in record.items()))

    def plot(self, x: str = "epoch", title: str = "") -> Path:
        """training.png: every numeric series against `x`, losses on the left axis,
        accuracies (keys with "acc" or "map") on the right. Needs matplotlib."""
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            logger.warning("matplotlib is not installed: no %s (pip install matplotlib)", PLOT_FILE)
            return None
        rows = [r for r in self.records if x in r]
        keys = sorted({k for r in rows for k, v in r.items()
                       if k != x and isinstance(v, (int, float)) and not isinstance(v, bool)})
        fig, left = plt.subplots(figsize=(7, 4))
        right = left.twinx()
        for key in keys:
            points = [(r[x], r[key]) for r in rows if key in r]
            axis = right if ("acc" in key or "map" in key.lower()) else left
            axis.plot(*zip(*points), marker="o", markersize=3, label=key,
                      linestyle="--" if axis is right else "-")
        left.set_xlabel(x)
        left.set_ylabel("loss")
        right.set_ylabel("accuracy")
        handles = left.get_legend_handles_labels()[0] + right.get_legend_handles_labels()[0]
        labels = left.get_legend_handles_labels()[1] + right.get_legend_handles_labels()[1]
        if handles:
            left.legend(handles, labels, loc="best", fontsize=8)
        left.set_title(title or self.path.parent.name)
        fig.tight_layout()
        out = self.path.with_name(PLOT_FILE)
        fig.savefig(out, dpi=100)
        plt.close(fig)
        return out
