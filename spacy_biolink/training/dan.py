"""Training CCA+DAN (Fivez et al., 2021) on a dictionary's synonym sets.

Data: the dictionary's names are split by evaluation/synonym_retrieval.make_split (a
function of [training] split_seed and the split settings), or the split file in
[paths] split. Only the TRAIN names are trained on (plus, with [paths] train, the corpus
mentions of training concepts that are not a held-out name); zero-shot concepts and test
names never are. The validation names give the stopping criterion. The split is saved
as OUTPUT/split.json, and `eval-synonyms OUTPUT` evaluates on that same split. For a
linker, set zero_shot_concepts = 0 and test_rounds = 0: all names but the validation
ones are trained on.

Per epoch:
1. encode all training names; draw one distance-weighted negative per name (samplers.py);
2. for each batch of anchor names (names with a training synonym): a random synonym
   as positive, L_syn = cosine triplet loss; for the batch's concepts, the mean encoding
   of a random `synonym_dropout` share of their names vs the CCA-projected prototype,
   L_proto = cosine distance; Adam on L_syn + L_proto;
3. validation mAP (validation names ranking the training names) every `eval_frequency`
   steps (0: at the end of each epoch), and once after the last step; the weights of the
   best validation are kept (a tie counts as better), and training stops after `patience`
   validations without a better one. eval_frequency = 0, patience = 1 (the defaults) is
   the paper's rule: stop at the first drop, keep the epoch before it.
Each validation is a line of OUTPUT/training.jsonl ("epoch" is fractional inside an
epoch, "step" counts optimizer steps; the losses are averaged since the last validation),
plotted in OUTPUT/training.png.
Before training, CCA is fitted between the training names' mean word vectors and their
concepts' prototypes (mean name vectors) and frozen in the network (use_cca = false: the
plain DAN). With [paths] dev, the dev acc@1 of the kept encoder's linker goes to the meta,
and a hybrid DAN + TF-IDF encoder is saved in OUTPUT/hybrid with its weight fitted on dev.
"""
import copy
import json
import logging
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Dict, Iterator, Optional, Sequence

import numpy
from ..io.files import make_dir
from ..io.progress import progress_bar

from ..encoders.saved import save_encoder
from ..errors import BioLinkError, Errors
from ..evaluation.synonym_retrieval import (SPLIT_FILE, TRAIN, VALIDATION, SynonymSplit,
                                            concept_prototypes, make_split, ranking_metrics)
from ..text.normalize import MentionNormalizer
from ..encoders.wordvectors import WordVectors
from .checkpoints import load_checkpoint, restore_rng_states, rng_states, save_checkpoint
from .data import corpus_mention_pairs, read_dictionary
from .log import TrainingLog
from .run import require_path

logger = logging.getLogger("spacy_biolink")

FAISS_FLAT = {"@misc": "spacy-biolink.FaissIndex.v1", "kind": "flat"}
# The hybrid's index: HNSW and TF-IDF candidates rescored by the full sum. On NCBI test it
# ranks exactly as the exhaustive SparseIndex, ~6x faster (BENCHMARKS.md).
HYBRID_CANDIDATES = 64
TFIDF = {"@architectures": "spacy-biolink.TfidfEncoder.v1", "analyzer": "char_wb",
         "ngram_range": [3, 3], "lowercase": True, "sublinear_tf": False, "min_df": 1}
# "batch": the hinge over batch-mean distances (the authors' code); "triplet": the hinge
# per triplet (the paper's Equation 3)
TRIPLET_HINGES = ("batch", "triplet")
HYBRID_DIR = "hybrid"


class DanTrainer:
    def __init__(self, *, max_epochs: int = 50, batch_size: int = 64,
                 learning_rate: float = 1e-3, margin: float = 0.1, n_nearest: int = 200,
                 synonym_dropout: float = 0.5, max_prototype_names: int = 32,
                 use_cca: bool = True, cca_regularization: float = 1e-3,
                 eval_frequency: int = 0, patience: int = 1, triplet_hinge: str = "batch",
                 split_seed: int = 1, zero_shot_concepts: float = 1000, test_rounds: int = 1,
                 validation_rounds: int = 1, use_corpus: bool = True,
                 hybrid_sparse_weights: Sequence[float] = (0.5, 1.0, 2.0, 4.0),
                 torch_threads: int = 0):
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.margin = margin
        self.n_nearest = n_nearest
        self.synonym_dropout = synonym_dropout
        self.max_prototype_names = max_prototype_names
        self.use_cca = use_cca
        self.cca_regularization = cca_regularization
        self.eval_frequency = eval_frequency
        self.patience = patience
        self.triplet_hinge = triplet_hinge
        self.split_seed = split_seed
        self.zero_shot_concepts = zero_shot_concepts
        self.test_rounds = test_rounds
        self.validation_rounds = validation_rounds
        self.use_corpus = use_corpus
        self.hybrid_sparse_weights = list(hybrid_sparse_weights)
        self.torch_threads = torch_threads

    def settings(self) -> Dict:
        """The trainer's settings as a dict, for the saved meta and checkpoints."""
        return dict(vars(self))

    # Data ---------------------------------------------------------------------

    def split(self, config, dictionary) -> SynonymSplit:
        """The synonym split to train on: [paths] split when set, else one made from the dictionary
        with the trainer's seed and round settings."""
        split_path = config.get("paths", {}).get("split")
        if split_path not in (None, "", "null"):
            return SynonymSplit.from_disk(require_path(config, "split"))
        return make_split(dictionary, seed=self.split_seed,
                          zero_shot_concepts=self.zero_shot_concepts,
                          test_rounds=self.test_rounds, validation_rounds=self.validation_rounds)

    def training_items(self, config, dictionary, split: SynonymSplit):
        """(texts, concepts) to train on: the TRAIN names, then corpus mentions of
        training concepts whose folded text is not a held-out name."""
        texts = split.texts_of(TRAIN)
        concepts = split.concepts[split.indices(TRAIN)].tolist()
        train_path = config.get("paths", {}).get("train")
        if not self.use_corpus or train_path in (None, "", "null"):
            return texts, numpy.array(concepts, numpy.int64), 0
        split_concept = {cid: i for i, cid in enumerate(split.concept_ids)}
        trained = set(concepts)
        held_out = {split.texts[i] for i in numpy.flatnonzero(split.roles != TRAIN)}
        known = set(zip(texts, concepts))
        fold = MentionNormalizer().name
        pairs = corpus_mention_pairs(dictionary, [require_path(config, "train")])
        added = 0
        for text, c in zip(pairs.texts, pairs.concepts):
            text = " ".join(fold(text).split())
            concept = split_concept.get(dictionary.primary_id(c))
            if not text or concept not in trained or text in held_out or (text, concept) in known:
                continue
            known.add((text, concept))
            texts.append(text)
            concepts.append(concept)
            added += 1
        return texts, numpy.array(concepts, numpy.int64), added

    # Training -----------------------------------------------------------------

    def __call__(self, config, output_dir: Path, *, resume: bool = False) -> Dict:
        """Train a DAN encoder (see `Trainer`) on a synonym split of the dictionary, with CCA
        projections fitted first; the split is saved in `output_dir` beside the encoder.
        torch_threads > 0 sets torch's intra-op threads while training (0: torch's own)."""
        import torch

        previous = torch.get_num_threads()
        if self.torch_threads > 0:
            # A batch of 64 through a 100x1000 net is a few milliseconds of work: a second
            # thread saves little, and on a busy machine each op waits for both threads
            # to be scheduled (BENCHMARKS.md, "CCA+DAN under load").
            torch.set_num_threads(self.torch_threads)
        try:
            return self._train(config, output_dir, resume=resume)
        finally:
            torch.set_num_threads(previous)

    def _train(self, config, output_dir: Path, *, resume: bool) -> Dict:
        import torch
        from spacy.util import registry

        from ..encoders.dan import dan_network, fit_cca, set_word_vectors

        self._check_settings()
        output_dir = Path(output_dir)
        make_dir(output_dir)
        seed = int(config.get("system", {}).get("seed", 0))
        dictionary = read_dictionary(require_path(config, "dictionary"))
        vectors = WordVectors.from_disk(require_path(config, "vectors"))
        split = self.split(config, dictionary)
        split.to_disk(output_dir / SPLIT_FILE)
        texts, concepts, corpus_added = self.training_items(config, dictionary, split)
        if len(numpy.unique(concepts)) < 2:
            raise BioLinkError(Errors.E630.format(n=len(numpy.unique(concepts))))

        model_config = dict(config["encoder"])
        model_config["width"] = vectors.dim
        model = registry.resolve({"model": model_config})["model"]
        set_word_vectors(model, vectors)
        network = dan_network(model)

        inputs = vectors.mean_many(texts)
        prototypes = concept_prototypes(inputs, concepts)
        if self.use_cca:
            network.set_cca(*fit_cca(inputs, prototypes, regularization=self.cca_regularization))
        members = _members(concepts)
        anchors = numpy.array([i for i, c in enumerate(concepts.tolist())
                               if len(members[c]) > 1], numpy.int64)
        steps_per_epoch = -(-len(anchors) // self.batch_size)
        validation = split.indices(VALIDATION)
        validation_inputs = vectors.mean_many([split.texts[i] for i in validation])
        validation_concepts = split.concepts[validation]

        def validation_map() -> Optional[float]:
            if not len(validation):
                return None
            return ranking_metrics(_encode(model, validation_inputs), validation_concepts,
                                   _encode(model, inputs), concepts)["mAP"]

        optimizer = torch.optim.Adam(network.parameters(), lr=self.learning_rate)
        log = TrainingLog(output_dir, resume=resume)
        progress = _Progress()
        start_epoch = 0
        checkpoint = load_checkpoint(output_dir) if resume else None
        if checkpoint is not None:
            network.load_state_dict(checkpoint["network"])
            optimizer.load_state_dict(checkpoint["optimizer"])
            restore_rng_states(checkpoint)
            progress = _Progress.from_checkpoint(checkpoint, steps_per_epoch)
            start_epoch = int(checkpoint["epoch"])
            _drop_records_after(log, progress.step)
            logger.info("resuming CCA+DAN after epoch %d (step %d)", start_epoch, progress.step)
        input_tensor = torch.as_tensor(inputs)
        concept_tensor = torch.as_tensor(concepts)
        for epoch in range(start_epoch, self.max_epochs):
            if progress.stopped:
                break
            rng = numpy.random.default_rng([seed, epoch])
            for losses in self._epoch(network, optimizer, input_tensor, concept_tensor,
                                      prototypes, members, anchors, rng, epoch):
                progress.add(losses)
                if self.eval_frequency and progress.step % self.eval_frequency == 0:
                    self._validate(progress, validation_map, network, log, steps_per_epoch)
                    if progress.stopped:
                        break
            # With eval_frequency 0 every epoch ends with a validation; otherwise the last does.
            due = not self.eval_frequency or epoch + 1 == self.max_epochs
            if progress.pending and not progress.stopped and due:
                self._validate(progress, validation_map, network, log, steps_per_epoch)
            save_checkpoint(output_dir, {"network": network.state_dict(),
                                         "optimizer": optimizer.state_dict(),
                                         **rng_states(),
                                         "epoch": epoch + 1, "progress": progress.to_state()})
        if progress.best_state is not None:
            network.load_state_dict(progress.best_state)
        _plot(log, title="CCA+DAN" if self.use_cca else "DAN")

        meta = {"method": "CCA+DAN" if self.use_cca else "DAN", "settings": self.settings(),
                "seed": seed, "vectors": str(config["paths"]["vectors"]),
                "split": split.describe(), "training_names": len(texts),
                "corpus_mentions_added": corpus_added, "anchors": int(len(anchors)),
                "steps_per_epoch": steps_per_epoch, "steps_trained": progress.step,
                "epochs_trained": _epochs(progress.step, steps_per_epoch),
                "validations": progress.validations, "stopped_early": progress.stopped,
                "validation_mAP": progress.best_score,
                "best_step": progress.best_step if progress.best_state is not None else None,
                "best_epoch": (_epochs(progress.best_step, steps_per_epoch)
                               if progress.best_state is not None else None)}
        dev_path = config.get("paths", {}).get("dev")
        if dev_path not in (None, "", "null"):
            meta.update(self._dev_scores(config, model, model_config, dictionary, output_dir))
        save_encoder(output_dir, model, model_config, index_config=FAISS_FLAT, meta=meta)
        return meta

    def _check_settings(self) -> None:
        if self.triplet_hinge not in TRIPLET_HINGES:
            raise BioLinkError(Errors.E644.format(
                setting="triplet_hinge", value=self.triplet_hinge,
                reason=f"use one of {', '.join(repr(h) for h in TRIPLET_HINGES)}"))
        if self.eval_frequency < 0:
            raise BioLinkError(Errors.E644.format(
                setting="eval_frequency", value=self.eval_frequency,
                reason="give a number of training steps, or 0 to validate once per epoch"))
        if self.torch_threads < 0:
            raise BioLinkError(Errors.E644.format(
                setting="torch_threads", value=self.torch_threads,
                reason="give a number of threads, or 0 for torch's default"))
        if self.patience < 1:
            raise BioLinkError(Errors.E644.format(
                setting="patience", value=self.patience,
                reason="give the number of validations without a better mAP before stopping "
                       "(1 = the paper's stop at the first drop)"))

    def _validate(self, progress: "_Progress", validation_map, network, log: TrainingLog,
                  steps_per_epoch: int) -> None:
        """Log the losses since the last validation and the validation mAP; keep the best
        weights (a tie counts as better: the paper stops only on a drop) and stop after
        `patience` validations without a better one."""
        record = {"epoch": _epochs(progress.step, steps_per_epoch), "step": progress.step,
                  **progress.mean_losses()}
        score = validation_map()
        if score is not None:
            record["validation_mAP"] = score
            if progress.best_score is None or score >= progress.best_score:
                progress.best_score, progress.best_step, progress.bad = score, progress.step, 0
                progress.best_state = copy.deepcopy(network.state_dict())
                record["best"] = True
            else:
                progress.bad += 1
                if progress.bad >= self.patience:
                    progress.stopped = True
                    record["stopped"] = True
                    logger.info("CCA+DAN: no better validation mAP in %d validation(s), stopping; "
                                "keeping step %d (mAP %.4f)", progress.bad, progress.best_step,
                                progress.best_score)
        progress.validations += 1
        log.log(**record)

    def _epoch(self, network, optimizer, inputs, concepts, prototypes: numpy.ndarray,
               members: Dict[int, numpy.ndarray], anchors: numpy.ndarray,
               rng: numpy.random.Generator, epoch: int) -> Iterator[Dict[str, float]]:
        """One pass over the anchors; yields the losses after each optimizer step, so the
        caller can validate between steps."""
        import torch

        from .losses import prototype_cosine_distance

        triplet_loss = _triplet_loss(self.triplet_hinge)

        negatives = self._negatives(network, inputs, concepts, rng)
        with torch.no_grad():
            targets_all = network.project_concepts(torch.as_tensor(prototypes))
        network.train()
        order = rng.permutation(anchors)
        concept_array = concepts.numpy()
        for start in progress_bar(range(0, len(order), self.batch_size), desc=f"CCA+DAN epoch {epoch + 1}",
                          unit="batch", leave=False, disable=len(order) < 20 * self.batch_size):
            batch = order[start:start + self.batch_size]
            positives = numpy.array([_other_member(members[c], a, rng)
                                     for a, c in zip(batch, concept_array[batch])], numpy.int64)
            triplet_rows = torch.as_tensor(numpy.concatenate([batch, positives, negatives[batch]]))
            encoded_triplets = network(inputs[triplet_rows])
            a, p, n = encoded_triplets.split(len(batch))
            loss_syn = triplet_loss(a, p, n, self.margin)
            proto_rows, groups, group_rows = [], [], []
            for g, c in enumerate(numpy.unique(concept_array[batch]).tolist()):
                names = members[c]
                keep = names[rng.random(len(names)) >= self.synonym_dropout]
                if not len(keep):
                    keep = names[rng.integers(len(names)):][:1]
                keep = keep[:self.max_prototype_names]
                proto_rows.append(keep)
                groups.append(numpy.full(len(keep), g, numpy.int64))
                group_rows.append(keep[0])
            proto_rows = torch.as_tensor(numpy.concatenate(proto_rows))
            loss_proto = prototype_cosine_distance(
                network(inputs[proto_rows]), torch.as_tensor(numpy.concatenate(groups)),
                targets_all[torch.as_tensor(numpy.array(group_rows))])
            loss = loss_syn + loss_proto
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            yield {"loss": loss.item(), "loss_syn": loss_syn.item(),
                   "loss_proto": loss_proto.item()}

    def _negatives(self, network, inputs, concepts, rng: numpy.random.Generator) -> numpy.ndarray:
        """One distance-weighted negative per training name, from its current encoding."""
        import torch

        from .samplers import distance_weighted_negatives

        network.eval()
        with torch.no_grad():
            encoded = torch.nn.functional.normalize(network(inputs), dim=-1).numpy()
        network.train()
        return distance_weighted_negatives(encoded, concepts.numpy(), n_nearest=self.n_nearest,
                                           rng=rng)

    # Dev ------------------------------------------------------------------------

    def _dev_scores(self, config, model, model_config: Dict, dictionary, output_dir: Path) -> Dict:
        """Dev acc of the DAN linker, and the hybrid DAN + TF-IDF saved in OUTPUT/hybrid
        with the sparse weight that scores best on dev (training names augment both)."""
        from spacy.util import registry

        from ..encoders.hybrid import hybrid_encoder
        from .dev import augmented_for_dev, dev_accuracy

        dev = require_path(config, "dev")
        train = config.get("paths", {}).get("train")
        augment = [require_path(config, "train")] if train not in (None, "", "null") else []
        # once for the dense linker and every hybrid weight
        dictionary = augmented_for_dev(dictionary, augment)
        dense = dev_accuracy(model, dictionary, dev, index_config=FAISS_FLAT)
        out = {"dev_acc@1": dense["acc@1"], "dev_acc@5": dense["acc@5"]}
        if not self.hybrid_sparse_weights:
            return out
        tfidf = registry.resolve({"model": TFIDF})["model"]
        index_config = hybrid_index_config(model_config["width"])
        scores = {}
        for weight in self.hybrid_sparse_weights:
            hybrid = hybrid_encoder(model, tfidf, 1.0, weight)
            scores[weight] = dev_accuracy(hybrid, dictionary, dev, index_config=index_config)
            logger.info("hybrid sparse weight %s: dev acc@1 %.4f", weight, scores[weight]["acc@1"])
        best = max(scores, key=lambda w: (scores[w]["acc@1"], scores[w]["acc@5"]))
        save_hybrid(output_dir, model, model_config, tfidf, best, scores,
                    index_config=index_config, method="CCA+DAN + TF-IDF")
        out.update({"hybrid_sparse_weight": best, "hybrid_dev_acc@1": scores[best]["acc@1"],
                    "hybrid_dev_acc@5": scores[best]["acc@5"]})
        return out


def hybrid_index_config(dense_width: int, candidates: int = HYBRID_CANDIDATES,
                        ef_search: Optional[int] = None) -> Dict:
    """The index config a trained DAN encoder is used with: a HybridIndex over an HNSW FAISS
    index of `dense_width` and a sparse index, each part proposing its `candidates` best
    names (the HNSW search's ef_search written too where given)."""
    # The TF-IDF half searches as the TF-IDF linker does: exact below its min_names, word
    # candidates above, so a hybrid over MeSH or UMLS does not score every name.
    from ..linker.component import DEFAULT_INDEX_CONFIG

    dense = {"@misc": "spacy-biolink.FaissIndex.v1", "kind": "hnsw"}
    if ef_search is not None:
        dense["ef_search"] = ef_search
    return {"@misc": "spacy-biolink.HybridIndex.v1", "dense_width": dense_width,
            "candidates": candidates, "dense": dense, "sparse": dict(DEFAULT_INDEX_CONFIG)}


def _members(concepts: numpy.ndarray) -> Dict[int, numpy.ndarray]:
    order = numpy.argsort(concepts, kind="stable")
    bounds = numpy.flatnonzero(numpy.diff(concepts[order])) + 1
    return {int(concepts[g[0]]): g for g in numpy.split(order, bounds) if len(g)}


def _other_member(names: numpy.ndarray, anchor: int, rng: numpy.random.Generator) -> int:
    pick = int(names[rng.integers(len(names) - 1)])
    # Drawing from the names minus the anchor: the anchor's slot takes the last name.
    return int(names[-1]) if pick == anchor else pick


@dataclass
class _Progress:
    """Where training stands, saved in the checkpoint: the step count, the losses since
    the last validation, and the best validation so far with its weights."""
    step: int = 0
    pending: int = 0
    totals: Dict[str, float] = field(default_factory=dict)
    validations: int = 0
    best_score: Optional[float] = None
    best_step: int = 0
    best_state: Optional[Dict] = None
    bad: int = 0
    stopped: bool = False

    def add(self, losses: Dict[str, float]) -> None:
        self.step += 1
        self.pending += 1
        for key, value in losses.items():
            self.totals[key] = self.totals.get(key, 0.0) + value

    def mean_losses(self) -> Dict[str, float]:
        means = {key: value / max(self.pending, 1) for key, value in self.totals.items()}
        self.pending, self.totals = 0, {}
        return means

    def to_state(self) -> Dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_checkpoint(cls, checkpoint: Dict, steps_per_epoch: int) -> "_Progress":
        if "progress" in checkpoint:
            return cls(**checkpoint["progress"])
        # Written before eval_frequency / patience: once per epoch, the last score the best.
        history = list(checkpoint.get("history", []))
        stopped = bool(checkpoint.get("stopped"))
        epochs = int(checkpoint["epoch"]) - (1 if stopped else 0)
        best = checkpoint["network"] if stopped else checkpoint.get("previous")
        return cls(step=int(checkpoint["epoch"]) * steps_per_epoch, validations=len(history),
                   best_score=history[-1] if history else None,
                   best_step=epochs * steps_per_epoch, best_state=best or None,
                   stopped=stopped)


def _encode(model, inputs: numpy.ndarray) -> numpy.ndarray:
    """model.predict(texts), from the texts' mean word vectors (computed once)."""
    from ..encoders.dan import l2_normalize

    rows = numpy.asarray(model.layers[0].predict(inputs), dtype=numpy.float32)
    return l2_normalize(rows) if model.attrs["normalize"] else rows


def _epochs(step: int, steps_per_epoch: int):
    """Training progress in epochs: 1 at the end of the first epoch, 0.25 a quarter in."""
    epochs = step / max(steps_per_epoch, 1)
    return int(epochs) if epochs == int(epochs) else round(epochs, 4)


def _drop_records_after(log: TrainingLog, step: int) -> None:
    """On --resume: forget the log lines of steps after the checkpoint (they are redone)."""
    kept = [r for r in log.records if r.get("step", 0) <= step]
    if len(kept) != len(log.records):
        log.records[:] = kept
        log.path.write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf8")


def _plot(log: TrainingLog, title: str) -> None:
    """training.png against (fractional) epochs; the step count is no curve of its own."""
    records = log.records
    log.records = [{k: v for k, v in r.items() if k != "step"} for r in records]
    try:
        log.plot(title=title)
    finally:
        log.records = records


def _triplet_loss(hinge: str):
    from . import losses

    return losses.cosine_triplet_batch_mean if hinge == "batch" else losses.cosine_triplet_per_triplet


def save_hybrid(output_dir: Path, model, model_config: Dict, tfidf, sparse_weight: float,
                scores: Dict, *, index_config: Dict, method: str) -> None:
    """Save [model | sparse_weight * TF-IDF] as OUTPUT/hybrid, a directory init-linker
    --encoder takes; `scores` (weight -> dev figures) goes into its meta."""
    from ..encoders.hybrid import hybrid_encoder

    hybrid = hybrid_encoder(model, tfidf, 1.0, sparse_weight)
    hybrid_config = {"@architectures": "spacy-biolink.HybridEncoder.v1",
                     "dense_weight": 1.0, "sparse_weight": sparse_weight,
                     "dense": model_config, "sparse": TFIDF}
    save_encoder(output_dir / HYBRID_DIR, hybrid, hybrid_config, index_config=index_config,
                 meta={"method": method, "sparse_weight": sparse_weight,
                       "dev_acc@1_by_weight": {str(w): s["acc@1"] for w, s in scores.items()}})
