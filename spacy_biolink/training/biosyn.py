"""BioSyn (Sung et al., ACL 2020): a transformer trained by synonym marginalization.

Each training mention gets `topk` dictionary names as candidates: half from the TF-IDF
(char 1-2-grams, fixed for the whole run) and half from the dense encoder, refreshed at
the start of every epoch by re-encoding the dictionary. The score of a candidate is
S_dense + lambda * S_sparse with lambda one trained scalar (own learning rate), and the
loss is -log of the summed softmax probability of the candidates naming the mention's
concept. The epoch with the best dev acc@1 (never test) is the one saved.
"""
import logging
from pathlib import Path
from typing import Dict, List, Tuple

import numpy
from scipy import sparse
from ..io.files import make_dir
from ..io.progress import progress_bar

from ..kb.dictionary import ConceptDictionary
from ..encoders.saved import META_FILE, save_encoder
from ..text.normalize import MentionNormalizer
from .checkpoints import load_checkpoint, restore_rng_states, rng_states, save_checkpoint
from .data import corpus_mention_pairs, read_dictionary
from .dev import augmented_for_dev, dev_accuracy
from .log import TrainingLog
from .run import require_path

logger = logging.getLogger("spacy_biolink")

SPARSE_INDEX = {"@misc": "spacy-biolink.SparseIndex.v1", "chunk_size": 256}
# Names encoded per call while refreshing the dense candidates (one tqdm step each).
ENCODE_CHUNK = 4096
# Mentions scored against the whole dictionary at once (a float32 block of
# SCORE_CHUNK x n_names).
SCORE_CHUNK = 256


class BioSynTrainer:
    def __init__(self, *, max_epochs: int, batch_size: int, learning_rate: float,
                 sparse_learning_rate: float, weight_decay: float, topk: int,
                 initial_sparse_weight: float, max_train_mentions: int,
                 encode_batch_size: int, dev_augment_train: bool, deduplicate: bool = False):
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.sparse_learning_rate = sparse_learning_rate
        self.weight_decay = weight_decay
        self.topk = topk
        self.initial_sparse_weight = initial_sparse_weight
        self.max_train_mentions = max_train_mentions
        self.encode_batch_size = encode_batch_size
        self.dev_augment_train = dev_augment_train
        self.deduplicate = deduplicate

    def settings(self) -> Dict:
        """The trainer's settings as a dict, for the saved meta and checkpoints."""
        return dict(vars(self))

    def __call__(self, config, output_dir: Path, *, resume: bool = False) -> Dict:
        """Train a BioSyn encoder (see `Trainer`): dense and sparse scores of the top-k candidates,
        marginal likelihood loss, dev acc@1 each epoch; `resume` continues from the last
        checkpoint."""
        import torch

        from ..encoders.transformer import build_for_training, sparse_weight
        from ..encoders.torch_wrapper import torch_module
        from .losses import marginal_nll

        output_dir = Path(output_dir)
        make_dir(output_dir)
        seed = int(config.get("system", {}).get("seed", 0))
        dictionary = read_dictionary(require_path(config, "dictionary"))
        train_path = require_path(config, "train")
        dev_path = require_path(config, "dev")

        model, model_config, backbone = build_for_training(config)
        model.attrs["batch_size"] = self.encode_batch_size
        module = torch_module(model)
        device = training_device()
        module.to(device)
        with torch.no_grad():
            module.sparse_weight.fill_(self.initial_sparse_weight)
        optimizer = torch.optim.AdamW([
            {"params": [p for n, p in module.named_parameters() if n != "sparse_weight"],
             "lr": self.learning_rate, "weight_decay": self.weight_decay},
            {"params": [module.sparse_weight], "lr": self.sparse_learning_rate,
             "weight_decay": 0.0}])

        normalizer = MentionNormalizer()
        names = [normalizer.name(name) for name in dictionary.names]
        mentions, concepts = self.training_mentions(dictionary, train_path, normalizer, seed)
        vectorizer = model.attrs["vectorizer"]
        vectorizer.fit(names)
        name_tfidf = vectorizer.transform(names)
        mention_tfidf = vectorizer.transform(mentions)
        n_sparse = self.topk // 2
        n_dense = self.topk - n_sparse
        sparse_candidates = top_k_sparse(mention_tfidf, name_tfidf, n_sparse)
        logger.info("BioSyn: %d training mentions, %d dictionary names, %d candidates each "
                    "(%d sparse, %d dense), backbone %s", len(mentions), len(names),
                    self.topk, n_sparse, n_dense, backbone)

        log = TrainingLog(output_dir, resume=resume)
        start_epoch, best = 1, -1.0
        checkpoint = load_checkpoint(output_dir) if resume else None
        if checkpoint is not None:
            module.load_state_dict(checkpoint["module"])
            optimizer.load_state_dict(checkpoint["optimizer"])
            restore_rng_states(checkpoint)
            start_epoch, best = checkpoint["epoch"] + 1, checkpoint["best"]
            logger.info("BioSyn: resuming after epoch %d (best dev acc@1 %.4f)",
                        checkpoint["epoch"], best)
        augment = [train_path] if self.dev_augment_train else []
        # augmented once: dev is scored after every epoch
        dev_dictionary = augmented_for_dev(dictionary, augment)
        meta = {"method": "biosyn", "backbone": str(backbone), "settings": self.settings(),
                "seed": seed, "n_train_mentions": len(mentions)}
        epochs = progress_bar(range(start_epoch, self.max_epochs + 1), desc="BioSyn epochs",
                      unit="epoch", initial=start_epoch - 1, total=self.max_epochs)
        for epoch in epochs:
            name_vectors = encode_chunked(model, names, desc=f"epoch {epoch}: encoding names")
            mention_vectors = encode_chunked(model, mentions, desc=f"epoch {epoch}: encoding mentions")
            candidates = merge_candidates(sparse_candidates,
                                          top_k_dense(mention_vectors, name_vectors, n_dense + n_sparse),
                                          self.topk)
            candidate_sparse = rowwise_scores(mention_tfidf, name_tfidf, candidates)
            positives = candidate_positives(dictionary, concepts, candidates)
            losses = []
            order = numpy.random.default_rng(seed + epoch).permutation(len(mentions))
            module.train()
            batches = range(0, len(order), self.batch_size)
            for start in progress_bar(batches, desc=f"epoch {epoch}: training", unit="batch", leave=False):
                rows = order[start:start + self.batch_size]
                query = encode_with_grad(model, [mentions[i] for i in rows])
                cand = encode_with_grad(model, [names[n] for n in candidates[rows].ravel()])
                cand = cand.view(len(rows), candidates.shape[1], -1)
                dense = torch.einsum("bd,bkd->bk", query, cand)
                scores = dense + module.sparse_weight * torch.from_numpy(candidate_sparse[rows]).to(device)
                loss = marginal_nll(scores, torch.from_numpy(positives[rows]).to(device))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                losses.append(float(loss.detach()))
            module.eval()
            scores = dev_accuracy(model, dev_dictionary, dev_path, index_config=SPARSE_INDEX)
            record = {"epoch": epoch, "loss": float(numpy.mean(losses)) if losses else 0.0,
                      "dev_acc@1": scores["acc@1"], "dev_acc@5": scores["acc@5"],
                      "sparse_weight": sparse_weight(model),
                      "positive_candidates": float(positives.any(axis=1).mean())}
            log.log(**record)
            if scores["acc@1"] > best:
                best = scores["acc@1"]
                meta.update({"dev_acc@1": scores["acc@1"], "dev_acc@5": scores["acc@5"],
                             "epoch": epoch, "sparse_weight": sparse_weight(model),
                             "search": {"index": "SparseIndex (dense + sqrt(lambda) * tfidf)",
                                        "augment": "train" if self.dev_augment_train else None}})
                save_encoder(output_dir, model, model_config, index_config=SPARSE_INDEX, meta=meta)
            save_checkpoint(output_dir, {"epoch": epoch, "best": best,
                                         "module": module.state_dict(),
                                         "optimizer": optimizer.state_dict(),
                                         **rng_states()})
        if self.max_epochs == 0 and not resume:
            # No training asked for: the backbone as it is, the untrained baseline of
            # BioSyn's tables (its dense score alone while lambda is 0).
            meta.update({"epoch": 0, "sparse_weight": sparse_weight(model)})
            save_encoder(output_dir, model, model_config, index_config=SPARSE_INDEX, meta=meta)
        log.plot(title="BioSyn")
        if (output_dir / META_FILE).is_file():
            from ..io.files import read_json

            return read_json(output_dir / META_FILE, "Encoder meta.json", type=dict)
        return meta

    def training_mentions(self, dictionary: ConceptDictionary, train_path: Path,
                          normalizer: MentionNormalizer, seed: int) -> Tuple[List[str], numpy.ndarray]:
        """The normalized train-corpus mentions and their concepts to train on: those with no
        letter or digit dropped, deduplicated if set, sampled down to `max_train_mentions`
        (seeded)."""
        pairs = corpus_mention_pairs(dictionary, [train_path])
        kept = [(normalizer.mention(t), c) for t, c in zip(pairs.texts, pairs.concepts)]
        # What bio_linker would not link (punctuation only) is no training signal either.
        kept = [(t, c) for t, c in kept if any(ch.isalnum() for ch in t)]
        if self.deduplicate:
            # BioSyn's code trains on distinct (mention, concept) pairs: a frequent mention
            # ("cancer" 100 times) would otherwise dominate the epochs and cost as many steps.
            kept = list(dict.fromkeys(kept))
        if self.max_train_mentions and len(kept) > self.max_train_mentions:
            chosen = numpy.random.default_rng(seed).choice(len(kept), self.max_train_mentions,
                                                           replace=False)
            kept = [kept[i] for i in sorted(chosen.tolist())]
        return [t for t, _ in kept], numpy.array([c for _, c in kept], dtype=numpy.int64)


def training_device():
    """A GPU when torch sees one (BioSyn re-encodes the whole dictionary every epoch),
    else the CPU; the saved weights are moved to the CPU either way."""
    import torch

    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def encode_chunked(model, texts: List[str], *, desc: str) -> numpy.ndarray:
    """Encode `texts` without gradients, in chunks to bound memory, as unnormalized rows."""
    from ..encoders.transformer import embed

    chunks = range(0, len(texts), ENCODE_CHUNK)
    parts = [embed(model, texts[i:i + ENCODE_CHUNK], normalize=False)
             for i in progress_bar(chunks, desc=desc, unit="chunk", leave=False, disable=len(chunks) < 2)]
    return numpy.concatenate(parts) if parts else numpy.zeros((0, 0), dtype=numpy.float32)


def encode_with_grad(model, texts: List[str]):
    """Encode `texts` through the torch module with gradients on, for the training step."""
    import torch

    from ..encoders.torch_wrapper import torch_module

    module = torch_module(model)
    ids, mask = model.attrs["tokenizer"](texts)
    device = next(module.parameters()).device
    return module(torch.from_numpy(ids).to(device), torch.from_numpy(mask).to(device))


def _top_k_rows(scores: numpy.ndarray, k: int) -> numpy.ndarray:
    """Column indices of each row's k highest scores, best first, ties to the lower index."""
    k = min(k, scores.shape[1])
    part = numpy.argpartition(-scores, k - 1, axis=1)[:, :k]
    part.sort(axis=1)
    order = numpy.argsort(-numpy.take_along_axis(scores, part, axis=1), axis=1, kind="stable")
    return numpy.take_along_axis(part, order, axis=1)


def top_k_sparse(queries: sparse.csr_matrix, names: sparse.csr_matrix, k: int) -> numpy.ndarray:
    """For each query row, the indices of the k names with the highest dot product, best first;
    scored in chunks of queries to bound memory."""
    names_t = names.T.tocsc()
    return numpy.concatenate([
        _top_k_rows((queries[i:i + SCORE_CHUNK] @ names_t).toarray(), k)
        for i in range(0, queries.shape[0], SCORE_CHUNK)]) if queries.shape[0] else \
        numpy.zeros((0, k), dtype=numpy.int64)


def top_k_dense(queries: numpy.ndarray, names: numpy.ndarray, k: int) -> numpy.ndarray:
    """For each dense query row, the indices of the k names with the highest dot product,
    best first; scored in chunks of queries to bound memory."""
    return numpy.concatenate([
        _top_k_rows(queries[i:i + SCORE_CHUNK] @ names.T, k)
        for i in range(0, len(queries), SCORE_CHUNK)]) if len(queries) else \
        numpy.zeros((0, k), dtype=numpy.int64)


def merge_candidates(sparse_top: numpy.ndarray, dense_ranked: numpy.ndarray, topk: int) -> numpy.ndarray:
    """Each row: its sparse candidates, then the best dense ones not among them."""
    k = min(topk, sparse_top.shape[1] + dense_ranked.shape[1])
    out = numpy.empty((len(sparse_top), k), dtype=numpy.int64)
    for row, (fixed, ranked) in enumerate(zip(sparse_top, dense_ranked)):
        seen = set(fixed.tolist())
        extra = [n for n in ranked.tolist() if n not in seen][:k - len(fixed)]
        filled = fixed.tolist() + extra
        # A dictionary smaller than topk: repeat the best candidate (its probability mass
        # is then counted more than once, as BioSyn's code does with duplicates).
        filled += [filled[0]] * (k - len(filled))
        out[row] = filled
    return out


def rowwise_scores(queries: sparse.csr_matrix, names: sparse.csr_matrix,
                   candidates: numpy.ndarray) -> numpy.ndarray:
    """TF-IDF inner product of each mention with each of its candidates, (n, k) float32."""
    n, k = candidates.shape
    left = queries[numpy.repeat(numpy.arange(n), k)]
    right = names[candidates.ravel()]
    return numpy.asarray(left.multiply(right).sum(axis=1), dtype=numpy.float32).reshape(n, k)


def candidate_positives(dictionary: ConceptDictionary, concepts: numpy.ndarray,
                        candidates: numpy.ndarray) -> numpy.ndarray:
    """(n, k) bool: candidate name is a name of the mention's concept."""
    indptr, owners = dictionary.name_concepts_indptr, dictionary.name_concepts
    out = numpy.zeros(candidates.shape, dtype=bool)
    for row, (concept, names) in enumerate(zip(concepts.tolist(), candidates)):
        for col, name in enumerate(names.tolist()):
            out[row, col] = concept in owners[indptr[name]:indptr[name + 1]]
    return out
