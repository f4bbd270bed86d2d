"""Resumable training: the whole training state in one file, replaced atomically.

Checkpoints are the trainer's own scratch state in its output directory (torch.save,
read back with weights_only=True, which refuses to run code); the encoder that is
shipped is the safetensors model written by encoders.saved.save_encoder.
"""
from pathlib import Path
from typing import Dict, Optional

from ..io.files import atomic_file

CHECKPOINT_FILE = "checkpoint.pt"


def save_checkpoint(output_dir: Path, state: Dict) -> Path:
    """state: tensors, state dicts and plain Python values (epoch, best score, rng)."""
    import torch

    path = Path(output_dir) / CHECKPOINT_FILE
    with atomic_file(path, "wb") as fileh:
        torch.save(state, fileh)
    return path


def load_checkpoint(output_dir: Path) -> Optional[Dict]:
    """The checkpoint saved in `output_dir`, or None when there is none. Loaded with
    `weights_only=True`, so a checkpoint cannot run code."""
    import torch

    path = Path(output_dir) / CHECKPOINT_FILE
    if not path.is_file():
        return None
    return torch.load(path, map_location="cpu", weights_only=True)


def rng_states() -> Dict:
    """torch's generators, for a checkpoint: dropout draws from the CPU one, or from the
    GPU's when the module trains there. Restored, a resumed run repeats a straight one."""
    import torch

    states = {"torch_rng": torch.get_rng_state()}
    if torch.cuda.is_available():
        states["cuda_rng"] = torch.cuda.get_rng_state_all()
    return states


def restore_rng_states(checkpoint: Dict) -> None:
    """Set the generators saved by `rng_states`; a checkpoint written before they were
    saved, or on a machine with other GPUs, leaves them as seeded."""
    import torch

    if "torch_rng" in checkpoint:
        torch.set_rng_state(checkpoint["torch_rng"])
    cuda_states = checkpoint.get("cuda_rng")
    if cuda_states and torch.cuda.is_available() and len(cuda_states) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(cuda_states)
