"""Resumable training: the whole training state in one file, replaced atomically.

Checkpoints are the trainer's own scratch state in its output directory (torch.save,
read back with weights_only=True, which refuses to run code); the encoder that is
shipped is the safetensors model written by encoders.saved.save_encoder.
"""
from pathlib import Path
from typing import Dict, Optional

from ..util import atomic_file

CHECKPOINT_FILE = "checkpoint.pt"


def save_checkpoint(output_dir: Path, state: Dict) -> Path:
    """state: tensors, state dicts and plain Python values (epoch, best score, rng)."""
    import torch

    path = Path(output_dir) / CHECKPOINT_FILE
    with atomic_file(path, "wb") as fileh:
        torch.save(state, fileh)
    return path


def load_checkpoint(output_dir: Path) -> Optional[Dict]:
    import torch

    path = Path(output_dir) / CHECKPOINT_FILE
    if not path.is_file():
        return None
    return torch.load(path, map_location="cpu", weights_only=True)
