"""Training name encoders: `python -m spacy_biolink train CONFIG --output DIR`.

A training config has [paths] (dictionary, train, dev, ...), [system] (seed), [encoder]
(the registered architecture block to train) and [training], a registered trainer
(`@misc = "spacy-biolink.XTrainer.v1"` with its settings). The trainer writes a trained
encoder directory (encoders/saved.py) that `init-linker --encoder DIR` loads.
"""
from .run import Trainer, require_path, train_from_config

__all__ = ["Trainer", "require_path", "train_from_config"]
