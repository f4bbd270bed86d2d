"""Training the cross-encoder reranker (rerank.py) on a retriever's own mistakes.

Each train-corpus mention (composites left out: their parts have no offsets of their
own) is linked by the retriever (a saved bio_linker pipeline, [paths] retriever, or a
TF-IDF linker over [paths] dictionary); its top-k concepts are the candidates, the wrong
ones the negatives. With add_gold, a mention whose gold concept the retriever missed gets
it in place of its k-th candidate, so every mention teaches something. The loss is
BioSyn's marginal likelihood over the k candidates (listwise: the softmax of the pair
logits, each plus the learned weight times the retriever's score).

Every `eval_frequency` steps (0: once per epoch) the dev corpus is reranked the same way
and acc@1 over its mentions taken (a gold concept outside the top k counts wrong); the
best model is saved with a temperature fitted on those dev logits (the softmax becomes a
probability bio_linker's threshold can cut). Checkpoints hold the step within the epoch,
so a killed run resumes where it stopped, with the same batches.
"""
import logging
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import numpy

from ..errors import BioLinkError, Errors
from ..io.files import make_dir, read_json
from ..io.progress import progress_bar
from ..linker.stages.reranker import META_FILE, RerankItem, Reranker, fit_temperature, softmax_rows
from .checkpoints import load_checkpoint, restore_rng_states, rng_states, save_checkpoint
from .log import TrainingLog
from .run import require_path

logger = logging.getLogger("spacy_biolink")


class CrossEncoderTrainer:
    def __init__(self, *, max_epochs: int, k: int, batch_size: int, learning_rate: float,
                 weight_decay: float, max_train_mentions: int, max_dev_mentions: int,
                 eval_frequency: int, add_gold: bool, context_chars: int, torch_threads: int,
                 head_learning_rate: float, initial_retriever_weight: float):
        for name, value, low in (("k", k, 2), ("batch_size", batch_size, 1),
                                 ("max_epochs", max_epochs, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise BioLinkError(Errors.E530.format(setting=name, value=value,
                                                      what=f"an integer >= {low}"))
        self.max_epochs = max_epochs
        self.k = k
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.max_train_mentions = max_train_mentions
        self.max_dev_mentions = max_dev_mentions
        self.eval_frequency = eval_frequency
        self.add_gold = add_gold
        self.context_chars = context_chars
        self.torch_threads = torch_threads
        self.head_learning_rate = head_learning_rate
        self.initial_retriever_weight = initial_retriever_weight

    def settings(self) -> Dict:
        """The trainer's settings as a dict, for the saved meta."""
        return dict(vars(self))

    def __call__(self, config, output_dir: Path, *, resume: bool = False) -> Dict:
        """Train a reranker (see `Trainer`) into `output_dir`: reranker.cfg, model,
        reranker.json, meta.json, training.jsonl/.png and checkpoint.pt."""
        import torch

        from ..encoders.cross_encoder import pair_logits_with_grad, retriever_weight
        from ..encoders.torch_wrapper import torch_module
        from ..encoders.transformer import (backbone_settings, backbone_tokenizer_json,
                                            model_config_with_backbone, resolve_backbone)
        from .biosyn import training_device
        from .losses import marginal_nll

        if self.torch_threads:
            torch.set_num_threads(self.torch_threads)
        output_dir = Path(output_dir)
        make_dir(output_dir)
        seed = int(config.get("system", {}).get("seed", 0))
        train_path = require_path(config, "train")
        dev_path = require_path(config, "dev")
        retriever_path = config.get("paths", {}).get("retriever")
        nlp, linker = load_retriever(config)

        from spacy.util import registry

        backbone = resolve_backbone(config.get("paths", {}).get("backbone"))
        model_config = model_config_with_backbone(config["reranker"], backbone_settings(backbone))
        model = registry.resolve({"model": model_config})["model"]
        try:
            torch_module(model).load_pretrained_weights(str(backbone))
        except (OSError, ValueError) as err:
            raise BioLinkError(Errors.E651.format(path=backbone,
                                                  reason=str(err).splitlines()[0])) from None
        model.attrs["tokenizer"].set(backbone_tokenizer_json(backbone))
        module = torch_module(model)
        device = training_device()
        module.to(device)
        reranker = Reranker(model, k=self.k, context_chars=self.context_chars,
                            model_config=model_config, cache_size=0)

        train = corpus_items(nlp, linker, train_path, self.k, add_gold=self.add_gold,
                             limit=self.max_train_mentions, seed=seed)
        train = [(item, gold) for item, gold in train
                 if any(c in gold for c, _ in item.candidates)]
        if not train:
            raise BioLinkError(Errors.E532.format(split="train", path=train_path, k=self.k, n=0))
        dev = corpus_items(nlp, linker, dev_path, self.k, add_gold=False,
                           limit=self.max_dev_mentions, seed=seed)
        train_pairs = reranker.pairs(linker.dictionary, [i for i, _ in train],
                                     linker.normalizer.mention)
        logger.info("Reranker: %d train mentions, %d dev mentions, k=%d, backbone %s",
                    len(train), len(dev), self.k, backbone)

        with torch.no_grad():
            module.retriever_weight.fill_(self.initial_retriever_weight)
        # The head and the retriever's weight start from nothing (or a guess) and need far
        # larger steps than the pretrained backbone: one AdamW, two learning rates.
        backbone_params = [p for n, p in module.named_parameters() if n.startswith("backbone.")]
        head_params = [p for n, p in module.named_parameters() if not n.startswith("backbone.")]
        optimizer = torch.optim.AdamW([
            {"params": backbone_params, "lr": self.learning_rate,
             "weight_decay": self.weight_decay},
            {"params": head_params, "lr": self.head_learning_rate, "weight_decay": 0.0}])
        log = TrainingLog(output_dir, resume=resume)
        start_epoch, start_step, best, global_step = 1, 0, -1.0, 0
        checkpoint = load_checkpoint(output_dir) if resume else None
        if checkpoint is not None:
            module.load_state_dict(checkpoint["module"])
            optimizer.load_state_dict(checkpoint["optimizer"])
            restore_rng_states(checkpoint)
            start_epoch, start_step = checkpoint["epoch"], checkpoint["step"]
            best, global_step = checkpoint["best"], checkpoint["global_step"]
            logger.info("Reranker: resuming at epoch %d, step %d (best dev acc@1 %.4f)",
                        start_epoch, start_step, best)
        retriever_acc = dev_acc_at_1([i.candidates for i, _ in dev], [g for _, g in dev])
        meta = {"method": "cross_encoder_reranker", "backbone": str(backbone),
                "retriever": str(retriever_path) if retriever_path else "tfidf",
                "settings": self.settings(), "seed": seed, "n_train_mentions": len(train),
                "n_dev_mentions": len(dev), "dev_retriever_acc@1": retriever_acc,
                "use_context": bool(model.attrs["use_context"])}
        n_batches = (len(train) + self.batch_size - 1) // self.batch_size
        frequency = self.eval_frequency or n_batches
        losses: List[float] = []
        for epoch in progress_bar(range(start_epoch, self.max_epochs + 1), desc="Reranker epochs",
                          unit="epoch", initial=start_epoch - 1, total=self.max_epochs):
            order = numpy.random.default_rng(seed + epoch).permutation(len(train))
            first = start_step if epoch == start_epoch else 0
            steps = progress_bar(range(first, n_batches), desc=f"epoch {epoch}: training", unit="batch",
                         leave=False, initial=first, total=n_batches)
            for step in steps:
                module.train()
                rows = order[step * self.batch_size:(step + 1) * self.batch_size].tolist()
                pairs = [p for r in rows for p in train_pairs[r]]
                scores = [s for r in rows for _, s in train[r][0].candidates[:len(train_pairs[r])]]
                flat = pair_logits_with_grad(model, pairs, scores)
                logits, positives = _pad_rows(flat, [train_pairs[r] for r in rows],
                                              [train[r] for r in rows], device)
                loss = marginal_nll(logits, positives)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                losses.append(float(loss.detach()))
                global_step += 1
                steps.set_postfix(loss=f"{numpy.mean(losses[-50:]):.3f}")
                if (step + 1) % frequency == 0 or step + 1 == n_batches:
                    acc, rows_logits = self.evaluate(reranker, linker, dev)
                    log.log(epoch=epoch, step=global_step, loss=float(numpy.mean(losses)),
                            **{"dev_acc@1": acc, "dev_retriever_acc@1": retriever_acc,
                               "retriever_weight": retriever_weight(model)})
                    losses = []
                    if acc > best:
                        best = acc
                        reranker.temperature = fit_temperature(
                            rows_logits, [_positives(item, gold) for item, gold in dev])
                        meta.update({"dev_acc@1": acc, "epoch": epoch, "step": global_step,
                                     "temperature": reranker.temperature,
                                     "retriever_weight": retriever_weight(model)})
                        reranker.to_disk(output_dir, meta=meta)
                    done = step + 1 == n_batches
                    save_checkpoint(output_dir, {
                        "epoch": epoch + 1 if done else epoch, "step": 0 if done else step + 1,
                        "best": best, "global_step": global_step,
                        "module": module.state_dict(), "optimizer": optimizer.state_dict(),
                        **rng_states()})
        log.plot(x="step", title="Cross-encoder reranker")
        saved = output_dir / META_FILE
        # A resumed run that found nothing better returns what the best one saved.
        return read_json(saved, "Reranker meta.json", type=dict) if saved.is_file() else meta

    def evaluate(self, reranker: Reranker, linker, dev) -> Tuple[float, List[numpy.ndarray]]:
        """Dev acc@1 after reranking, and each dev mention's logits (for the temperature)."""
        items = [item for item, _ in dev]
        rows = reranker.pairs(linker.dictionary, items, linker.normalizer.mention)
        logits = reranker.logits(rows, [[s for _, s in i.candidates] for i in items])
        ranked = []
        for item, row in zip(items, logits):
            order = numpy.argsort(-softmax_rows(row), kind="stable") if len(row) else []
            ranked.append([item.candidates[i] for i in list(order)])
        return dev_acc_at_1(ranked, [g for _, g in dev]), logits


def _positives(item: RerankItem, gold: set) -> numpy.ndarray:
    return numpy.array([c in gold for c, _ in item.candidates], dtype=bool)


def _pad_rows(flat, pair_rows, examples, device):
    """The flat pair logits as a (mentions, k) tensor, -inf where a mention has fewer
    candidates, and the positives mask."""
    import torch

    width = max(len(r) for r in pair_rows)
    logits = torch.full((len(pair_rows), width), float("-inf"), device=device, dtype=flat.dtype)
    positives = torch.zeros((len(pair_rows), width), dtype=torch.bool, device=device)
    start = 0
    for row, (pairs, (item, gold)) in enumerate(zip(pair_rows, examples)):
        n = len(pairs)
        logits[row, :n] = flat[start:start + n]
        positives[row, :n] = torch.from_numpy(_positives(item, gold)[:n]).to(device)
        start += n
    return logits, positives


def dev_acc_at_1(ranked: Sequence[Sequence[Tuple[int, float]]], golds: Sequence[set]) -> float:
    """Share of mentions whose first candidate is one of their gold concepts."""
    if not golds:
        return 0.0
    return sum(bool(r) and r[0][0] in g for r, g in zip(ranked, golds)) / len(golds)


def load_retriever(config):
    """(nlp, its bio_linker): the pipeline at [paths] retriever (its linker named by
    [paths] retriever_linker when it has several), or a TF-IDF linker over [paths]
    dictionary built in memory."""
    from ..evaluation.gold_mentions import find_linker
    from ..linker.find import the_linker

    value = config.get("paths", {}).get("retriever")
    if value not in (None, "", "null"):
        from ..linker.pipeline import load_linker_pipeline

        path = Path(value)
        if not path.is_dir():
            raise BioLinkError(Errors.E533.format(path=path, reason="no such directory"))
        nlp = load_linker_pipeline(path)
        name = config.get("paths", {}).get("retriever_linker")
        return nlp, the_linker(nlp, None if name in ("", "null") else name,
                               command="train (reranker)", path=path,
                               how="--paths.retriever_linker NAME")
    from ..linker.pipeline import init_linker

    nlp = init_linker(None, require_path(config, "dictionary"))
    return nlp, find_linker(nlp)


def corpus_items(nlp, linker, corpus, k: int, *, add_gold: bool = False, limit: int = 0,
                 seed: int = 0) -> List[Tuple[RerankItem, set]]:
    """(RerankItem with the retriever's top-k, gold concept indices) for each mention of
    `corpus` with one gold concept part known to the dictionary; `limit` > 0 keeps a
    seeded random `limit` of them. add_gold puts a missed gold concept in place of the
    k-th candidate (with that candidate's score)."""
    from ..linker.policy import Mention
    from ..corpora.pubtator import read_pubtator
    from ..kb.ids import split_gold_id_parts

    dictionary = linker.dictionary
    found: List[Tuple[Mention, set]] = []
    for pubtator_doc in read_pubtator(corpus):
        doc = nlp.make_doc(pubtator_doc.text)
        for m in pubtator_doc.mentions:
            parts = split_gold_id_parts(m.raw_ids)
            if len(parts) != 1:
                continue
            gold = {dictionary.concept_index(i) for i in parts[0]} - {None}
            if gold:
                found.append((Mention(doc, m.start, m.end, m.text, m.type), gold))
    if limit and len(found) > limit:
        chosen = numpy.random.default_rng(seed).choice(len(found), limit, replace=False)
        found = [found[i] for i in sorted(chosen.tolist())]
    # Through the linker's own path (type_filter, a verifier), up to its reranker: the
    # candidates a reranker in this pipeline is given. Composites stay whole.
    mentions = [m for m, _ in found]
    stop = "reranker" if "reranker" in linker.stages else None
    links = linker.link(mentions, k, parts=lambda i, text: [text], stop_before=stop)
    out = []
    for (mention, gold), ((text, found_candidates),) in zip(found, links):
        if not linker.linker.query_key(text):
            continue
        candidates = list(found_candidates[:k])
        if add_gold and candidates and not any(c in gold for c, _ in candidates):
            concept = min(gold)
            if len(candidates) == k:
                candidates[-1] = (concept, candidates[-1][1])
            else:
                candidates.append((concept, candidates[-1][1]))
        out.append((RerankItem(text, mention.doc.text, mention.start_char, mention.end_char,
                               candidates), gold))
    return out
