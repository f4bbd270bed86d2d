"""The sieve (Triplet-Search's): a mention whose best corpus (D) name scores at least
`threshold` is answered from the D names alone, before the main index is searched.
"""
from typing import Callable, Dict, List, Optional, Tuple

import numpy

from ...errors import BioLinkError, Errors
from ...index import NameIndex, exact_index
from ...index.concepts import search_concepts
from ...kb.dictionary import SOURCE_DATA


class CorpusSieve:
    """An exact index over the dictionary's corpus names, searched first (threshold set),
    or nothing (threshold None)."""

    step = "sieve"

    def __init__(self, threshold: Optional[float] = None):
        self.threshold = threshold
        self.names = None  # the dictionary cut down to its D names
        self.index: Optional[NameIndex] = None

    @property
    def settings(self) -> Dict:
        """The flat bio_linker settings this step stands for."""
        return {"sieve_threshold": self.threshold}

    @property
    def active(self) -> bool:
        """Whether mentions go through the sieve (a threshold and D names to search)."""
        return self.index is not None

    def build(self, dictionary, name_vectors) -> Optional[NameIndex]:
        """The exact index over the D names, from every name's vectors (nothing encoded
        twice); None without a threshold or D names."""
        if self.threshold is None:
            return None
        _, rows = dictionary.select_names(SOURCE_DATA)
        return exact_index(name_vectors[rows]) if len(rows) else None

    def adopt(self, dictionary, *, where, index: Optional[NameIndex],
              encode_names: Callable) -> None:
        """Take `dictionary` with `index` (built or read); none given while a threshold is
        set (a pipeline saved without one): rebuilt with `encode_names(names)`."""
        self.names, self.index = None, None
        if self.threshold is None:
            return
        data, _ = dictionary.select_names(SOURCE_DATA)
        if index is None and data.n_names:
            index = exact_index(encode_names(data.names))
        if index is not None and index.n_vectors != data.n_names:
            raise BioLinkError(Errors.E104.format(
                path=where, reason=f"the sieve index holds {index.n_vectors} vectors but "
                                   f"the dictionary {data.n_names} D names"))
        if data.n_names:
            self.names, self.index = data, index

    def search(self, vectors, k: int, allowed: Optional[numpy.ndarray]
               ) -> Tuple[Dict[int, List], numpy.ndarray]:
        """The answers of the rows the sieve accepts, by row, and the rows it leaves to the
        main index."""
        found = search_concepts(self.names, self.index, vectors, k, allowed=allowed)
        accepted = numpy.array([bool(c) and c[0][1] >= self.threshold for c in found],
                               dtype=bool)
        answers = {row: found[row] for row in numpy.flatnonzero(accepted).tolist()}
        return answers, numpy.flatnonzero(~accepted)
