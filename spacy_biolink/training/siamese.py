"""Training the Siamese synonymy verifier (seed 004) on dictionary name pairs and,
optionally, corpus mention-vs-name pairs.

Pairs come from training/pairs.py (concepts split into train/dev/test). Binary
cross-entropy on p = exp(-L1), Adam; the epoch with the best dev AUC is kept, and the
decision threshold is the dev precision-recall point of maximal F1. Test pairs (held-out
concepts) are scored once, at the end, at 0.5 and at that threshold.

corpus_pairs (with [paths] train) adds the gold mentions of a training corpus against
names, as the linker will show them to the verifier (pairs.corpus_training_pairs, train
concepts only). With [paths] dev, the dev corpus is linked as in the NIL benchmark (its
dev-split concepts removed from the dictionary, pairs.held_out_mentions): the epoch kept
is then the one whose p(synonym) best tells right top candidates from wrong ones there
(dev link AUC), and every NIL rule of verify.py is fitted on those mentions; nil_rule
says which one the saved verifier applies ("auto": the one with the most dev NIL answers
within nil_max_accuracy_loss).
"""
import logging
import random
from pathlib import Path
from typing import Dict, List, Optional

import numpy
from spacy import util
from thinc.api import Config
from tqdm import tqdm

from ..dictionary import ConceptDictionary
from ..encoders.saved import save_encoder
from ..encoders.siamese import N_RESERVED, WordVocab, pair_arrays
from ..errors import BioLinkError, Errors
from ..evaluation.pair_scores import best_f1_threshold, evaluate_pairs
from ..wordvectors import WordVectors, tokenize
from .checkpoints import load_checkpoint, restore_rng_states, rng_states, save_checkpoint
from .data import read_dictionary
from .log import TrainingLog
from .pairs import (LinkedMentions, PairSet, corpus_training_pairs, dictionary_pairs,
                    held_out_mentions, split_concepts)
from .run import require_path

logger = logging.getLogger("spacy_biolink")

ARCHITECTURE = "spacy-biolink.SiameseVerifier.v1"
NIL_RULE_CHOICES = ("auto", "verifier", "either", "combined")


class SiameseTrainer:
    def __init__(self, *, max_epochs: int = 20, batch_size: int = 256,
                 learning_rate: float = 1e-3, dev_fraction: float = 0.1,
                 test_fraction: float = 0.1, max_positives_per_concept: int = 10,
                 negatives_per_kind: int = 1, n_similar: int = 20, patience: int = 3,
                 freeze_embeddings: bool = False, torch_threads: int = 1,
                 corpus_pairs: bool = False, corpus_negatives: int = 3,
                 corpus_top_k: int = 10, corpus_repeat: int = 1,
                 corpus_types: Optional[List[str]] = None, nil_rule: str = "verifier",
                 nil_max_accuracy_loss: float = 0.02):
        if nil_rule not in NIL_RULE_CHOICES:
            raise BioLinkError(Errors.E712.format(setting="nil_rule", value=nil_rule,
                                                  options=", ".join(NIL_RULE_CHOICES)))
        self.settings = dict(max_epochs=max_epochs, batch_size=batch_size,
                             learning_rate=learning_rate, patience=patience,
                             freeze_embeddings=freeze_embeddings, torch_threads=torch_threads)
        self.pair_settings = dict(fractions=[dev_fraction, test_fraction],
                                  max_positives_per_concept=max_positives_per_concept,
                                  negatives_per_kind=negatives_per_kind, n_similar=n_similar)
        self.corpus_settings = dict(corpus_pairs=corpus_pairs, negatives=corpus_negatives,
                                    k=corpus_top_k, repeat=corpus_repeat,
                                    types=list(corpus_types) if corpus_types else None)
        self.nil_settings = dict(nil_rule=nil_rule, max_accuracy_loss=nil_max_accuracy_loss)

    def __call__(self, config: Config, output_dir: Path, *, resume: bool = False) -> Dict:
        """Train the siamese candidate verifier (see `Trainer`) on name pairs from the dictionary
        and, when given, the train corpus; word vectors are optional."""
        import torch

        from ..encoders.torch_wrapper import torch_module

        output_dir = Path(output_dir)
        if self.settings["torch_threads"] > 0:
            # Small batches of short sequences: extra threads mostly wait on each other
            # (2 threads on a busy 2-core machine ran 25x slower than 1).
            torch.set_num_threads(self.settings["torch_threads"])
        seed = int(config.get("system", {}).get("seed", 0))
        dictionary = read_dictionary(require_path(config, "dictionary"))
        vectors_path = config.get("paths", {}).get("vectors")
        vectors = (WordVectors.from_disk(vectors_path)
                   if vectors_path not in (None, "", "null") else None)
        pairs = dictionary_pairs(dictionary, seed=seed, **self.pair_settings)
        if not len(pairs["train"]) or not len(pairs["dev"]):
            raise BioLinkError(Errors.E702.format(n_concepts=dictionary.n_concepts,
                                                  counts={k: len(v) for k, v in pairs.items()}))
        # The concept split dictionary_pairs made, for the corpus mentions.
        split = split_concepts(dictionary.n_concepts, self.pair_settings["fractions"], seed)
        types = set(self.corpus_settings["types"]) if self.corpus_settings["types"] else None
        corpus_stats = None
        if self.corpus_settings["corpus_pairs"]:
            if _optional_path(config, "train") is None:
                raise BioLinkError(Errors.E711.format(setting="corpus_pairs", value=True,
                                                      path="train", off="false"))
            corpus, corpus_stats = corpus_training_pairs(
                dictionary, require_path(config, "train"), split, types=types,
                negatives=self.corpus_settings["negatives"], k=self.corpus_settings["k"])
            for _ in range(max(self.corpus_settings["repeat"], 1)):
                pairs["train"].extend(corpus)
        dev_links: Optional[LinkedMentions] = None
        if _optional_path(config, "dev") is not None:
            dev_links = held_out_mentions(dictionary, require_path(config, "dev"), split, 1,
                                          types=types)
            logger.info("dev corpus mentions: %s (left out: %s)", dev_links.counts(),
                        dev_links.skipped)
        elif self.nil_settings["nil_rule"] in ("either", "combined"):
            raise BioLinkError(Errors.E711.format(setting="nil_rule",
                                                  value=self.nil_settings["nil_rule"],
                                                  path="dev", off='"verifier"'))
        model, model_config = build_model(config, dictionary, vectors)
        net = torch_module(model)
        vocab: WordVocab = model.attrs["vocab"]
        if self.settings["freeze_embeddings"]:
            net.embedding.weight.requires_grad_(False)
        optimizer = torch.optim.Adam([p for p in net.parameters() if p.requires_grad],
                                     lr=self.settings["learning_rate"])
        log = TrainingLog(output_dir, resume=resume)
        rng = random.Random(seed)
        start_epoch, best = 0, {"auc": -1.0, "epoch": -1, "state": None}
        checkpoint = load_checkpoint(output_dir) if resume else None
        if checkpoint is not None:
            net.load_state_dict(checkpoint["model"])
            optimizer.load_state_dict(checkpoint["optimizer"])
            start_epoch = int(checkpoint["epoch"]) + 1
            best = {"auc": float(checkpoint["best_auc"]), "epoch": int(checkpoint["best_epoch"]),
                    "state": checkpoint["best_state"]}
            rng.setstate(_rng_state(checkpoint["rng"]))
            restore_rng_states(checkpoint)
        train = pairs["train"]
        labels = torch.as_tensor(train.label_array())
        for epoch in range(start_epoch, self.settings["max_epochs"]):
            net.train()
            total, seen = 0.0, 0
            batches = list(train.batches(self.settings["batch_size"], rng))
            for batch in tqdm(batches, desc=f"epoch {epoch}", leave=False, mininterval=5):
                arrays = pair_arrays(vocab, [(train.left[i], train.right[i]) for i in batch])
                probs = net(*(torch.as_tensor(a) for a in arrays))
                loss = torch.nn.functional.binary_cross_entropy(
                    probs.clamp(1e-6, 1 - 1e-6), labels[batch])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                total += float(loss.detach()) * len(batch)
                seen += len(batch)
            dev_probs = model.predict(pairs["dev"].pairs)
            dev = evaluate_pairs(pairs["dev"].labels, dev_probs, {"0.5": 0.5})
            scores = dict(dev_auc=dev["auc"], dev_f1=dev["at_0.5"]["f1"])
            selected = dev["auc"]
            if dev_links is not None:
                selected = scores["dev_link_auc"] = link_auc(model, dev_links)
            log.log(epoch=epoch, loss=total / max(seen, 1), **scores)
            if selected > best["auc"]:
                best = {"auc": selected, "epoch": epoch,
                        "state": {k: v.detach().clone() for k, v in net.state_dict().items()}}
            save_checkpoint(output_dir, {"model": net.state_dict(),
                                         "optimizer": optimizer.state_dict(), "epoch": epoch,
                                         "best_auc": best["auc"], "best_epoch": best["epoch"],
                                         "best_state": best["state"],
                                         "rng": _plain_rng(rng.getstate()), **rng_states()})
            if epoch - best["epoch"] >= self.settings["patience"]:
                logger.info("the dev AUC chosen on has not improved for %d epochs: stopping",
                            self.settings["patience"])
                break
        if best["state"] is not None:
            net.load_state_dict(best["state"])
        log.plot(title="Siamese verifier")
        meta = score_splits(model, pairs)
        meta.update({"method": "siamese", "architecture": ARCHITECTURE, "best_epoch": best["epoch"],
                     "seed": seed, "dictionary": str(require_path(config, "dictionary")),
                     "vectors": str(vectors_path) if vectors else None,
                     "pair_settings": self.pair_settings, "training": self.settings,
                     "pairs": {k: v.counts() for k, v in pairs.items()},
                     "corpus_settings": self.corpus_settings, "corpus_pairs": corpus_stats,
                     "train": _optional_path(config, "train"),
                     "dev": _optional_path(config, "dev")})
        if dev_links is not None:
            meta.update(fit_rules(model, dev_links, **self.nil_settings))
        else:
            meta["nil_rule"] = "verifier"
        save_encoder(output_dir, model, model_config, meta=meta)
        return meta


def _optional_path(config: Config, key: str) -> Optional[str]:
    value = config.get("paths", {}).get(key)
    return None if value in (None, "", "null") else str(value)


def _link_arrays(model, links: LinkedMentions):
    has = links.has_candidate()
    probs = numpy.zeros(len(links), numpy.float32)
    pairs = links.top_pairs()
    if has.any():
        probs[has] = model.predict([pairs[i] for i in numpy.flatnonzero(has)])
    return probs, has


def link_auc(model, links: LinkedMentions) -> float:
    """How well p(synonym) of each mention's top candidate tells right from wrong."""
    from ..evaluation.pair_scores import roc_auc

    probs, has = _link_arrays(model, links)
    return roc_auc(links.top_correct()[has], probs[has])


def fit_rules(model, links: LinkedMentions, *, nil_rule: str = "auto",
              max_accuracy_loss: float = 0.02) -> Dict:
    """meta.json's `nil_rules` (every rule's dev-fitted settings), `nil_rule` (the one to
    apply; "auto": the most dev NIL answers, the simpler rule among equals) and
    `nil_dev` (the dev mentions and the score-only rule for comparison)."""
    from ..verify import NIL_RULES, choose_nil_rule, fit_nil_rules

    probs, has = _link_arrays(model, links)
    fitted = fit_nil_rules(probs, links.top_scores(), links.top_correct(),
                           links.category_mask("linkable"),
                           links.category_mask("removed", "nil_gold", "absent"), has,
                           max_accuracy_loss=max_accuracy_loss)
    if nil_rule == "auto":
        nil_rule = choose_nil_rule(fitted)
    logger.info("NIL rules on dev (at most %.3f acc@1 lost): %s; applying %r",
                max_accuracy_loss, fitted, nil_rule)
    return {"nil_rule": nil_rule, "nil_rules": {r: fitted[r] for r in NIL_RULES},
            "nil_dev": {"mentions": links.counts(), "left_out": links.skipped,
                        "max_accuracy_loss": max_accuracy_loss, "score": fitted["score"],
                        "link_auc": link_auc(model, links)}}


def score_splits(model, pairs: Dict[str, PairSet]) -> Dict:
    """Threshold from dev (max F1), then test scores at 0.5 and at that threshold."""
    dev_probs = model.predict(pairs["dev"].pairs)
    threshold, dev_f1 = best_f1_threshold(pairs["dev"].labels, dev_probs)
    test_probs = model.predict(pairs["test"].pairs)
    test = evaluate_pairs(pairs["test"].labels, test_probs, {"0.5": 0.5, "dev": threshold})
    dev = evaluate_pairs(pairs["dev"].labels, dev_probs, {"0.5": 0.5, "dev": threshold})
    return {"threshold": threshold, "dev_best_f1": dev_f1, "dev_auc": dev["auc"],
            "test_auc": test["auc"], "test_f1": test["at_dev"]["f1"],
            "test_precision": test["at_dev"]["precision"],
            "test_recall": test["at_dev"]["recall"], "test_f1_at_0.5": test["at_0.5"]["f1"],
            "dev_scores": dev, "test_scores": test}


def build_model(config: Config, dictionary: ConceptDictionary,
                vectors: Optional[WordVectors]):
    """The [encoder] architecture sized for the vocabulary, its embedding initialised from
    `vectors` (all their words) or, without vectors, random over the dictionary's words."""
    import torch

    from ..encoders.torch_wrapper import torch_module

    model_config = dict(config["encoder"])
    if vectors is not None:
        words = list(vectors.words)
        model_config["embed_dim"] = vectors.dim
    else:
        words = sorted({w for name in dictionary.names for w in tokenize(name)})
    model_config["n_vocab"] = len(words) + N_RESERVED
    model = util.registry.resolve({"model": model_config})["model"]
    model.attrs["vocab"] = WordVocab(words)
    if vectors is not None:
        net = torch_module(model)
        with torch.no_grad():
            net.embedding.weight[N_RESERVED:] = torch.as_tensor(vectors.vectors)
    return model, model_config


def _plain_rng(state):
    """random's state as nested lists of ints (torch.load weights_only accepts those)."""
    version, internal, gauss = state
    return [version, list(internal), gauss]


def _rng_state(plain):
    version, internal, gauss = plain
    return (version, tuple(internal), gauss)
