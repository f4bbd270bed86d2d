"""Triplet network (Xu & Bethard, 2021): a mean-pooled transformer trained with the
batch-hard soft-margin triplet loss on names grouped by concept.

Training sets: "O" (the dictionary's names) or "OD" (those plus the training mentions,
repeated until they are `mention_ratio` of the ontology's size; the paper's 1/3).
Batches hold `concepts_per_batch` concepts with `names_per_concept` texts each, drawn
with replacement for concepts with fewer texts, so no concept is dropped (the reference
code drops the concepts with few names, i.e. most of them).

Search (what the dev score and the saved encoder's meta use): "O" indexes the dictionary
names, "OD" the names plus the training mentions (init-linker --augment TRAIN); each text
is one vector (the paper's T). The paper's other strategies are bio_linker settings of the
linker, not of training: index_sources (O, D, OD), index_level "concept" (C: one mean
vector per concept) and sieve_threshold (the D-first sieve).
"""
import logging
from pathlib import Path
from typing import Dict, List, Tuple

import numpy
from ..io.files import make_dir
from ..io.progress import progress_bar

from ..encoders.saved import META_FILE, save_encoder
from ..errors import BioLinkError, Errors
from ..text.normalize import MentionNormalizer
from .checkpoints import load_checkpoint, restore_rng_states, rng_states, save_checkpoint
from .data import corpus_mention_pairs, dictionary_name_pairs, read_dictionary
from .dev import augmented_for_dev, dev_accuracy
from .log import TrainingLog
from .run import require_path

logger = logging.getLogger("spacy_biolink")

FLAT_INDEX = {"@misc": "spacy-biolink.FaissIndex.v1", "kind": "flat"}
TRAINING_SETS = ("O", "OD")
SEARCHES = ("O", "OD")


class TripletTrainer:
    def __init__(self, *, max_epochs: int, concepts_per_batch: int, names_per_concept: int,
                 learning_rate: float, weight_decay: float, training_set: str,
                 mention_ratio: float, search: str, max_concepts: int):
        if training_set not in TRAINING_SETS:
            raise BioLinkError(Errors.E654.format(setting="training_set", value=training_set,
                                                  options=", ".join(TRAINING_SETS)))
        if search not in SEARCHES:
            raise BioLinkError(Errors.E654.format(setting="search", value=search,
                                                  options=", ".join(SEARCHES)))
        self.max_epochs = max_epochs
        self.concepts_per_batch = concepts_per_batch
        self.names_per_concept = names_per_concept
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.training_set = training_set
        self.mention_ratio = mention_ratio
        self.search = search
        self.max_concepts = max_concepts

    def settings(self) -> Dict:
        """The trainer's settings as a dict, for the saved meta and checkpoints."""
        return dict(vars(self))

    def __call__(self, config, output_dir: Path, *, resume: bool = False) -> Dict:
        """Fine-tune an encoder (see `Trainer`) with a batch-hard triplet loss over batches of
        concepts with several names each; `resume` continues from the last checkpoint."""
        import torch

        from ..encoders.torch_wrapper import torch_module
        from ..encoders.transformer import build_for_training
        from .biosyn import encode_with_grad, training_device
        from .losses import batch_hard_soft_margin_triplet

        output_dir = Path(output_dir)
        make_dir(output_dir)
        seed = int(config.get("system", {}).get("seed", 0))
        dictionary = read_dictionary(require_path(config, "dictionary"))
        train_path = require_path(config, "train") if self.training_set == "OD" or \
            self.search == "OD" else None
        dev_path = require_path(config, "dev")

        model, model_config, backbone = build_for_training(config)
        module = torch_module(model)
        device = training_device()
        module.to(device)
        optimizer = torch.optim.AdamW(module.parameters(), lr=self.learning_rate,
                                      weight_decay=self.weight_decay)
        groups = self.concept_groups(dictionary, train_path, seed)
        logger.info("Triplet: %d concepts, %d texts (training set %s), backbone %s",
                    len(groups), sum(len(g) for _, g in groups), self.training_set, backbone)

        log = TrainingLog(output_dir, resume=resume)
        start_epoch, best = 1, -1.0
        checkpoint = load_checkpoint(output_dir) if resume else None
        if checkpoint is not None:
            module.load_state_dict(checkpoint["module"])
            optimizer.load_state_dict(checkpoint["optimizer"])
            restore_rng_states(checkpoint)
            start_epoch, best = checkpoint["epoch"] + 1, checkpoint["best"]
        augment = [train_path] if self.search == "OD" else []
        # augmented once: dev is scored after every epoch
        dev_dictionary = augmented_for_dev(dictionary, augment)
        meta = {"method": "triplet", "backbone": str(backbone), "settings": self.settings(),
                "seed": seed, "search": {"index": "T", "texts": self.search,
                                         "augment": "train" if self.search == "OD" else None}}
        for epoch in progress_bar(range(start_epoch, self.max_epochs + 1), desc="Triplet epochs",
                          unit="epoch", initial=start_epoch - 1, total=self.max_epochs):
            rng = numpy.random.default_rng(seed + epoch)
            batches = make_batches(groups, self.concepts_per_batch, self.names_per_concept, rng)
            module.train()
            losses = []
            for texts, labels in progress_bar(batches, desc=f"epoch {epoch}: training", unit="batch",
                                      leave=False):
                embeddings = encode_with_grad(model, texts)
                loss = batch_hard_soft_margin_triplet(embeddings, torch.from_numpy(labels).to(device))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                losses.append(float(loss.detach()))
            module.eval()
            scores = dev_accuracy(model, dev_dictionary, dev_path, index_config=FLAT_INDEX)
            log.log(epoch=epoch, loss=float(numpy.mean(losses)) if losses else 0.0,
                    **{"dev_acc@1": scores["acc@1"], "dev_acc@5": scores["acc@5"]})
            if scores["acc@1"] > best:
                best = scores["acc@1"]
                meta.update({"dev_acc@1": scores["acc@1"], "dev_acc@5": scores["acc@5"],
                             "epoch": epoch})
                save_encoder(output_dir, model, model_config, index_config=FLAT_INDEX, meta=meta)
            save_checkpoint(output_dir, {"epoch": epoch, "best": best,
                                         "module": module.state_dict(),
                                         "optimizer": optimizer.state_dict(),
                                         **rng_states()})
        log.plot(title="Triplet network")
        if (output_dir / META_FILE).is_file():
            from ..io.files import read_json

            return read_json(output_dir / META_FILE, "Encoder meta.json", type=dict)
        return meta

    def concept_groups(self, dictionary, train_path, seed: int) -> List[Tuple[int, List[str]]]:
        """(concept, its training texts) for every concept with at least one text."""
        normalizer = MentionNormalizer()
        ontology = dictionary_name_pairs(dictionary)
        texts = {}
        for text, c in zip(ontology.texts, ontology.concepts):
            texts.setdefault(c, []).append(normalizer.name(text))
        n_ontology = len(ontology)
        if self.training_set == "OD":
            mentions = corpus_mention_pairs(dictionary, [train_path])
            repeats = max(1, int(round(self.mention_ratio * n_ontology / max(len(mentions), 1))))
            for text, c in zip(mentions.texts, mentions.concepts):
                text = normalizer.mention(text)
                if any(ch.isalnum() for ch in text):
                    texts.setdefault(c, []).extend([text] * repeats)
        groups = sorted((c, t) for c, t in texts.items() if t)
        if self.max_concepts and len(groups) > self.max_concepts:
            chosen = numpy.random.default_rng(seed).choice(len(groups), self.max_concepts,
                                                           replace=False)
            groups = [groups[i] for i in sorted(chosen.tolist())]
        return groups


def make_batches(groups: List[Tuple[int, List[str]]], concepts_per_batch: int,
                 names_per_concept: int, rng: numpy.random.Generator
                 ) -> List[Tuple[List[str], numpy.ndarray]]:
    """One pass over the concepts in random order: (texts, concept labels) per batch."""
    order = rng.permutation(len(groups))
    batches = []
    for start in range(0, len(order), concepts_per_batch):
        texts, labels = [], []
        for g in order[start:start + concepts_per_batch].tolist():
            concept, names = groups[g]
            picks = rng.choice(len(names), names_per_concept,
                               replace=len(names) < names_per_concept)
            texts.extend(names[i] for i in picks.tolist())
            labels.extend([concept] * names_per_concept)
        batches.append((texts, numpy.array(labels, dtype=numpy.int64)))
    return batches
