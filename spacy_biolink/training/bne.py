"""Training BNE (Phan et al. 2019) with "Option 2" targets: only word vectors and a
dictionary are needed.

Each example is a (name, concept) pair: the dictionary's names, plus the training
corpus' mentions as extra names of their concepts (add_train_mentions). Per batch:
    f(s)   the encodings of the anchors, f(s') those of one random synonym each,
    q(s)   the mean pre-trained word vector of s (context),
    g(c)   the mean of q over the concept's names (concept),
and L = w_syn l(f(s), f(s')) + w_def l(f(s), g(c)) + w_ctx l(f(s), q(s)), each l the
logistic loss with in-batch negatives (training/losses.py in_batch_logistic).
The encoder written to the output directory is the epoch with the best dev acc@1
(or the last epoch without a dev corpus); checkpoint.pt holds the latest state for --resume.
"""
import logging
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Dict, List, Optional

import numpy
from spacy import util
from thinc.api import Config

from ..encoders.bne import char_alphabet, featurizer, set_vocabulary, to_tensors
from ..encoders.saved import save_encoder
from ..encoders.torch_wrapper import torch_module
from ..errors import BioLinkError, Errors
from ..evaluation.synonym_retrieval import SPLIT_FILE, TRAIN, SynonymSplit
from ..io.files import make_dir
from ..encoders.wordvectors import WordVectors
from .checkpoints import load_checkpoint, restore_rng_states, rng_states, save_checkpoint
from .data import MentionPairs, corpus_mention_pairs, dictionary_name_pairs, read_dictionary
from .dev import augmented_for_dev, dev_accuracy
from .log import TrainingLog
from .losses import in_batch_logistic
from .run import require_path

logger = logging.getLogger("spacy_biolink")

INDEX_CONFIG = {"@misc": "spacy-biolink.FaissIndex.v1", "kind": "flat"}


@dataclass
class BneTrainer:
    max_epochs: int = 30
    steps_per_epoch: int = 0  # 0: one pass over the examples
    batch_size: int = 64
    learning_rate: float = 0.001
    grad_clip: float = 5.0
    patience: int = 3  # epochs without a better dev acc@1 before stopping
    synonym_weight: float = 1.0
    concept_weight: float = 1.0
    context_weight: float = 1.0
    add_train_mentions: bool = True
    dev_augment_train: bool = True
    max_minutes: float = 0.0  # 0: no time budget

    def __call__(self, config: Config, output_dir: Path, *, resume: bool = False) -> Dict:
        """Train a BNE encoder (see `Trainer`) on synonym, concept and context losses with in-batch
        negatives (batch_size >= 2), stopping early on dev; `resume` continues from a checkpoint."""
        import torch

        if self.batch_size < 2:
            raise BioLinkError(Errors.E644.format(setting="batch_size", value=self.batch_size,
                                                  reason="in-batch negatives need at least 2"))
        output_dir = Path(output_dir)
        make_dir(output_dir)
        seed = int(config.get("system", {}).get("seed", 0))
        paths = config.get("paths", {})
        dictionary = read_dictionary(require_path(config, "dictionary"))
        vectors_path = require_path(config, "vectors")
        vectors = WordVectors.from_disk(vectors_path)
        train_path = require_path(config, "train") if _is_set(paths.get("train")) else None
        dev_path = require_path(config, "dev") if _is_set(paths.get("dev")) else None

        split = None
        if _is_set(paths.get("split")):
            # Seed 001's protocol: train on the split's training names only, so that
            # `eval-synonyms` can score the held-out and zero-shot names.
            split = SynonymSplit.from_disk(require_path(config, "split"))
            examples = split_training_examples(dictionary, split)
        else:
            examples = training_examples(dictionary,
                                         train_path if self.add_train_mentions else None)
        model_config = self.model_config(config, examples, dictionary, vectors)
        model = util.registry.resolve({"model": model_config})["model"]
        set_vocabulary(model, char_alphabet(examples.texts + list(dictionary.names)), vectors)
        module = torch_module(model)
        optimizer = torch.optim.Adam((p for p in module.parameters() if p.requires_grad),
                                     lr=self.learning_rate)
        data = BneBatches(examples, featurizer(model))
        logger.info("BNE: %d training names of %d concepts, %d-d word vectors, %d chars",
                    len(examples), len(data.concept_vectors), vectors.dim, model_config["n_chars"])

        fingerprint = {"examples": len(examples), "n_chars": model_config["n_chars"],
                       "word_dim": model_config["word_dim"]}
        log = TrainingLog(output_dir, resume=resume)
        start_epoch, best, bad_epochs = 0, -1.0, 0
        state = load_checkpoint(output_dir) if resume else None
        if state is not None:
            if state["fingerprint"] != fingerprint:
                raise BioLinkError(Errors.E645.format(
                    path=output_dir, reason=f"{state['fingerprint']} != {fingerprint}"))
            module.load_state_dict(state["module"])
            optimizer.load_state_dict(state["optimizer"])
            restore_rng_states(state)
            start_epoch, best, bad_epochs = state["epoch"], state["best"], state["bad_epochs"]
            logger.info("resuming BNE after epoch %d (best dev acc@1 %.4f)", start_epoch, best)
        elif resume:
            logger.warning("--resume: no checkpoint in %s, starting over", output_dir)

        meta = {"method": "BNE", "paper": "Phan et al. 2019, Option 2 (BNE + SGW)",
                "vectors": str(vectors_path), "train_names": len(examples),
                "train_mentions_added": examples.stats.added if examples.stats else 0,
                "settings": asdict(self), "seed": seed}
        if split is not None:
            split.to_disk(output_dir / SPLIT_FILE)
            meta["split"] = split.describe()
        augment = [train_path] if (train_path and self.dev_augment_train) else []
        # augmented once: dev is scored after every epoch
        dev_dictionary = augmented_for_dev(dictionary, augment) if dev_path is not None else None
        started = time.monotonic()
        out_of_time = False
        epoch = start_epoch
        for epoch in range(start_epoch + 1, self.max_epochs + 1):
            module.train()
            rng = numpy.random.default_rng([seed, epoch])
            batches = data.epoch(rng, self.batch_size, self.steps_per_epoch)
            losses, parts = [], []
            from ..io.progress import progress_bar

            bar = progress_bar(batches, desc=f"BNE epoch {epoch}", unit="batch", leave=False)
            for batch in bar:
                loss, part = self.step(module, optimizer, data, batch, rng)
                losses.append(loss)
                parts.append(part)
                if len(losses) % 50 == 0:
                    bar.set_postfix(loss=f"{numpy.mean(losses[-50:]):.4f}")
                if self.max_minutes and time.monotonic() - started > self.max_minutes * 60:
                    out_of_time = True
                    break
            record = {"epoch": epoch, "loss": float(numpy.mean(losses)) if losses else 0.0,
                      "steps": len(losses)}
            for name in ("synonym", "concept", "context"):
                values = [p[name] for p in parts if name in p]
                if values:
                    record[f"loss_{name}"] = float(numpy.mean(values))
            if dev_path is not None:
                scores = dev_accuracy(model, dev_dictionary, dev_path, index_config=INDEX_CONFIG)
                record.update({"dev_acc@1": scores["acc@1"], "dev_acc@5": scores["acc@5"]})
                if scores["acc@1"] > best:
                    best, bad_epochs = scores["acc@1"], 0
                    meta.update({"epoch": epoch, "dev": {k: scores[k] for k in ("acc@1", "acc@5")}})
                    save_encoder(output_dir, model, model_config, index_config=INDEX_CONFIG,
                                 meta=meta)
                else:
                    bad_epochs += 1
            else:
                meta["epoch"] = epoch
                save_encoder(output_dir, model, model_config, index_config=INDEX_CONFIG, meta=meta)
            log.log(**record)
            save_checkpoint(output_dir, {"module": module.state_dict(),
                                         "optimizer": optimizer.state_dict(),
                                         **rng_states(), "epoch": epoch,
                                         "best": best, "bad_epochs": bad_epochs,
                                         "fingerprint": fingerprint})
            if dev_path is not None and bad_epochs >= self.patience:
                logger.info("BNE: no better dev acc@1 for %d epochs, stopping", bad_epochs)
                break
            if out_of_time:
                logger.info("BNE: time budget of %s minutes spent, stopping", self.max_minutes)
                break
        log.plot(title="BNE")
        if not (output_dir / "encoder.cfg").is_file():
            # Resumed after the last epoch, or no epoch ran: still leave a usable encoder.
            save_encoder(output_dir, model, model_config, index_config=INDEX_CONFIG, meta=meta)
        return meta

    def model_config(self, config: Config, examples: MentionPairs, dictionary,
                     vectors: WordVectors) -> Dict:
        """The [encoder] block with the sizes the data decide filled in."""
        model_config = dict(config["encoder"])
        alphabet = char_alphabet(examples.texts + list(dictionary.names))
        if not model_config.get("n_chars"):
            model_config["n_chars"] = len(alphabet) + 2
        if not model_config.get("word_dim"):
            model_config["word_dim"] = vectors.dim
        if not model_config.get("output_dim"):
            model_config["output_dim"] = vectors.dim
        if (model_config["output_dim"] != vectors.dim
                and (self.concept_weight or self.context_weight)):
            raise BioLinkError(Errors.E644.format(
                setting="concept_weight/context_weight", value=(self.concept_weight, self.context_weight),
                reason=(f"Option 2 targets are {vectors.dim}-d word-vector means, compared by "
                        f"dot product with the {model_config['output_dim']}-d output; set "
                        f"[encoder] output_dim = null (or {vectors.dim}), or both weights to 0")))
        return model_config

    def step(self, module, optimizer, data: "BneBatches", anchors: numpy.ndarray, rng):
        """One update; returns the weighted loss and each (unweighted) loss."""
        import torch

        synonyms = data.synonyms(anchors, rng)
        device = next(module.parameters()).device
        encoded = module(*to_tensors(data.features(anchors, synonyms), device))
        f_anchor, f_synonym = encoded[:len(anchors)], encoded[len(anchors):]
        labels = torch.from_numpy(data.concepts[anchors]).to(device)
        losses = {}
        if self.synonym_weight:
            losses["synonym"] = (self.synonym_weight,
                                 in_batch_logistic(f_anchor, f_synonym, labels))
        if self.concept_weight:
            g = torch.from_numpy(data.concept_vectors[data.concepts[anchors]]).to(device)
            losses["concept"] = (self.concept_weight, in_batch_logistic(f_anchor, g, labels))
        if self.context_weight:
            q = torch.from_numpy(data.context_vectors[anchors]).to(device)
            losses["context"] = (self.context_weight, in_batch_logistic(f_anchor, q, labels))
        loss = f_anchor.sum() * 0.0
        for weight, value in losses.values():
            loss = loss + weight * value
        optimizer.zero_grad()
        loss.backward()
        if self.grad_clip:
            torch.nn.utils.clip_grad_norm_(module.parameters(), self.grad_clip)
        optimizer.step()
        return float(loss.detach()), {k: float(v.detach()) for k, (_, v) in losses.items()}


def _is_set(value) -> bool:
    return value not in (None, "", "null")


def split_training_examples(dictionary, split: SynonymSplit) -> MentionPairs:
    """The split's TRAIN names with their concepts' indices in `dictionary`."""
    indices = split.indices(TRAIN)
    out = MentionPairs()
    for text, concept in zip(split.texts_of(TRAIN), split.concepts[indices].tolist()):
        index = dictionary.concept_index(split.concept_ids[concept])
        if index is None:
            raise BioLinkError(Errors.E627.format(
                path="[paths] split", reason=f"concept {split.concept_ids[concept]} is not in "
                                             "[paths] dictionary: pass the split made on it"))
        out.texts.append(text)
        out.concepts.append(index)
    return out


def training_examples(dictionary, train_path: Optional[Path]) -> MentionPairs:
    """Distinct (name, concept) pairs: dictionary names, then training mentions."""
    pairs = dictionary_name_pairs(dictionary)
    if train_path is not None:
        mentions = corpus_mention_pairs(dictionary, [train_path])
        pairs.texts += mentions.texts
        pairs.concepts += mentions.concepts
        pairs.stats = mentions.stats
    seen = set()
    out = MentionPairs(stats=pairs.stats)
    for text, concept in zip(pairs.texts, pairs.concepts):
        # The same words read the same: "Breast Cancer" and "breast cancer" are one name.
        key = (" ".join(text.lower().split()), concept)
        if key not in seen:
            seen.add(key)
            out.texts.append(text)
            out.concepts.append(concept)
    return out


class BneBatches:
    """Examples grouped by concept, their Option 2 targets and batch sampling."""

    def __init__(self, examples: MentionPairs, features):
        self.texts: List[str] = list(examples.texts)
        self.concepts = numpy.asarray(examples.concepts, dtype=numpy.int64)
        self.features_of = features
        self.context_vectors = features.context_vectors(self.texts)
        n_concepts = int(self.concepts.max(initial=-1)) + 1
        # members[indptr[c]:indptr[c+1]]: the examples of concept c.
        self.members = numpy.argsort(self.concepts, kind="stable")
        self.indptr = numpy.zeros(n_concepts + 1, dtype=numpy.int64)
        numpy.cumsum(numpy.bincount(self.concepts, minlength=n_concepts), out=self.indptr[1:])
        sums = numpy.zeros((n_concepts, self.context_vectors.shape[1]), dtype=numpy.float64)
        numpy.add.at(sums, self.concepts, self.context_vectors)
        counts = numpy.maximum(numpy.diff(self.indptr), 1)[:, None]
        self.concept_vectors = (sums / counts).astype(numpy.float32)

    def epoch(self, rng, batch_size: int, steps: int) -> List[numpy.ndarray]:
        """One epoch's batches of name indices in a random order; batches of one (no in-batch
        negative) are dropped, and at most `steps` batches are kept when `steps` is set."""
        order = rng.permutation(len(self.texts))
        batches = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
        # A last batch of one has no in-batch negative.
        batches = [b for b in batches if len(b) > 1]
        return batches[:steps] if steps else batches

    def synonyms(self, anchors: numpy.ndarray, rng) -> numpy.ndarray:
        """One random other name of each anchor's concept (the anchor itself when the
        concept has a single name)."""
        concepts = self.concepts[anchors]
        sizes = self.indptr[concepts + 1] - self.indptr[concepts]
        # Uniform over the first size-1 members; drawing the anchor itself means the
        # last member instead (never drawn otherwise): uniform over the others.
        offsets = (rng.random(len(anchors)) * numpy.maximum(sizes - 1, 1)).astype(numpy.int64)
        picked = self.members[self.indptr[concepts] + offsets]
        clash = (picked == anchors) & (sizes > 1)
        picked[clash] = self.members[self.indptr[concepts[clash]] + sizes[clash] - 1]
        return picked

    def features(self, anchors: numpy.ndarray, synonyms: numpy.ndarray):
        """Model inputs for a batch: anchors' names followed by their synonyms' names."""
        return self.features_of([self.texts[i] for i in anchors] + [self.texts[i] for i in synonyms])
