"""BNE, the Biomedical Name Encoder (Phan, Sun & Tay, ACL 2019) as a thinc Model.

List[str] -> float32 (n, output_dim) rows, L2-normalised (cosine search, faiss flat).
The torch module is layers/bne.py; this file turns names into its inputs.

A saved encoder is self-contained: the frozen word vectors (a WordVectors table) and
the character alphabet are thinc attrs (msgpack), the weights safetensors. Every size
the module needs (n_chars, word_dim, output_dim, ...) is in the architecture block,
filled in by the trainer, so `spacy.load` rebuilds it before reading the bytes.

Preprocessing follows the authors' code: lowercase, punctuation split off (the same
split as `wordvectors.tokenize`), a few stop words dropped, words cut to 32 characters.
"""
from typing import Dict, List, Optional, Sequence, Tuple

import numpy
from thinc.api import Model

from ..errors import BioLinkError, Errors
from .wordvectors import WordVectors, tokenize
from .torch_wrapper import torch_module, wrap_torch_module

# From the authors' code. Dropped only when the name has other words ("nos" alone stays).
STOP_WORDS = frozenset({"an", "the", "and", "of", "in", "on", "at", "other", "others", "nos"})
PAD_CHAR = 0
UNKNOWN_CHAR = 1


def name_words(text: str, max_word_length: int = 32) -> List[str]:
    """The words BNE reads for a name: "Cancer of the Breast, NOS" -> ["cancer", "breast"]."""
    words = tokenize(text)
    kept = [w for w in words if w not in STOP_WORDS] or words
    return [w[:max_word_length] for w in kept]


def char_alphabet(texts: Sequence[str]) -> str:
    """Every character of the words of `texts`, sorted: the char vocabulary to train with."""
    return "".join(sorted({c for text in texts for w in tokenize(text) for c in w}))


class BneFeaturizer:
    """Names -> the module's inputs. Caches each word's char ids and vector row."""

    def __init__(self, alphabet: str, vectors: WordVectors, max_word_length: int = 32):
        self.max_word_length = max_word_length
        # Ids 0 and 1 are padding and unknown characters.
        self.char_index: Dict[str, int] = {c: i + 2 for i, c in enumerate(alphabet)}
        self.vectors = vectors
        self._words: Dict[str, Tuple[Tuple[int, ...], int]] = {}

    def _word(self, word: str) -> Tuple[Tuple[int, ...], int]:
        found = self._words.get(word)
        if found is None:
            index = self.char_index
            chars = tuple(index.get(c, UNKNOWN_CHAR) for c in word) or (UNKNOWN_CHAR,)
            found = (chars, self.vectors.index.get(word, len(self.vectors)))
            self._words[word] = found
        return found

    def __call__(self, texts: Sequence[str]):
        """(char_ids, char_lengths, word_vectors, word_index, word_counts) as numpy
        arrays: the first three per distinct word of `texts`, see BneNameEncoder.forward."""
        per_name = [name_words(t, self.max_word_length) or [""] for t in texts]
        distinct: Dict[str, int] = {}
        word_index = numpy.fromiter((distinct.setdefault(w, len(distinct))
                                     for ws in per_name for w in ws), dtype=numpy.int64)
        words = [self._word(w) for w in distinct]
        word_counts = numpy.fromiter(map(len, per_name), dtype=numpy.int64, count=len(per_name))
        char_lengths = numpy.fromiter((len(c) for c, _ in words), dtype=numpy.int64,
                                      count=len(words))
        char_ids = numpy.zeros((len(words), int(char_lengths.max(initial=1))), dtype=numpy.int64)
        # One vectorised scatter instead of a loop over words.
        rows = numpy.repeat(numpy.arange(len(words)), char_lengths)
        cols = numpy.arange(len(rows)) - numpy.repeat(numpy.cumsum(char_lengths) - char_lengths,
                                                      char_lengths)
        char_ids[rows, cols] = numpy.fromiter((i for c, _ in words for i in c),
                                              dtype=numpy.int64, count=len(rows))
        vector_rows = numpy.fromiter((r for _, r in words), dtype=numpy.int64, count=len(words))
        unknown = vector_rows == len(self.vectors)
        word_vectors = self.vectors.vectors[numpy.where(unknown, 0, vector_rows)]
        word_vectors[unknown] = 0.0  # unknown words: the char BiLSTM alone speaks for them
        return char_ids, char_lengths, word_vectors, word_index, word_counts

    def context_vectors(self, texts: Sequence[str]) -> numpy.ndarray:
        """Option 2's q(s): the mean pre-trained vector of the known words BNE reads."""
        out = numpy.zeros((len(texts), self.vectors.dim), dtype=numpy.float32)
        for row, text in enumerate(texts):
            ids = [self.vectors.index[w] for w in name_words(text, self.max_word_length)
                   if w in self.vectors.index]
            if ids:
                out[row] = self.vectors.vectors[ids].mean(axis=0)
        return out


def bne_encoder(n_chars: Optional[int], word_dim: Optional[int], char_dim: int = 50,
                char_hidden: int = 200, word_hidden: int = 200, output_dim: Optional[int] = None,
                dropout: float = 0.5, output_activation: str = "linear",
                max_word_length: int = 32, normalize: bool = True,
                batch_size: int = 2048) -> Model[List[str], numpy.ndarray]:
    """The BNE architecture. n_chars / word_dim / output_dim come from the training data
    (`train` fills them in); output_dim defaults to word_dim, the space of Option 2's
    targets, which the logistic losses compare with by dot product."""
    if not n_chars or not word_dim:
        raise BioLinkError(Errors.E640)
    from .layers.bne import BneNameEncoder

    module = BneNameEncoder(n_chars, word_dim, char_dim, char_hidden, word_hidden,
                            output_dim or word_dim, dropout, output_activation)
    return Model("bne_encoder", _bne_forward, layers=[wrap_torch_module(module)],
                 init=_init_noop,
                 attrs={"vectors": WordVectors(), "alphabet": "", "output": "dense",
                        "similarity": "cosine" if normalize else "inner_product",
                        "normalize": normalize, "max_word_length": max_word_length,
                        "batch_size": batch_size, "n_chars": n_chars, "word_dim": word_dim})


def set_vocabulary(model: Model, alphabet: str, vectors: WordVectors) -> None:
    """Give an untrained BNE its alphabet and frozen word vectors (checked against its sizes)."""
    if len(alphabet) + 2 > model.attrs["n_chars"] or vectors.dim != model.attrs["word_dim"]:
        raise BioLinkError(Errors.E641.format(chars=len(alphabet) + 2, n_chars=model.attrs["n_chars"],
                                              dim=vectors.dim, word_dim=model.attrs["word_dim"]))
    model.attrs["alphabet"] = alphabet
    model.attrs["vectors"] = vectors


def featurizer(model: Model) -> BneFeaturizer:
    """Cheap to build (no copy of the table), so built per call rather than cached in
    attrs, where thinc would try to serialize it."""
    vectors: WordVectors = model.attrs["vectors"]
    if not len(vectors) or not model.attrs["alphabet"]:
        raise BioLinkError(Errors.E642)
    return BneFeaturizer(model.attrs["alphabet"], vectors, model.attrs["max_word_length"])


def to_tensors(arrays, device):
    """The numpy arrays as torch tensors on `device`, made contiguous first (torch needs it)."""
    import torch

    return tuple(torch.from_numpy(numpy.ascontiguousarray(a)).to(device) for a in arrays)


def embed(model: Model, texts: Sequence[str], *, normalize: Optional[bool] = None,
          progress: bool = False) -> numpy.ndarray:
    """Name vectors of `texts` without gradients (eval mode), in batches of names of
    similar length (less padding), returned in input order."""
    import torch

    module = torch_module(model)
    normalize = model.attrs["normalize"] if normalize is None else normalize
    texts = list(texts)
    if not texts:
        return numpy.zeros((0, module.output_dim), dtype=numpy.float32)
    features = featurizer(model)
    # Names of similar length together: less padding in the word BiLSTM.
    order = numpy.argsort([len(t) for t in texts], kind="stable")
    batch_size = model.attrs["batch_size"]
    device = next(module.parameters()).device
    out = numpy.zeros((len(texts), module.output_dim), dtype=numpy.float32)
    was_training = module.training
    module.eval()
    starts = range(0, len(texts), batch_size)
    if progress:
        from ..io.progress import progress_bar

        starts = progress_bar(starts, desc="BNE encoding", unit="batch", leave=False)
    try:
        with torch.no_grad():
            for start in starts:
                rows = order[start:start + batch_size]
                vectors = module(*to_tensors(features([texts[i] for i in rows]), device))
                if normalize:
                    vectors = torch.nn.functional.normalize(vectors, dim=-1)
                out[rows] = vectors.float().cpu().numpy()
    finally:
        module.train(was_training)
    return out


def _init_noop(model: Model, X=None, Y=None) -> None:
    # The alphabet, vectors and weights come from training or from bytes: initializing
    # a pipeline (bio_linker.initialize) must never reset them.
    return None


def _no_backprop(d_output):
    raise BioLinkError(Errors.E643)


def _bne_forward(model: Model, texts: List[str], is_train: bool):
    return embed(model, list(texts)), _no_backprop
