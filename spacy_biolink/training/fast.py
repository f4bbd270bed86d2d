"""Training the fast name encoder (encoders/fast.py) on CPU cores, in two phases.

1. Synonym alignment (always; SapBERT-style): batches of concepts with a few names each,
   every concept beside some of the concepts it is most easily confused with, and the
   in-batch marginal likelihood of a name's synonyms (softmax over the batch's cosines /
   temperature, -log of the mass on the same concept). The confusable concepts are mined
   from TF-IDF before the first epoch and from the current encoder before each later one,
   at the concept level (mean name vectors), which takes seconds at MEDIC's size.
   With no [paths] train this is the whole recipe: a dictionary is all it needs.
2. Corpus fine-tuning (with [paths] train), `corpus_objective`:
   "marginal": BioSyn's synonym marginalization: each training mention gets `topk`
       dictionary names, half from TF-IDF (fixed) and half from the encoder (refreshed each
       epoch); loss -log of the softmax mass on the candidates of its concept.
   "alignment": phase 1's loss over the concepts of the training mentions, with the
       mentions joining their concepts' names.
   "hybrid" (v3 only): "marginal" over the score the hybrid links with, the encoder's
       cosine + w * the hybrid TF-IDF's cosine, w learned beside the encoder.

Both phases stop at `max_minutes` of training if it comes first (the distil recipe's
one teacher pass is setup and not counted). With [paths] dev the
epoch with the best dev acc@1 is kept, else the last; OUTPUT/hybrid then holds the
encoder beside TF-IDF, its sparse weight the best of `hybrid_sparse_weights` on dev (or
`default_sparse_weight` without dev).
"""
import logging
import resource
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy

from ..encoders.saved import save_encoder
from ..errors import BioLinkError, Errors
from ..io.files import make_dir
from ..io.progress import progress_bar
from ..text.normalize import MentionNormalizer
from .data import corpus_mention_pairs, dictionary_name_pairs, read_dictionary
from .log import TrainingLog
from .run import require_path
from .samplers import concept_batches

logger = logging.getLogger("spacy_biolink")

FAISS_FLAT = {"@misc": "spacy-biolink.FaissIndex.v1", "kind": "flat"}
RECIPES = ("auto", "vocabulary", "corpus")
CORPUS_OBJECTIVES = ("marginal", "alignment")
ENCODE_CHUNK = 8192
# The fast encoder's hybrid: each part's 32 best names, HNSW at ef_search 32 (the DAN
# hybrid's 64 / 64 gave the same dev acc@1 on NCBI and BC5CDR-disease, with a slower
# search: BENCHMARKS.md, issue 32, session 18).
HYBRID_CANDIDATES = 32
HYBRID_EF_SEARCH = 32


class FastEncoderTrainer:
    RECIPES = RECIPES
    CORPUS_OBJECTIVES = CORPUS_OBJECTIVES

    def __init__(self, *, recipe: str, align_epochs: int, corpus_epochs: int,
                 max_minutes: float, concepts_per_batch: int, names_per_concept: int,
                 hard_concepts: int, n_nearest: int, temperature: float, learning_rate: float,
                 weight_decay: float, freeze_embeddings: bool, corpus_objective: str,
                 topk: int, mention_batch_size: int, hybrid_sparse_weights: Sequence[float],
                 default_sparse_weight: float, torch_threads: int):
        if recipe not in self.RECIPES:
            raise BioLinkError(Errors.E654.format(setting="recipe", value=recipe,
                                                  options=", ".join(self.RECIPES)))
        if corpus_objective not in self.CORPUS_OBJECTIVES:
            raise BioLinkError(Errors.E654.format(setting="corpus_objective",
                                                  value=corpus_objective,
                                                  options=", ".join(self.CORPUS_OBJECTIVES)))
        self.recipe = recipe
        self.align_epochs = align_epochs
        self.corpus_epochs = corpus_epochs
        self.max_minutes = max_minutes
        self.concepts_per_batch = concepts_per_batch
        self.names_per_concept = names_per_concept
        self.hard_concepts = hard_concepts
        self.n_nearest = n_nearest
        self.temperature = temperature
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.freeze_embeddings = freeze_embeddings
        self.corpus_objective = corpus_objective
        self.topk = topk
        self.mention_batch_size = mention_batch_size
        self.hybrid_sparse_weights = list(hybrid_sparse_weights)
        self.default_sparse_weight = default_sparse_weight
        self.torch_threads = torch_threads

    def settings(self) -> Dict:
        """The trainer's settings as a dict, for the saved meta."""
        return dict(vars(self))

    # The run -----------------------------------------------------------------

    def __call__(self, config, output_dir: Path, *, resume: bool = False) -> Dict:
        """Train the fast encoder of `config` into `output_dir` (see `Trainer`); `resume` is
        not supported (runs are minutes long) and starts over."""
        import torch

        from ..encoders.torch_wrapper import torch_module

        started = time.perf_counter()
        if self.torch_threads > 0:
            torch.set_num_threads(self.torch_threads)
        output_dir = Path(output_dir)
        make_dir(output_dir)
        seed = int(config.get("system", {}).get("seed", 0))
        paths = config.get("paths", {})
        has_train = paths.get("train") not in (None, "", "null")
        recipe = self.recipe if self.recipe != "auto" else ("corpus" if has_train else "vocabulary")
        uses_train = recipe == "corpus" or (recipe == "distil" and has_train)
        if recipe == "corpus" and not has_train:
            raise BioLinkError(Errors.E694.format(value=recipe, needs="[paths] train",
                                                  fix="Pass --paths.train TRAIN.PubTator or "
                                                      "set recipe = \"vocabulary\"."))
        dictionary = read_dictionary(require_path(config, "dictionary"))
        dev_path = require_path(config, "dev") if paths.get("dev") not in (None, "", "null") \
            else None
        train_path = require_path(config, "train") if uses_train else None

        model, model_config, backbone = build_for_training(config)
        module = torch_module(model)
        module.embedding.weight.requires_grad_(not self.freeze_embeddings)
        optimizer = _Optimizers(module, self.learning_rate, self.weight_decay,
                                self.freeze_embeddings)
        normalizer = MentionNormalizer()
        pairs = dictionary_name_pairs(dictionary)
        texts = [normalizer.name(t) for t in pairs.texts]
        concepts = numpy.asarray(pairs.concepts, dtype=numpy.int64)
        mentions, mention_concepts = ([], numpy.zeros(0, dtype=numpy.int64))
        if train_path is not None:
            mentions, mention_concepts = training_mentions(dictionary, train_path, normalizer)
        logger.info("fast encoder (%s recipe): %d names of %d concepts, %d training mentions, "
                    "backbone %s", recipe, len(texts), dictionary.n_concepts, len(mentions),
                    backbone)

        log = TrainingLog(output_dir, resume=False)
        meta = {"method": "fast encoder (ResCNN)", "recipe": recipe, "backbone": str(backbone),
                "settings": self.settings(), "seed": seed}
        deadline = started + 60.0 * self.max_minutes if self.max_minutes > 0 else float("inf")
        state = _Best(dev_path is not None)
        dev_dictionary = None
        if dev_path is not None:
            from .dev import augmented_for_dev

            dev_dictionary = augmented_for_dev(dictionary, [train_path] if train_path else [])

        def end_of_epoch(phase: str, epoch: int, losses: List[float]) -> None:
            record = {"phase": phase, "epoch": epoch,
                      "loss": float(numpy.mean(losses)) if losses else 0.0,
                      "minutes": (time.perf_counter() - started) / 60.0}
            if dev_path is not None:
                from .dev import dev_accuracy

                module.eval()
                encoder, index_config = self._dev_encoder(model, phase)
                scores = dev_accuracy(encoder, dev_dictionary, dev_path, index_config=index_config)
                record.update({"dev_acc@1": scores["acc@1"], "dev_acc@5": scores["acc@5"]})
            record.update(self._epoch_record(phase))
            log.log(**record)
            state.offer(module, record)

        rng = numpy.random.default_rng(seed)
        # The teacher's one pass is setup, not training: max_minutes leaves it out, so a
        # slow first pass (no cache yet) cannot use up the budget before any step.
        setup_seconds = self._before_alignment(config, output_dir, model, optimizer, texts,
                                               mentions, rng, deadline, end_of_epoch, meta)
        deadline += setup_seconds
        # Phase 1: synonym alignment over the dictionary's names.
        groups = _groups(concepts)
        seeds = numpy.asarray(sorted(groups), dtype=numpy.int64)
        neighbours = mine_tfidf_neighbours(texts, concepts, self.n_nearest)
        for epoch in range(1, self.align_epochs + 1):
            if time.perf_counter() > deadline:
                break
            if epoch > 1:
                neighbours = mine_dense_neighbours(model, texts, concepts, self.n_nearest)
            losses = self._align_epoch(model, optimizer, texts, groups, seeds, neighbours, rng,
                                       deadline, desc=f"align epoch {epoch}")
            if not losses:  # out of time before its first step: nothing new to score
                break
            end_of_epoch("align", epoch, losses)

        # Phase 2: the training mentions.
        if train_path is not None:
            if self.corpus_objective == "alignment":
                all_texts = texts + mentions
                all_concepts = numpy.concatenate([concepts, mention_concepts])
                groups = _groups(all_concepts)
                corpus_seeds = numpy.unique(mention_concepts)
            else:
                names = [normalizer.name(n) for n in dictionary.names]
                sparse = self._corpus_sparse(names, mentions)
            for epoch in range(1, self.corpus_epochs + 1):
                if time.perf_counter() > deadline:
                    break
                if self.corpus_objective == "alignment":
                    neighbours = mine_dense_neighbours(model, all_texts, all_concepts,
                                                       self.n_nearest)
                    losses = self._align_epoch(model, optimizer, all_texts, groups, corpus_seeds,
                                               neighbours, rng, deadline,
                                               desc=f"corpus epoch {epoch}")
                else:
                    losses = self._marginal_epoch(model, optimizer, dictionary, names, mentions,
                                                  mention_concepts, sparse, rng, deadline,
                                                  desc=f"corpus epoch {epoch}")
                if not losses:
                    break
                end_of_epoch("corpus", epoch, losses)

        if state.state is not None:
            module.load_state_dict(state.state)
        module.eval()
        meta.update({k: v for k, v in state.record.items() if k != "loss"})
        # train_minutes is what max_minutes bounds; the teacher's pass is reported apart.
        meta.update({"train_minutes": (time.perf_counter() - started - setup_seconds) / 60.0,
                     "setup_minutes": setup_seconds / 60.0,
                     "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0})
        save_encoder(output_dir, model, model_config, index_config=FAISS_FLAT, meta=meta)
        meta.update(self._save_hybrid(model, model_config, dictionary, dev_dictionary, dev_path,
                                      output_dir, state.record))
        save_encoder(output_dir, model, model_config, index_config=FAISS_FLAT, meta=meta)
        log.plot(title="fast encoder")
        return meta

    def _dev_encoder(self, model, phase: str) -> Tuple:
        """What an epoch's dev figure scores, and its index config: the encoder alone."""
        return model, FAISS_FLAT

    def _epoch_record(self, phase: str) -> Dict:
        """Extra columns for an epoch's log line (none here)."""
        return {}

    def _before_alignment(self, config, output_dir: Path, model, optimizer, texts: List[str],
                          mentions: List[str], rng: numpy.random.Generator, deadline: float,
                          end_of_epoch, meta: Dict) -> float:
        """A phase before the synonym alignment: none here (v2 distils a teacher). Returns
        the seconds it spent on setup that max_minutes does not count."""
        return 0.0

    # Phase 1 -------------------------------------------------------------------

    def _align_epoch(self, model, optimizer, texts: List[str], groups: Dict[int, numpy.ndarray],
                     seeds: numpy.ndarray, neighbours: Dict[int, List[int]],
                     rng: numpy.random.Generator, deadline: float, desc: str) -> List[float]:
        import torch

        from ..encoders.torch_wrapper import torch_module
        from .biosyn import encode_with_grad

        module = torch_module(model)
        module.train()
        losses = []
        batches = concept_batches(seeds, neighbours, self.concepts_per_batch,
                                  self.hard_concepts, rng)
        for batch in progress_bar(batches, desc=desc, unit="batch", leave=False, mininterval=5):
            if time.perf_counter() > deadline:
                break
            rows, labels = [], []
            for c in batch:
                members = groups[c]
                picks = rng.choice(len(members), self.names_per_concept,
                                   replace=len(members) < self.names_per_concept)
                rows.extend(members[picks].tolist())
                labels.extend([c] * self.names_per_concept)
            embeddings = torch.nn.functional.normalize(
                encode_with_grad(model, [texts[r] for r in rows]), dim=-1)
            loss = in_batch_marginal_nll(embeddings, torch.as_tensor(labels), self.temperature)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(float(loss.detach()))
        return losses

    # Phase 2 (marginal) --------------------------------------------------------

    def _corpus_sparse(self, names: List[str], mentions: List[str]) -> "SparseCandidates":
        """The marginal objective's fixed sparse candidates: BioSyn's char 1-2-gram TF-IDF,
        `topk // 2` per mention; its scores are not part of the loss here (v3's "hybrid"
        objective adds them)."""
        from ..encoders.tfidf import CharNgramTfidf
        from .biosyn import top_k_sparse

        tfidf = CharNgramTfidf("char", (1, 2)).fit(names)
        return SparseCandidates(top_k_sparse(tfidf.transform(mentions), tfidf.transform(names),
                                             self.topk // 2))

    def _marginal_epoch(self, model, optimizer, dictionary, names: List[str], mentions: List[str],
                        mention_concepts: numpy.ndarray, sparse: "SparseCandidates",
                        rng: numpy.random.Generator, deadline: float, desc: str) -> List[float]:
        import torch

        from ..encoders.torch_wrapper import torch_module
        from ..training.losses import marginal_nll
        from .biosyn import (candidate_positives, encode_with_grad, merge_candidates,
                             rowwise_scores, top_k_dense)

        module = torch_module(model)
        dense_top = top_k_dense(encode(model, mentions), encode(model, names), self.topk)
        candidates = merge_candidates(sparse.top, dense_top, self.topk)
        positives = candidate_positives(dictionary, mention_concepts, candidates)
        candidate_sparse = None
        if sparse.weight is not None:
            candidate_sparse = torch.from_numpy(
                rowwise_scores(sparse.mention_rows, sparse.name_rows, candidates))
        module.train()
        losses = []
        order = rng.permutation(len(mentions))
        batches = [order[i:i + self.mention_batch_size]
                   for i in range(0, len(order), self.mention_batch_size)]
        for batch in progress_bar(batches, desc=desc, unit="batch", leave=False, mininterval=5):
            if time.perf_counter() > deadline:
                break
            cands = candidates[batch]
            queries = torch.nn.functional.normalize(
                encode_with_grad(model, [mentions[i] for i in batch.tolist()]), dim=-1)
            keys = torch.nn.functional.normalize(
                encode_with_grad(model, [names[n] for n in cands.ravel().tolist()]), dim=-1)
            keys = keys.view(len(batch), cands.shape[1], -1)
            scores = torch.einsum("bd,bkd->bk", queries, keys)
            if candidate_sparse is not None:
                scores = scores + sparse.weight * candidate_sparse[torch.from_numpy(batch)]
            loss = marginal_nll(scores / self.temperature, torch.from_numpy(positives[batch]))
            optimizer.zero_grad()
            if candidate_sparse is not None:
                sparse.optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if candidate_sparse is not None:
                sparse.optimizer.step()
                with torch.no_grad():
                    sparse.weight.clamp_(min=0.0)
            losses.append(float(loss.detach()))
        return losses

    # The hybrid ----------------------------------------------------------------

    def _hybrid_weights_to_try(self, kept: Dict) -> List[float]:
        """The sparse weights OUTPUT/hybrid is chosen among on dev (`kept`: the log record
        of the epoch whose weights were kept)."""
        return list(self.hybrid_sparse_weights)

    def _save_hybrid(self, model, model_config: Dict, dictionary, dev_dictionary,
                     dev_path: Optional[Path], output_dir: Path, kept: Dict) -> Dict:
        from ..encoders.hybrid import hybrid_encoder
        from .dan import hybrid_index_config, save_hybrid

        tfidf = hybrid_tfidf()
        index_config = hybrid_index_config(model_config["width"], HYBRID_CANDIDATES,
                                           HYBRID_EF_SEARCH)
        scores = {}
        best = self.default_sparse_weight
        weights = self._hybrid_weights_to_try(kept)
        if dev_path is not None and weights:
            from .dev import dev_accuracy

            for weight in weights:
                hybrid = hybrid_encoder(model, tfidf, 1.0, weight)
                scores[weight] = dev_accuracy(hybrid, dev_dictionary, dev_path,
                                              index_config=index_config)
                logger.info("hybrid sparse weight %s: dev acc@1 %.4f", weight,
                            scores[weight]["acc@1"])
            best = max(scores, key=lambda w: (scores[w]["acc@1"], scores[w]["acc@5"]))
        save_hybrid(output_dir, model, model_config, tfidf, best, scores,
                    index_config=index_config, method="fast encoder (ResCNN) + TF-IDF")
        out = {"hybrid_sparse_weight": best}
        if scores:
            out.update({"hybrid_dev_acc@1": scores[best]["acc@1"],
                        "hybrid_dev_acc@5": scores[best]["acc@5"]})
        return out


def hybrid_tfidf():
    """A fresh, unfitted TF-IDF encoder as the saved hybrid holds it (training/dan.py's
    TFIDF block): what the hybrid objective trains beside and what the hybrid links with."""
    from spacy.util import registry

    from .dan import TFIDF

    return registry.resolve({"model": TFIDF})["model"]


class SparseCandidates:
    """The corpus epochs' TF-IDF side: each mention's fixed sparse candidates (`top`) and,
    for an objective that scores with them, the TF-IDF rows and the learned weight of the
    sparse cosine in the candidates' scores (with its optimizer); `weight` None: dense only."""

    def __init__(self, top: numpy.ndarray, mention_rows=None, name_rows=None, weight=None,
                 optimizer=None):
        self.top = top
        self.mention_rows = mention_rows
        self.name_rows = name_rows
        self.weight = weight
        self.optimizer = optimizer


class _Optimizers:
    """AdamW over the network, SparseAdam over the embedding table's touched rows (unless
    frozen), stepped together."""

    def __init__(self, module, learning_rate: float, weight_decay: float, freeze: bool):
        import torch

        dense = [p for name, p in module.named_parameters() if not name.startswith("embedding.")]
        self.optimizers = [torch.optim.AdamW(dense, lr=learning_rate, weight_decay=weight_decay)]
        if not freeze:
            self.optimizers.append(torch.optim.SparseAdam([module.embedding.weight],
                                                          lr=learning_rate))

    def zero_grad(self) -> None:
        for optimizer in self.optimizers:
            optimizer.zero_grad()

    def step(self) -> None:
        for optimizer in self.optimizers:
            optimizer.step()


class _Best:
    """The module state of the best epoch by dev acc@1 (or of the last, without dev)."""

    def __init__(self, has_dev: bool):
        self.has_dev = has_dev
        self.state = None
        self.record: Dict = {}

    def offer(self, module, record: Dict) -> None:
        if self.has_dev and self.record and record["dev_acc@1"] <= self.record["dev_acc@1"]:
            return
        self.state = {k: v.detach().clone() for k, v in module.state_dict().items()}
        self.record = dict(record)


def build_for_training(config) -> Tuple:
    """The [encoder] of a training config over [paths] backbone (or the installed MiniLM):
    (model with the backbone's tokenizer and reduced embedding table, its filled [model]
    block, the backbone directory)."""
    from spacy.util import registry

    from ..encoders.fast import backbone_vocab_size, init_from_backbone
    from ..encoders.transformer import resolve_backbone

    start = config.get("paths", {}).get("init_encoder")
    if start not in (None, "", "null"):
        # Continue from a trained fast encoder (e.g. the vocabulary recipe's output):
        # its own [model] block, weights and tokenizer; the [encoder] block is not used.
        from ..encoders.saved import load_encoder, read_encoder_config

        model, meta = load_encoder(start)
        if model.name != "fast_name_encoder":
            raise BioLinkError(Errors.E694.format(
                value="init_encoder", needs="a fast encoder directory",
                fix=f"{start} holds a {model.name}; pass a `train configs/fast_encoder.cfg` "
                    "output."))
        return model, read_encoder_config(start)[0], Path(meta.get("backbone", str(start)))
    backbone = resolve_backbone(config.get("paths", {}).get("backbone"))
    model_config = dict(config["encoder"])
    model_config["vocab_size"] = backbone_vocab_size(backbone)
    model = registry.resolve({"model": model_config})["model"]
    init_from_backbone(model, backbone)
    return model, model_config, backbone


def training_mentions(dictionary, train_path: Path, normalizer: MentionNormalizer
                      ) -> Tuple[List[str], numpy.ndarray]:
    """Distinct (normalized mention, concept) pairs of the training corpus, those with no
    letter or digit left out."""
    pairs = corpus_mention_pairs(dictionary, [train_path])
    kept = [(normalizer.mention(t), c) for t, c in zip(pairs.texts, pairs.concepts)]
    kept = list(dict.fromkeys((t, c) for t, c in kept if any(ch.isalnum() for ch in t)))
    return [t for t, _ in kept], numpy.array([c for _, c in kept], dtype=numpy.int64)


def encode(model, texts: List[str]) -> numpy.ndarray:
    """L2-normalised encodings of `texts`, without gradients, in chunks."""
    from ..encoders.transformer import embed

    parts = [embed(model, texts[i:i + ENCODE_CHUNK], normalize=True)
             for i in range(0, len(texts), ENCODE_CHUNK)]
    return numpy.concatenate(parts) if parts else numpy.zeros((0, 0), dtype=numpy.float32)


def in_batch_marginal_nll(embeddings, labels, temperature: float):
    """For each text, -log of the softmax mass (over the batch's other texts, cosine /
    temperature) on the texts of its own concept, averaged over the texts that have one.

    embeddings: (batch, dim) L2-normalised; labels: (batch,) concept ids.
    """
    import torch

    scores = embeddings @ embeddings.T / temperature
    eye = torch.eye(len(labels), dtype=torch.bool, device=scores.device)
    scores = scores.masked_fill(eye, float("-inf"))
    same = (labels.unsqueeze(0) == labels.unsqueeze(1)) & ~eye
    has_positive = same.any(dim=1)
    if not bool(has_positive.any()):
        return embeddings.sum() * 0.0
    log_all = torch.logsumexp(scores, dim=1)
    log_positive = torch.logsumexp(scores.masked_fill(~same, float("-inf")), dim=1)
    return (log_all - log_positive)[has_positive].mean()


def _groups(concepts: numpy.ndarray) -> Dict[int, numpy.ndarray]:
    order = numpy.argsort(concepts, kind="stable")
    bounds = numpy.flatnonzero(numpy.diff(concepts[order])) + 1
    return {int(concepts[g[0]]): g for g in numpy.split(order, bounds) if len(g)}


def _concept_means(rows, concepts: numpy.ndarray, n: int):
    """Mean row per concept id 0..n-1 (dense or sparse rows), L2-normalised."""
    from scipy import sparse

    member = sparse.csr_matrix((numpy.ones(len(concepts), numpy.float32),
                                (concepts, numpy.arange(len(concepts)))), shape=(n, len(concepts)))
    means = member @ rows
    if sparse.issparse(means):
        norms = numpy.sqrt(numpy.asarray(means.multiply(means).sum(axis=1))).ravel()
        norms[norms == 0] = 1.0
        return sparse.diags(1.0 / norms) @ means
    means = numpy.asarray(means, dtype=numpy.float32)
    norms = numpy.linalg.norm(means, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (means / norms).astype(numpy.float32)


def _neighbour_lists(ids: numpy.ndarray, present: numpy.ndarray) -> Dict[int, List[int]]:
    # Concept ids without names have zero mean rows: never offered as neighbours.
    known = set(present.tolist())
    return {c: [int(n) for n in ids[c].tolist() if n != c and n in known]
            for c in present.tolist()}


def mine_tfidf_neighbours(texts: List[str], concepts: numpy.ndarray, k: int
                          ) -> Dict[int, List[int]]:
    """Each concept's k most similar other concepts by the cosine of their mean char 3-gram
    TF-IDF rows (names folded as training folds them)."""
    from ..encoders.tfidf import CharNgramTfidf
    from ..index import SparseIndex

    tfidf = CharNgramTfidf("char_wb", (3, 3))
    rows = tfidf.fit(texts).transform(texts)
    n = int(concepts.max()) + 1 if len(concepts) else 0
    means = _concept_means(rows, concepts, n).tocsr().astype(numpy.float32)
    index = SparseIndex()
    index.build(means)
    present = numpy.unique(concepts)
    _, ids = index.search(means, k + 1)
    return _neighbour_lists(ids, present)


def mine_dense_neighbours(model, texts: List[str], concepts: numpy.ndarray, k: int
                          ) -> Dict[int, List[int]]:
    """Each concept's k most similar other concepts by the cosine of their mean encodings
    under the current model."""
    import faiss

    vectors = encode(model, texts)
    n = int(concepts.max()) + 1 if len(concepts) else 0
    means = numpy.ascontiguousarray(_concept_means(vectors, concepts, n))
    index = faiss.IndexFlatIP(means.shape[1])
    index.add(means)
    _, ids = index.search(means, k + 1)
    return _neighbour_lists(ids, numpy.unique(concepts))


class FastEncoderTrainerV2(FastEncoderTrainer):
    """v1 and a third recipe, "distil": the student first learns a teacher encoder's
    similarities (training/distil.py; [paths] teacher, default the MiniLM package; its
    vectors cached in [paths] teacher_cache, default OUTPUT/teacher_cache), then the
    alignment epochs, then with [paths] train the corpus epochs, as in v1."""

    RECIPES = RECIPES + ("distil",)

    def __init__(self, *, distil_epochs: int, distil_batch_size: int, distil_hard: int,
                 distil_temperature: float, **settings):
        super().__init__(**settings)
        self.distil_epochs = distil_epochs
        self.distil_batch_size = distil_batch_size
        self.distil_hard = distil_hard
        self.distil_temperature = distil_temperature

    def _before_alignment(self, config, output_dir: Path, model, optimizer, texts: List[str],
                          mentions: List[str], rng: numpy.random.Generator, deadline: float,
                          end_of_epoch, meta: Dict) -> float:
        if self.recipe != "distil" or self.distil_epochs < 1:
            return 0.0
        from .distil import resolve_teacher, teacher_targets

        paths = config.get("paths", {})
        teacher = resolve_teacher(paths.get("teacher"))
        cache = paths.get("teacher_cache")
        cache_dir = Path(cache) if cache not in (None, "", "null") else output_dir / "teacher_cache"
        names = list(dict.fromkeys(texts))
        known = set(names)
        queries = names + [m for m in dict.fromkeys(mentions) if m not in known]
        setup_started = time.perf_counter()
        vectors, teacher_nearest = teacher_targets(teacher, queries, len(names),
                                                   self.n_nearest, cache_dir)
        setup_seconds = time.perf_counter() - setup_started
        deadline += setup_seconds
        logger.info("distilling %s: %d names, %d texts", teacher, len(names), len(queries))
        meta.update({"teacher": str(teacher), "distil_texts": len(queries)})
        for epoch in range(1, self.distil_epochs + 1):
            if time.perf_counter() > deadline:
                break
            losses = self._distil_epoch(model, optimizer, queries, len(names), vectors,
                                        teacher_nearest, rng, deadline, epoch)
            if not losses:
                break
            end_of_epoch("distil", epoch, losses)
        return setup_seconds

    def _distil_epoch(self, model, optimizer, queries: List[str], n_names: int,
                      vectors: numpy.ndarray, teacher_nearest: numpy.ndarray,
                      rng: numpy.random.Generator, deadline: float, epoch: int) -> List[float]:
        import torch

        from ..encoders.torch_wrapper import torch_module
        from .biosyn import encode_with_grad
        from .distil import distil_batches, interleave, nearest_names, similarity_kl

        neighbours = teacher_nearest
        if epoch > 1:
            # The student's own confusions, beside the teacher's nearest names.
            student = encode(model, queries)
            mine = nearest_names(student, student[:n_names], teacher_nearest.shape[1],
                                 exclude_self=numpy.arange(len(queries)) < n_names)
            neighbours = interleave(teacher_nearest, mine)
        module = torch_module(model)
        module.train()
        losses = []
        batches = distil_batches(len(queries), neighbours, self.distil_batch_size,
                                 self.distil_hard, rng)
        for batch in progress_bar(batches, desc=f"distil epoch {epoch}", unit="batch",
                                  leave=False, mininterval=5):
            if time.perf_counter() > deadline:
                break
            student = torch.nn.functional.normalize(
                encode_with_grad(model, [queries[i] for i in batch]), dim=-1)
            loss = similarity_kl(student, torch.from_numpy(vectors[batch]),
                                 self.distil_temperature)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(float(loss.detach()))
        return losses


class FastEncoderTrainerV3(FastEncoderTrainerV2):
    """v2's recipes, and corpus_objective "hybrid": BioSyn's marginal likelihood over the
    score the hybrid links with, dense cosine + w * TF-IDF cosine (the hybrid's own TF-IDF:
    char_wb 3-grams fitted on the dictionary's names), w learned beside the encoder from
    `default_sparse_weight`. The TF-IDF half of each mention's candidates comes from that
    TF-IDF too, the dense half from the encoder each epoch, as in "marginal". The corpus
    epochs are scored on dev as the hybrid at the current w, and OUTPUT/hybrid's weight is
    chosen on dev among `hybrid_sparse_weights` and the kept epoch's learned w. The dense
    part learns what TF-IDF misses instead of everything (BioSyn trains its dense
    encoder so, beside its sparse weight)."""

    CORPUS_OBJECTIVES = CORPUS_OBJECTIVES + ("hybrid",)

    def __init__(self, *, hybrid_weight_learning_rate: float, **settings):
        super().__init__(**settings)
        self.hybrid_weight_learning_rate = hybrid_weight_learning_rate
        self._sparse: Optional[SparseCandidates] = None

    def settings(self) -> Dict:
        """The trainer's settings as a dict, for the saved meta (not its run state)."""
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    def __call__(self, config, output_dir: Path, *, resume: bool = False) -> Dict:
        """Train as v2 (see `FastEncoderTrainer.__call__`); a run's learned weight starts
        from `default_sparse_weight` each time."""
        self._sparse = None
        return super().__call__(config, output_dir, resume=resume)

    def _corpus_sparse(self, names: List[str], mentions: List[str]) -> SparseCandidates:
        if self.corpus_objective != "hybrid":
            return super()._corpus_sparse(names, mentions)
        import torch

        from .biosyn import top_k_sparse

        tfidf = hybrid_tfidf()
        tfidf.initialize(X=names)
        mention_rows, name_rows = tfidf.predict(mentions), tfidf.predict(names)
        weight = torch.nn.Parameter(torch.tensor(float(self.default_sparse_weight)))
        optimizer = torch.optim.Adam([weight], lr=self.hybrid_weight_learning_rate)
        self._sparse = SparseCandidates(top_k_sparse(mention_rows, name_rows, self.topk // 2),
                                        mention_rows, name_rows, weight, optimizer)
        return self._sparse

    def _learned_weight(self) -> Optional[float]:
        return None if self._sparse is None else float(self._sparse.weight.detach())

    def _dev_encoder(self, model, phase: str) -> Tuple:
        weight = self._learned_weight()
        if phase != "corpus" or weight is None:
            return super()._dev_encoder(model, phase)
        from ..encoders.hybrid import hybrid_encoder
        from .dan import hybrid_index_config

        width = encode(model, ["a"]).shape[1]
        return (hybrid_encoder(model, hybrid_tfidf(), 1.0, weight),
                hybrid_index_config(width, HYBRID_CANDIDATES, HYBRID_EF_SEARCH))

    def _epoch_record(self, phase: str) -> Dict:
        weight = self._learned_weight()
        return {} if phase != "corpus" or weight is None else {"sparse_weight": weight}

    def _hybrid_weights_to_try(self, kept: Dict) -> List[float]:
        weights = super()._hybrid_weights_to_try(kept)
        learned = kept.get("sparse_weight")
        if learned is not None and round(learned, 4) not in weights:
            weights.append(round(learned, 4))
        return weights
