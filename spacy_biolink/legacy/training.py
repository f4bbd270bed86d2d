"""Superseded trainer builders (`FastEncoderTrainer.v1`/`v2`, `SiameseTrainer.v1`/`v2`,
`LearnedRerankerTrainer.v1`), kept so that configs written for them still train as
they did."""
from typing import List, Optional

from spacy.util import registry


@registry.misc("spacy-biolink.FastEncoderTrainer.v1")
def build_fast_encoder_trainer(recipe: str = "auto", align_epochs: int = 3,
                               corpus_epochs: int = 3, max_minutes: float = 25.0,
                               concepts_per_batch: int = 64, names_per_concept: int = 2,
                               hard_concepts: int = 3, n_nearest: int = 8,
                               temperature: float = 0.05, learning_rate: float = 1e-3,
                               weight_decay: float = 0.0, freeze_embeddings: bool = False,
                               corpus_objective: str = "marginal", topk: int = 20,
                               mention_batch_size: int = 32,
                               hybrid_sparse_weights: List[float] = [0.5, 1.0, 2.0],
                               default_sparse_weight: float = 1.0, torch_threads: int = 0):
    """Registered `spacy-biolink.FastEncoderTrainer.v1`: trains the fast name encoder on CPU
    cores: synonym alignment over the dictionary, then (with [paths] train) corpus
    fine-tuning (training/fast.py)."""
    from ..training.fast import FastEncoderTrainer

    return FastEncoderTrainer(
        recipe=recipe, align_epochs=align_epochs, corpus_epochs=corpus_epochs,
        max_minutes=max_minutes, concepts_per_batch=concepts_per_batch,
        names_per_concept=names_per_concept, hard_concepts=hard_concepts, n_nearest=n_nearest,
        temperature=temperature, learning_rate=learning_rate, weight_decay=weight_decay,
        freeze_embeddings=freeze_embeddings, corpus_objective=corpus_objective, topk=topk,
        mention_batch_size=mention_batch_size, hybrid_sparse_weights=hybrid_sparse_weights,
        default_sparse_weight=default_sparse_weight, torch_threads=torch_threads)


@registry.misc("spacy-biolink.FastEncoderTrainer.v2")
def build_fast_encoder_trainer_v2(recipe: str = "auto", align_epochs: int = 3,
                                  corpus_epochs: int = 3, max_minutes: float = 25.0,
                                  concepts_per_batch: int = 64, names_per_concept: int = 2,
                                  hard_concepts: int = 3, n_nearest: int = 8,
                                  temperature: float = 0.05, learning_rate: float = 1e-3,
                                  weight_decay: float = 0.0, freeze_embeddings: bool = False,
                                  corpus_objective: str = "marginal", topk: int = 20,
                                  mention_batch_size: int = 32,
                                  hybrid_sparse_weights: List[float] = [0.5, 1.0, 2.0],
                                  default_sparse_weight: float = 1.0, torch_threads: int = 0,
                                  distil_epochs: int = 2, distil_batch_size: int = 256,
                                  distil_hard: int = 3, distil_temperature: float = 0.05):
    """Registered `spacy-biolink.FastEncoderTrainer.v2`: v1's recipes and "distil", which
    first fits the fast encoder to a teacher encoder's similarities ([paths] teacher,
    vectors cached on disk), then trains as v1 (training/fast.py, training/distil.py)."""
    from ..training.fast import FastEncoderTrainerV2

    return FastEncoderTrainerV2(
        recipe=recipe, align_epochs=align_epochs, corpus_epochs=corpus_epochs,
        max_minutes=max_minutes, concepts_per_batch=concepts_per_batch,
        names_per_concept=names_per_concept, hard_concepts=hard_concepts, n_nearest=n_nearest,
        temperature=temperature, learning_rate=learning_rate, weight_decay=weight_decay,
        freeze_embeddings=freeze_embeddings, corpus_objective=corpus_objective, topk=topk,
        mention_batch_size=mention_batch_size, hybrid_sparse_weights=hybrid_sparse_weights,
        default_sparse_weight=default_sparse_weight, torch_threads=torch_threads,
        distil_epochs=distil_epochs, distil_batch_size=distil_batch_size,
        distil_hard=distil_hard, distil_temperature=distil_temperature)


@registry.misc("spacy-biolink.SiameseTrainer.v1")
def build_siamese_trainer(max_epochs: int = 20, batch_size: int = 256,
                          learning_rate: float = 0.001, dev_fraction: float = 0.1,
                          test_fraction: float = 0.1, max_positives_per_concept: int = 10,
                          negatives_per_kind: int = 1, n_similar: int = 20, patience: int = 3,
                          freeze_embeddings: bool = False, torch_threads: int = 1):
    """Frozen. v2 with its own defaults for the new settings, except the NIL rule, which
    stays v1's: the verifier's threshold alone."""
    return build_siamese_trainer_v2(**locals(), nil_rule="verifier")


@registry.misc("spacy-biolink.SiameseTrainer.v2")
def build_siamese_trainer_v2(max_epochs: int = 20, batch_size: int = 256,
                             learning_rate: float = 0.001, dev_fraction: float = 0.1,
                             test_fraction: float = 0.1, max_positives_per_concept: int = 10,
                             negatives_per_kind: int = 1, n_similar: int = 20,
                             patience: int = 3, freeze_embeddings: bool = False,
                             torch_threads: int = 1, corpus_pairs: bool = False,
                             corpus_negatives: int = 3, corpus_top_k: int = 10,
                             corpus_repeat: int = 1, corpus_types: Optional[List[str]] = None,
                             nil_rule: str = "auto", nil_max_accuracy_loss: float = 0.02):
    """v1 plus corpus mention-vs-name pairs ([paths] train) and NIL rules fitted on a dev
    corpus ([paths] dev); see training/siamese.py."""
    from ..training.siamese import SiameseTrainer

    return SiameseTrainer(max_epochs=max_epochs, batch_size=batch_size,
                          learning_rate=learning_rate, dev_fraction=dev_fraction,
                          test_fraction=test_fraction,
                          max_positives_per_concept=max_positives_per_concept,
                          negatives_per_kind=negatives_per_kind, n_similar=n_similar,
                          patience=patience, freeze_embeddings=freeze_embeddings,
                          torch_threads=torch_threads, corpus_pairs=corpus_pairs,
                          corpus_negatives=corpus_negatives, corpus_top_k=corpus_top_k,
                          corpus_repeat=corpus_repeat, corpus_types=corpus_types,
                          nil_rule=nil_rule, nil_max_accuracy_loss=nil_max_accuracy_loss)


@registry.misc("spacy-biolink.LearnedRerankerTrainer.v1")
def build_learned_reranker_trainer(k: int = 20, num_leaves: int = 15,
                                   learning_rate: float = 0.05, max_rounds: int = 500,
                                   early_stopping_rounds: int = 50, min_data_in_leaf: int = 20,
                                   nil_precision: Optional[float] = None, threads: int = 0,
                                   linker_name: Optional[str] = None, cross_fit_folds: int = 0):
    """Registered `spacy-biolink.LearnedRerankerTrainer.v1`: trains the learned reranker
    on a saved linker's candidates of [paths] train, early-stopped on [paths] dev
    (training/learned_rerank.py)."""
    from ..training.learned_rerank import LearnedRerankerTrainer

    return LearnedRerankerTrainer(k=k, num_leaves=num_leaves, learning_rate=learning_rate,
                                  max_rounds=max_rounds,
                                  early_stopping_rounds=early_stopping_rounds,
                                  min_data_in_leaf=min_data_in_leaf, nil_precision=nil_precision,
                                  threads=threads, linker_name=linker_name,
                                  cross_fit_folds=cross_fit_folds)
