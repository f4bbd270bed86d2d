"""The trainers' registered builders (`[training.trainer]` blocks of configs/*.cfg). Each
imports its trainer when called, so resolving a config never loads torch for nothing."""
from typing import List, Optional

from spacy.util import registry


@registry.misc("spacy-biolink.BioSynTrainer.v1")
def build_biosyn_trainer(max_epochs: int = 10, batch_size: int = 16, learning_rate: float = 1e-5,
                         sparse_learning_rate: float = 0.01, weight_decay: float = 0.01,
                         topk: int = 20, initial_sparse_weight: float = 0.0,
                         max_train_mentions: int = 0, encode_batch_size: int = 256,
                         dev_augment_train: bool = True, deduplicate: bool = False):
    """Registered `spacy-biolink.BioSynTrainer.v1`: trains a dense+sparse encoder BioSyn's way
    (marginal likelihood over the top-k candidates of both)."""
    # deduplicate defaults to off so that a config written without it trains as before;
    # configs/biosyn.cfg turns it on, as BioSyn's code does.
    from .biosyn import BioSynTrainer

    return BioSynTrainer(max_epochs=max_epochs, batch_size=batch_size,
                         learning_rate=learning_rate, sparse_learning_rate=sparse_learning_rate,
                         weight_decay=weight_decay, topk=topk,
                         initial_sparse_weight=initial_sparse_weight,
                         max_train_mentions=max_train_mentions,
                         encode_batch_size=encode_batch_size,
                         dev_augment_train=dev_augment_train, deduplicate=deduplicate)


@registry.misc("spacy-biolink.TripletTrainer.v1")
def build_triplet_trainer(max_epochs: int = 3, concepts_per_batch: int = 16,
                          names_per_concept: int = 4, learning_rate: float = 1e-4,
                          weight_decay: float = 0.01, training_set: str = "OD",
                          mention_ratio: float = 0.333, search: str = "OD",
                          max_concepts: int = 0):
    """Registered `spacy-biolink.TripletTrainer.v1`: fine-tunes an encoder with a triplet loss
    over batches of concepts with several names each."""
    from .triplet import TripletTrainer

    return TripletTrainer(max_epochs=max_epochs, concepts_per_batch=concepts_per_batch,
                          names_per_concept=names_per_concept, learning_rate=learning_rate,
                          weight_decay=weight_decay, training_set=training_set,
                          mention_ratio=mention_ratio, search=search, max_concepts=max_concepts)


@registry.misc("spacy-biolink.BneTrainer.v1")
def build_bne_trainer(max_epochs: int = 30, steps_per_epoch: int = 0, batch_size: int = 64,
                      learning_rate: float = 0.001, grad_clip: float = 5.0, patience: int = 3,
                      synonym_weight: float = 1.0, concept_weight: float = 1.0,
                      context_weight: float = 1.0, add_train_mentions: bool = True,
                      dev_augment_train: bool = True, max_minutes: float = 0.0):
    """Registered `spacy-biolink.BneTrainer.v1`: trains a BNE name encoder on synonym, concept
    and context losses, stopping after `patience` epochs without dev improvement."""
    from .bne import BneTrainer

    return BneTrainer(max_epochs=max_epochs, steps_per_epoch=steps_per_epoch,
                      batch_size=batch_size, learning_rate=learning_rate, grad_clip=grad_clip,
                      patience=patience, synonym_weight=synonym_weight,
                      concept_weight=concept_weight, context_weight=context_weight,
                      add_train_mentions=add_train_mentions,
                      dev_augment_train=dev_augment_train, max_minutes=max_minutes)


@registry.misc("spacy-biolink.CrossEncoderTrainer.v1")
def build_cross_encoder_trainer(max_epochs: int = 1, k: int = 8, batch_size: int = 8,
                                learning_rate: float = 2e-5, weight_decay: float = 0.01,
                                max_train_mentions: int = 0, max_dev_mentions: int = 0,
                                eval_frequency: int = 0, add_gold: bool = True,
                                context_chars: int = 150, torch_threads: int = 0,
                                head_learning_rate: float = 1e-3,
                                initial_retriever_weight: float = 10.0):
    """Trains a CrossEncoderReranker on the retriever's top-k candidates of the train
    corpus' mentions (listwise loss); see training/rerank.py."""
    settings = dict(locals())
    from .rerank import CrossEncoderTrainer

    return CrossEncoderTrainer(**settings)


@registry.misc("spacy-biolink.SiameseTrainer.v3")
def build_siamese_trainer_v3(max_epochs: int = 20, batch_size: int = 256,
                             learning_rate: float = 0.001, dev_fraction: float = 0.1,
                             test_fraction: float = 0.1, max_positives_per_concept: int = 10,
                             negatives_per_kind: int = 1, n_similar: int = 20,
                             patience: int = 3, freeze_embeddings: bool = True,
                             torch_threads: int = 1, corpus_pairs: bool = False,
                             corpus_negatives: int = 3, corpus_top_k: int = 10,
                             corpus_repeat: int = 1, corpus_types: Optional[List[str]] = None,
                             nil_rule: str = "auto", nil_max_accuracy_loss: float = 0.02,
                             extraction: str = "last4", occurrence: str = "avg",
                             max_contexts: int = 20000):
    """v2 plus seed 004's token-vector extraction for subword input: `extraction` ("none",
    "input", "last", "last4") and `occurrence` ("avg", "first", "last") from [paths]
    backbone over at most `max_contexts` training names; see encoders/token_embeddings.py."""
    from .siamese import SiameseTrainer

    return SiameseTrainer(max_epochs=max_epochs, batch_size=batch_size,
                          learning_rate=learning_rate, dev_fraction=dev_fraction,
                          test_fraction=test_fraction,
                          max_positives_per_concept=max_positives_per_concept,
                          negatives_per_kind=negatives_per_kind, n_similar=n_similar,
                          patience=patience, freeze_embeddings=freeze_embeddings,
                          torch_threads=torch_threads, corpus_pairs=corpus_pairs,
                          corpus_negatives=corpus_negatives, corpus_top_k=corpus_top_k,
                          corpus_repeat=corpus_repeat, corpus_types=corpus_types,
                          nil_rule=nil_rule, nil_max_accuracy_loss=nil_max_accuracy_loss,
                          extraction=extraction, occurrence=occurrence,
                          max_contexts=max_contexts)


@registry.misc("spacy-biolink.DanTrainer.v1")
def build_dan_trainer(max_epochs: int = 50, batch_size: int = 64, learning_rate: float = 1e-3,
                      margin: float = 0.1, n_nearest: int = 200, synonym_dropout: float = 0.5,
                      max_prototype_names: int = 32, use_cca: bool = True,
                      cca_regularization: float = 1e-3, split_seed: int = 1,
                      zero_shot_concepts: float = 1000, test_rounds: int = 1,
                      validation_rounds: int = 1, use_corpus: bool = True,
                      hybrid_sparse_weights: List[float] = [0.5, 1.0, 2.0, 4.0],
                      eval_frequency: int = 0, patience: int = 1, triplet_hinge: str = "batch",
                      torch_threads: int = 0):
    """eval_frequency: validation mAP every this many training steps (0: once per epoch);
    patience: stop after this many validations without a better mAP, keeping the best.
    Their defaults are the paper's rule (and this function's behaviour before they were
    added): once per epoch, stop at the first drop, keep the epoch before it.
    triplet_hinge: "batch" (the authors' code, the default) or "triplet" (the paper's
    Equation 3). torch_threads: torch's intra-op threads while training (0, the default
    and the behaviour before it was added: torch's own; configs/dan.cfg sets 1)."""
    from .dan import DanTrainer

    return DanTrainer(max_epochs=max_epochs, batch_size=batch_size,
                      learning_rate=learning_rate, margin=margin, n_nearest=n_nearest,
                      synonym_dropout=synonym_dropout, max_prototype_names=max_prototype_names,
                      use_cca=use_cca, cca_regularization=cca_regularization,
                      split_seed=split_seed, zero_shot_concepts=zero_shot_concepts,
                      test_rounds=test_rounds, validation_rounds=validation_rounds,
                      use_corpus=use_corpus, hybrid_sparse_weights=hybrid_sparse_weights,
                      eval_frequency=eval_frequency, patience=patience,
                      triplet_hinge=triplet_hinge, torch_threads=torch_threads)


@registry.misc("spacy-biolink.LearnedRerankerTrainer.v2")
def build_learned_reranker_trainer_v2(k: int = 20, num_leaves: int = 15,
                                      learning_rate: float = 0.15, max_rounds: int = 500,
                                      early_stopping_rounds: int = 50,
                                      min_data_in_leaf: int = 20,
                                      nil_precision: Optional[float] = None, threads: int = 0,
                                      linker_name: Optional[str] = None,
                                      cross_fit_folds: int = 0,
                                      retriever_features: bool = True):
    """Registered `spacy-biolink.LearnedRerankerTrainer.v2`: trains the learned reranker
    (`LearnedReranker.v3`) on a saved linker's candidates of [paths] train, early-stopped
    on [paths] dev, calibrated on dev (training/learned_rerank.py). retriever_features:
    FEATURES_V3 (each retriever's own score and rank, the mention text's annotations);
    false, FEATURES (configs/rank.cfg's, chosen on dev over TF-IDF)."""
    from .learned_rerank import LearnedRerankerTrainer

    return LearnedRerankerTrainer(k=k, num_leaves=num_leaves, learning_rate=learning_rate,
                                  max_rounds=max_rounds,
                                  early_stopping_rounds=early_stopping_rounds,
                                  min_data_in_leaf=min_data_in_leaf, nil_precision=nil_precision,
                                  threads=threads, linker_name=linker_name,
                                  cross_fit_folds=cross_fit_folds,
                                  retriever_features=retriever_features)


@registry.misc("spacy-biolink.FastEncoderTrainer.v3")
def build_fast_encoder_trainer_v3(recipe: str = "auto", align_epochs: int = 3,
                                  corpus_epochs: int = 3, max_minutes: float = 25.0,
                                  concepts_per_batch: int = 64, names_per_concept: int = 2,
                                  hard_concepts: int = 3, n_nearest: int = 8,
                                  temperature: float = 0.05, learning_rate: float = 1e-3,
                                  weight_decay: float = 0.0, freeze_embeddings: bool = False,
                                  corpus_objective: str = "hybrid", topk: int = 20,
                                  mention_batch_size: int = 32,
                                  hybrid_sparse_weights: List[float] = [0.5, 1.0, 2.0],
                                  default_sparse_weight: float = 1.0, torch_threads: int = 0,
                                  distil_epochs: int = 2, distil_batch_size: int = 256,
                                  distil_hard: int = 3, distil_temperature: float = 0.05,
                                  hybrid_weight_learning_rate: float = 0.01):
    """Registered `spacy-biolink.FastEncoderTrainer.v3`: v2's recipes, and corpus_objective
    "hybrid" (its default): the corpus epochs train on the score the hybrid links with,
    dense + w * TF-IDF, w learned beside the encoder (training/fast.py)."""
    from .fast import FastEncoderTrainerV3

    return FastEncoderTrainerV3(
        recipe=recipe, align_epochs=align_epochs, corpus_epochs=corpus_epochs,
        max_minutes=max_minutes, concepts_per_batch=concepts_per_batch,
        names_per_concept=names_per_concept, hard_concepts=hard_concepts, n_nearest=n_nearest,
        temperature=temperature, learning_rate=learning_rate, weight_decay=weight_decay,
        freeze_embeddings=freeze_embeddings, corpus_objective=corpus_objective, topk=topk,
        mention_batch_size=mention_batch_size, hybrid_sparse_weights=hybrid_sparse_weights,
        default_sparse_weight=default_sparse_weight, torch_threads=torch_threads,
        distil_epochs=distil_epochs, distil_batch_size=distil_batch_size,
        distil_hard=distil_hard, distil_temperature=distil_temperature,
        hybrid_weight_learning_rate=hybrid_weight_learning_rate)
