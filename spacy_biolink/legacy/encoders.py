"""Superseded encoder architectures (`FastNameEncoder.v1`, `SiameseVerifier.v1`), kept so
that encoders and verifiers saved with them load."""
from typing import List

from spacy.util import registry


@registry.architectures("spacy-biolink.FastNameEncoder.v1")
def build_fast_name_encoder(vocab_size: int = 0, embed_dim: int = 256, hidden_width: int = 128,
                            width: int = 128, n_layers: int = 2, kernel_size: int = 3,
                            dropout: float = 0.1, max_length: int = 25, normalize: bool = True,
                            batch_size: int = 1024):
    """A residual CNN over subword embeddings (ResCNN, Lai et al. 2021): a name encoder made
    for CPUs (encoders/fast.py). vocab_size (the backbone tokenizer's) is filled in by `train`."""
    from ..encoders.fast import fast_name_encoder

    return fast_name_encoder(vocab_size, embed_dim, hidden_width, width, n_layers, kernel_size,
                             dropout, max_length, normalize, batch_size)


@registry.architectures("spacy-biolink.SiameseVerifier.v1")
def build_siamese_verifier(n_vocab: int = 2, embed_dim: int = 100, lstm_hidden: int = 100,
                           dense_sizes: List[int] = [128, 50], attention: bool = False,
                           dropout: float = 0.0, batch_size: int = 1024):
    """Seed 004's Siamese synonymy classifier: List[(name, name)] -> p(synonym).
    n_vocab and embed_dim are filled in by `train` from the word vectors."""
    from ..encoders.siamese import siamese_verifier_v2

    # v1 is v2 over words without the TF-IDF input (v2's model reads a missing `inputs`
    # attr as "words", so v1's saved verifiers load into it as they are)
    return siamese_verifier_v2(n_vocab, embed_dim, lstm_hidden, dense_sizes, attention,
                               dropout, batch_size, inputs="words", tfidf_feature=False)
