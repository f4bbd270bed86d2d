"""Static token vectors extracted from a transformer: the Siamese verifier's subword table.

Seed 004 replaces the Siamese network's BioWordVec rows by token embeddings extracted
from BERT models: every atom string is fed through the model (eval mode), and each token
gets one vector from the hidden states of its occurrences. Its methods, as settings here:

    layers      "last"   the last layer's hidden state
                "last4"  the mean of the last four layers' (the paper's "avg. last 4")
                "input"  the input embedding layer (no context: not in the paper, the
                         cheapest; the issue asks for it)
    occurrence  "avg"    the mean over every occurrence of the token in the contexts
                "first"  its first occurrence
                "last"   its last occurrence

The contexts are names (the trainer passes the training split's). A token that occurs in
none of them (most of a 30k WordPiece vocabulary) is fed alone ([CLS] token [SEP]) and
takes that state, so every row comes from the same layers and has the same scale: an
unseen inflection of a training word is then built of rows like the seen ones.

The extraction runs once, when the verifier is trained; the table is saved with the
verifier's weights (safetensors), so linking never runs the transformer. Variants that
share an extraction (e.g. with and without the TF-IDF feature) can share it through
[paths] token_vectors_cache: a folder of .npy tables named by a hash of the backbone's
weights, the tokenizer, the method and the contexts.
"""
import hashlib
import os
from pathlib import Path
from typing import Optional, Sequence

import numpy
from ..io.progress import progress_bar

from ..errors import BioLinkError, Errors
from ..io.util import PathLike

LAYERS = ("input", "last", "last4")
OCCURRENCES = ("avg", "first", "last")
MAX_CONTEXT_TOKENS = 64


def check_extraction(layers: str, occurrence: str) -> None:
    """E663 for a layers / occurrence value that is not one of the seed's methods."""
    if layers not in LAYERS:
        raise BioLinkError(Errors.E663.format(setting="extraction", value=layers,
                                              options=", ".join(LAYERS)))
    if occurrence not in OCCURRENCES:
        raise BioLinkError(Errors.E663.format(setting="occurrence", value=occurrence,
                                              options=", ".join(OCCURRENCES)))


def extract_token_embeddings(backbone: PathLike, tokenizer_json: str, contexts: Sequence[str],
                             *, layers: str = "last4", occurrence: str = "avg",
                             batch_size: int = 128) -> numpy.ndarray:
    """A (vocabulary size, hidden size) float32 table: one static vector per token id of
    the tokenizer, extracted from the transformer in `backbone` (a local Hugging Face
    directory, read offline) over `contexts` by the seed's method (module docstring)."""
    import torch

    check_extraction(layers, occurrence)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from tokenizers import Tokenizer
    from transformers import AutoModel

    try:
        model = AutoModel.from_pretrained(str(backbone), local_files_only=True)
    except (OSError, ValueError) as err:
        raise BioLinkError(Errors.E651.format(path=backbone,
                                              reason=str(err).splitlines()[0])) from None
    model.eval()
    table = model.get_input_embeddings().weight.detach().float().cpu().numpy().copy()
    tokenizer = Tokenizer.from_str(tokenizer_json)
    if tokenizer.get_vocab_size() > table.shape[0]:
        raise BioLinkError(Errors.E665.format(path=Path(backbone), rows=table.shape[0],
                                              dim=table.shape[1],
                                              vocab=tokenizer.get_vocab_size()))
    if layers == "input":
        return table
    tokenizer.no_padding()
    tokenizer.enable_truncation(MAX_CONTEXT_TOKENS)
    pad_id = next((tokenizer.token_to_id(t) for t in ("[PAD]", "<pad>")
                   if tokenizer.token_to_id(t) is not None), 0)
    sums = numpy.zeros_like(table, dtype=numpy.float64)
    counts = numpy.zeros(table.shape[0], dtype=numpy.int64)

    def states(encodings):
        width = max(len(e.ids) for e in encodings)
        ids = numpy.full((len(encodings), width), pad_id, dtype=numpy.int64)
        mask = numpy.zeros_like(ids)
        for row, e in enumerate(encodings):
            ids[row, :len(e.ids)] = e.ids
            mask[row, :len(e.ids)] = 1
        with torch.no_grad():
            hidden = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                           output_hidden_states=True).hidden_states
        chosen = hidden[-1] if layers == "last" else torch.stack(hidden[-4:]).mean(dim=0)
        return chosen.float().numpy(), ids, mask

    def add(encodings) -> None:
        vectors, ids, mask = states(encodings)
        keep = mask.astype(bool)
        for row, e in enumerate(encodings):
            keep[row, :len(e.ids)] &= ~numpy.asarray(e.special_tokens_mask, dtype=bool)
        flat_ids, flat_vectors = ids[keep], vectors[keep]  # row-major: context order
        if occurrence == "avg":
            numpy.add.at(sums, flat_ids, flat_vectors)
            numpy.add.at(counts, flat_ids, 1)
            return
        if occurrence == "first":
            unique, at = numpy.unique(flat_ids, return_index=True)
            new = counts[unique] == 0
            unique, at = unique[new], at[new]
        else:  # the last occurrence: later batches overwrite earlier ones
            unique, at = numpy.unique(flat_ids[::-1], return_index=True)
            at = len(flat_ids) - 1 - at
        sums[unique] = flat_vectors[at]
        counts[unique] = 1

    texts = [t for t in contexts if t.strip()]
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # less padding
    # "first" / "last" mean the contexts' own order, so only "avg" may reorder them.
    if occurrence != "avg":
        order = list(range(len(texts)))
    for start in progress_bar(range(0, len(texts), batch_size), desc=f"token vectors ({layers})",
                      leave=False, mininterval=5):
        add(tokenizer.encode_batch([texts[i] for i in order[start:start + batch_size]]))
    # Tokens no context holds: each on its own, so every row comes from the same layers.
    unseen = [i for i in range(tokenizer.get_vocab_size()) if counts[i] == 0]
    special = {tokenizer.token_to_id(t) for t in ("[CLS]", "[SEP]", "[PAD]", "[MASK]", "[UNK]",
                                                  "<s>", "</s>", "<pad>", "<mask>", "<unk>")}
    unseen = [i for i in unseen if i not in special]
    for start in progress_bar(range(0, len(unseen), 1024), desc="token vectors (unseen tokens)",
                      leave=False, mininterval=5):
        chunk = unseen[start:start + 1024]
        vectors, ids, mask = states([_single(tokenizer, i) for i in chunk])
        sums[chunk] = vectors[:, 1]  # [CLS] token [SEP]
        counts[chunk] = 1
    seen = counts > 0
    table[seen] = (sums[seen] / counts[seen, None]).astype(numpy.float32)
    return table


def cached_token_embeddings(cache_dir: Optional[PathLike], backbone: PathLike,
                            tokenizer_json: str, contexts: Sequence[str], *,
                            layers: str = "last4", occurrence: str = "avg") -> numpy.ndarray:
    """extract_token_embeddings, read from / written to `cache_dir` (None: no cache) as
    <hash>.npy (numpy's format, loaded with allow_pickle=False)."""
    if cache_dir in (None, "", "null"):
        return extract_token_embeddings(backbone, tokenizer_json, contexts, layers=layers,
                                        occurrence=occurrence)
    from ..io.files import atomic_file

    digest = hashlib.sha256()
    for part in (layers, occurrence, tokenizer_json, *contexts):
        digest.update(part.encode("utf8") + b"\0")
    for weights in sorted(Path(backbone).glob("*.safetensors")) + sorted(Path(backbone).glob("*.bin")):
        digest.update(f"{weights.name}:{weights.stat().st_size}:{weights.stat().st_mtime_ns}"
                      .encode("utf8"))
    path = Path(cache_dir) / f"token_vectors_{digest.hexdigest()[:24]}.npy"
    if path.is_file():
        return numpy.load(path, allow_pickle=False)
    table = extract_token_embeddings(backbone, tokenizer_json, contexts, layers=layers,
                                     occurrence=occurrence)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path, "wb") as fileh:
        numpy.save(fileh, table, allow_pickle=False)
    return table


class _Single:
    """An encoding-like ([CLS], token, [SEP]) for one token id."""

    def __init__(self, ids):
        self.ids = ids
        self.special_tokens_mask = [1, 0, 1]


def _single(tokenizer, token_id: int) -> _Single:
    cls = next((tokenizer.token_to_id(t) for t in ("[CLS]", "<s>")
                if tokenizer.token_to_id(t) is not None), token_id)
    sep = next((tokenizer.token_to_id(t) for t in ("[SEP]", "</s>")
                if tokenizer.token_to_id(t) is not None), token_id)
    return _Single([cls, token_id, sep])
