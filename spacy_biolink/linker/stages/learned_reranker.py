"""A learned reranker stage: LightGBM's lambdarank over features of each (mention,
candidate) pair, computed from the linker's own candidates after every earlier stage.

Features (FEATURES, one row per candidate of each linked text):
- retrieval: the candidate's score, its rank, the gap to the best score and the ratio to it;
- lexical: whether the query key is a (folded) name of the candidate, token and character
  trigram Jaccard with the candidate's closest name, the length ratio to that name,
  whether the text is a spelled-out short form, whether it is a composite's part;
- prior: log(1 + how often the augmenting corpora annotated the concept), log(1 + its
  names);
- type: how often the training mentions of the span's label had a concept of this type
  (the concept's best type; missing when the dictionary has no types);
- document: how many other mentions of the same document have the candidate first, and
  how many have it among their k.
`.v3` adds (FEATURES_V3):
- each retriever apart: where the first stage is a hybrid (HybridIndex), the dense and
  the TF-IDF score of the candidate (each the best over its names, as that retriever
  alone would score it), its rank among the k by each and the gap to each one's best;
  over one retriever, its part is the candidate's score and the other part is missing;
- corpus annotations of the query key itself: log(1 + how often the augmenting corpora
  gave this exact (folded) text this concept), and that count's share of every concept
  the text was given (missing where the text was never annotated).
Scores become probabilities (softmax over the k candidates at a temperature fitted on
dev), so `nil_threshold` (fitted on dev for a target precision) makes a mention NIL
where the top candidate is unlikely to be right; the probability is the span's score.
The model is saved in LightGBM's own text format, never pickled.
"""
import math
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy
import srsly

from ...errors import BioLinkError, Errors
from ...io.util import PathLike
from . import Stage

FEATURES = ("score", "rank", "gap_to_best", "score_ratio",
            "exact_name", "token_jaccard", "trigram_jaccard", "length_ratio",
            "short_form", "composite_part",
            "log_annotations", "log_names",
            "label_type_rate",
            "doc_top_votes", "doc_topk_votes")
# `.v3`: FEATURES, then each retriever's own score, rank and gap, and the key's annotations.
RETRIEVER_FEATURES = ("dense_score", "dense_rank", "dense_gap",
                      "tfidf_score", "tfidf_rank", "tfidf_gap",
                      "key_annotations", "key_annotation_share")
FEATURES_V3 = FEATURES + RETRIEVER_FEATURES
MODEL_FILE = "model.txt"
SETTINGS_FILE = "learned_reranker.json"
LABEL_TYPES_FILE = "label_types.json"
CALIBRATION_FILE = "calibration.json"
# The most dictionary names the feature tables keep before they start again.
MAX_TABLE_NAMES = 2_000_000


def _gram_sets(texts: Sequence[str]) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """The character-trigram set of each text padded with a space each side (a text of
    nothing: its one two-space "gram"), as CSR (indptr, sorted unique codes): three code
    points packed in 21 bits each."""
    padded = [f" {t} " for t in texts]
    n = len(padded)
    lengths = numpy.fromiter(map(len, padded), numpy.int64, n)
    points = numpy.frombuffer("".join(padded).encode("utf-32-le", "surrogatepass"),
                              dtype=numpy.uint32).astype(numpy.int64)
    starts = numpy.zeros(n, numpy.int64)
    numpy.cumsum(lengths[:-1], out=starts[1:])
    counts = numpy.maximum(lengths - 2, 1)
    owner = numpy.repeat(numpy.arange(n), counts)
    first = numpy.zeros(n, numpy.int64)
    numpy.cumsum(counts[:-1], out=first[1:])
    pos = numpy.arange(int(counts.sum())) - numpy.repeat(first - starts, counts)
    third = numpy.minimum(pos + 2, len(points) - 1)
    codes = (points[pos] << 42) | (points[pos + 1] << 21) | points[third]
    # The two-space "gram" of an empty text: no code point is 0x1FFFFF, so it matches
    # no three-character gram.
    codes[numpy.repeat(lengths == 2, counts)] = (32 << 42) | (32 << 21) | 0x1FFFFF
    order = numpy.lexsort((codes, owner))
    owner, codes = owner[order], codes[order]
    keep = numpy.ones(len(codes), bool)
    keep[1:] = (owner[1:] != owner[:-1]) | (codes[1:] != codes[:-1])
    indptr = numpy.zeros(n + 1, numpy.int64)
    numpy.cumsum(numpy.bincount(owner[keep], minlength=n), out=indptr[1:])
    return indptr, numpy.ascontiguousarray(codes[keep])


def _csr(rows: Sequence[Sequence[int]]) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Lists of ints as CSR (indptr, values)."""
    indptr = numpy.zeros(len(rows) + 1, numpy.int64)
    numpy.cumsum(numpy.fromiter(map(len, rows), numpy.int64, len(rows)), out=indptr[1:])
    values = numpy.fromiter((v for row in rows for v in row), numpy.int64, int(indptr[-1]))
    return indptr, values


class _ConceptView:
    """What the features read of one dictionary, kept while the dictionary is the same:
    annotation and name counts per concept, each label's type rate per concept, and the
    names of every concept met so far as arrays (folded-name id, length, sorted trigram
    codes, sorted token ids), added a batch at a time."""

    def __init__(self, linker):
        dictionary = linker.dictionary
        self.dictionary = dictionary
        self.fold = linker.normalizer.name
        n = dictionary.n_concepts
        counts = numpy.bincount(dictionary.name_concepts, weights=dictionary.name_concept_counts,
                                minlength=n)
        self.log_annotations = numpy.log1p(counts)
        self.log_names = numpy.log1p(numpy.bincount(dictionary.name_concepts, minlength=n))
        self._type_rates: Dict[str, Tuple[Dict, numpy.ndarray]] = {}
        # `.v3` only, built on first use: folded annotated text -> {concept: count}; the
        # searched dictionary's concept -> name rows and the index's name rows as CSR.
        self._annotated: Optional[Dict[str, Dict[int, int]]] = None
        self._searched = None
        self._concept_names: Optional[Tuple[numpy.ndarray, numpy.ndarray]] = None
        self._sparse_names = None
        self.forget_names()

    def forget_names(self) -> None:
        """Empty the name tables (they fill again as concepts are met)."""
        n = self.dictionary.n_concepts
        self.concept_start = numpy.full(n, -1, numpy.int64)
        self.concept_count = numpy.zeros(n, numpy.int64)
        self.tokens: Dict[str, int] = {}
        self.folds: Dict[str, int] = {}
        empty = numpy.zeros(0, numpy.int64)
        self.name_fold, self.name_length = empty, empty
        self.gram_ptr, self.grams = numpy.zeros(1, numpy.int64), empty
        self.token_ptr, self.name_tokens = numpy.zeros(1, numpy.int64), empty
        # Trigram codes met in names (sorted) and their ids (in order of arrival).
        self.gram_codes, self.gram_ids = empty, empty

    def gram_id(self, codes: numpy.ndarray, add: bool = False) -> numpy.ndarray:
        """The vocabulary id of each trigram code (-1 for one no name has); with add,
        codes not met yet get new ids."""
        if add:
            new = numpy.setdiff1d(codes, self.gram_codes)
            if len(new):
                codes_all = numpy.concatenate([self.gram_codes, new])
                ids_all = numpy.concatenate([self.gram_ids, len(self.gram_codes)
                                             + numpy.arange(len(new), dtype=numpy.int64)])
                order = numpy.argsort(codes_all, kind="stable")
                self.gram_codes, self.gram_ids = codes_all[order], ids_all[order]
        if not len(self.gram_codes):
            return numpy.full(len(codes), -1, numpy.int64)
        at = numpy.minimum(numpy.searchsorted(self.gram_codes, codes), len(self.gram_codes) - 1)
        return numpy.where(self.gram_codes[at] == codes, self.gram_ids[at], -1)

    def add_concepts(self, concepts: numpy.ndarray) -> None:
        """Put the names of those `concepts` not yet met into the name arrays."""
        new = numpy.unique(concepts[self.concept_start[concepts] < 0])
        if not len(new):
            return
        if len(self.name_fold) > MAX_TABLE_NAMES:
            # A huge dictionary streamed long enough would hold all its names here
            # (~250 bytes each): start again with this batch's concepts.
            self.forget_names()
            new = numpy.unique(concepts)
        folded, owners = [], []
        for c in new.tolist():
            names = [self.fold(name) for name in self.dictionary.names_of(c)]
            folded.extend(names)
            owners.append(len(names))
        tokens, folds = self.tokens, self.folds
        token_ids = [sorted({tokens.setdefault(t, len(tokens)) for t in f.split()}) for f in folded]
        gram_ptr, grams = _gram_sets(folded)
        token_ptr, name_tokens = _csr(token_ids)
        n_names = len(self.name_fold)
        counts = numpy.asarray(owners, numpy.int64)
        self.concept_count[new] = counts
        self.concept_start[new] = n_names + numpy.cumsum(counts) - counts
        self.name_fold = numpy.concatenate(
            [self.name_fold, numpy.fromiter((folds.setdefault(f, len(folds)) for f in folded),
                                            numpy.int64, len(folded))])
        self.name_length = numpy.concatenate(
            [self.name_length, numpy.fromiter(map(len, folded), numpy.int64, len(folded))])
        self.gram_ptr = numpy.concatenate([self.gram_ptr, self.gram_ptr[-1] + gram_ptr[1:]])
        self.grams = numpy.concatenate([self.grams, self.gram_id(grams, add=True)])
        self.token_ptr = numpy.concatenate([self.token_ptr, self.token_ptr[-1] + token_ptr[1:]])
        self.name_tokens = numpy.concatenate([self.name_tokens, name_tokens])

    def key_arrays(self, keys: Sequence[str]) -> Tuple[numpy.ndarray, ...]:
        """gram_ptr, grams, token_ptr, tokens, fold id, length of each query key, in the
        name arrays' terms (a gram, token or folded form no name has gets an id no name
        has)."""
        tokens, folds = self.tokens, self.folds
        token_ids = []
        for key in keys:
            unknown: Dict[str, int] = {}
            token_ids.append(sorted({tokens[t] if t in tokens else
                                     unknown.setdefault(t, -1 - len(unknown))
                                     for t in key.split()}))
        gram_ptr, grams = _gram_sets(keys)
        grams = self.gram_id(grams)
        token_ptr, key_tokens = _csr(token_ids)
        fold = numpy.fromiter((folds.get(key, -1) for key in keys), numpy.int64, len(keys))
        length = numpy.fromiter(map(len, keys), numpy.int64, len(keys))
        return gram_ptr, grams, token_ptr, key_tokens, fold, length

    def lexical(self, keys: Sequence[str], pair_key: numpy.ndarray, pair_concept: numpy.ndarray
                ) -> numpy.ndarray:
        """exact_name, token_jaccard, trigram_jaccard, length_ratio of each (keys[pair_key],
        pair_concept) pair against the concept's closest name, one row per pair."""
        from .learned_reranker_kernels import lexical_features

        from .learned_reranker_kernels import in_threads

        self.add_concepts(pair_concept)
        out = numpy.zeros((len(pair_key), 4))
        pair_key = numpy.ascontiguousarray(pair_key, numpy.int64)
        pair_concept = numpy.ascontiguousarray(pair_concept, numpy.int64)
        key_arrays = self.key_arrays(keys)

        def run(a: int, b: int) -> None:
            # Each thread marks its keys' grams in its own scratch.
            mark = numpy.zeros(len(self.gram_codes), bool)
            lexical_features(pair_key[a:b], pair_concept[a:b], *key_arrays, self.concept_start,
                             self.concept_count, self.gram_ptr, self.grams, self.token_ptr,
                             self.name_tokens, self.name_fold, self.name_length, mark, out[a:b])

        in_threads(len(pair_key), run)
        return out

    def key_annotations(self, keys: Sequence[str], pair_key: numpy.ndarray,
                        pair_concept: numpy.ndarray) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """Per (keys[pair_key], pair_concept) pair: log(1 + how often the corpus
        annotations gave that exact folded text that concept), and that count over the
        text's annotations with any concept (NaN for a text never annotated)."""
        if self._annotated is None:
            dictionary = self.dictionary
            counted = numpy.flatnonzero(dictionary.name_concept_counts)
            owners = numpy.searchsorted(dictionary.name_concepts_indptr, counted,
                                        side="right") - 1
            table: Dict[str, Dict[int, int]] = {}
            for pos, n in zip(counted.tolist(), owners.tolist()):
                by_concept = table.setdefault(self.fold(dictionary.names[n]), {})
                c = int(dictionary.name_concepts[pos])
                by_concept[c] = by_concept.get(c, 0) + int(dictionary.name_concept_counts[pos])
            self._annotated = table
        count = numpy.zeros(len(pair_key))
        share = numpy.full(len(pair_key), math.nan)
        table = self._annotated
        if table:
            for i, (g, c) in enumerate(zip(pair_key.tolist(), pair_concept.tolist())):
                by_concept = table.get(keys[g])
                if by_concept:
                    count[i] = by_concept.get(c, 0)
                    share[i] = count[i] / sum(by_concept.values())
        return numpy.log1p(count), share

    def retriever_parts(self, linker, keys: Sequence[str], pair_key: numpy.ndarray,
                        pair_concept: numpy.ndarray
                        ) -> Optional[Tuple[numpy.ndarray, numpy.ndarray]]:
        """The dense and the TF-IDF score of each (keys[pair_key], pair_concept) pair, each
        the best over the concept's searched names (NaN for a concept with none), where
        the linker searches a HybridIndex by name; None otherwise. The parts are those
        the hybrid sums, each with its weight."""
        from ...index.hybrid import HybridIndex

        retriever = linker.retriever
        index = retriever.index
        if not isinstance(index, HybridIndex) or retriever.index_level != "name":
            return None
        searched = retriever.searched
        if self._searched is not searched:
            owners = numpy.repeat(numpy.arange(searched.n_names),
                                  numpy.diff(searched.name_concepts_indptr))
            order = numpy.argsort(searched.name_concepts, kind="stable")
            indptr = numpy.zeros(searched.n_concepts + 1, numpy.int64)
            numpy.cumsum(numpy.bincount(searched.name_concepts, minlength=searched.n_concepts),
                         out=indptr[1:])
            self._concept_names = (indptr, owners[order])
            # Name rows of the sparse part (the index keeps its postings, features first).
            self._sparse_names = index.sparse.names_t.T.tocsr()
            self._searched = searched
        indptr, names = self._concept_names
        # The rows the batch's search encoded, where the linker kept them (inside link).
        queries = linker.query_vectors(list(keys))
        width = index.dense_width
        dense_queries = numpy.asarray(queries[:, :width].toarray(), numpy.float32)
        sparse_queries = queries[:, width:].tocsr()
        start = indptr[pair_concept]
        count = indptr[pair_concept + 1] - start
        first = numpy.cumsum(count) - count
        pair_of = numpy.repeat(numpy.arange(len(pair_key)), count)
        name_of = names[numpy.repeat(start - first, count) + numpy.arange(int(count.sum()))]
        key_of = pair_key[pair_of]
        dense = numpy.zeros(len(name_of), numpy.float64)
        tfidf = numpy.zeros(len(name_of), numpy.float64)
        step = 65536  # rows of dense vectors at a time
        for a in range(0, len(name_of), step):
            b = min(a + step, len(name_of))
            unique, inverse = numpy.unique(name_of[a:b], return_inverse=True)
            rows = index.dense.index.reconstruct_batch(unique)
            dense[a:b] = numpy.einsum("ij,ij->i", dense_queries[key_of[a:b]],
                                      rows[inverse.reshape(-1)])
            tfidf[a:b] = numpy.asarray(sparse_queries[key_of[a:b]].multiply(
                self._sparse_names[name_of[a:b]]).sum(axis=1)).reshape(-1)
        out_dense = numpy.full(len(pair_key), math.nan)
        out_tfidf = numpy.full(len(pair_key), math.nan)
        named = count > 0
        if named.any():
            out_dense[named] = numpy.maximum.reduceat(dense, first[named])
            out_tfidf[named] = numpy.maximum.reduceat(tfidf, first[named])
        return out_dense, out_tfidf

    def type_rates(self, label: str, rates: Dict[str, float]) -> numpy.ndarray:
        """Per concept, the highest of `rates` over its types (0 for a type not in it;
        NaN for a concept without types, or for every concept where `rates` is empty or
        the dictionary has no types)."""
        found = self._type_rates.get(label)
        if found is not None and found[0] is rates:
            return found[1]
        out = numpy.full(self.dictionary.n_concepts, math.nan)
        types = self.dictionary.types
        if rates and types is not None:
            joined = numpy.asarray(list(types), dtype=object)
            distinct, inverse = numpy.unique(joined, return_inverse=True)
            per = numpy.array([max((rates.get(t, 0.0) for t in j.split("|")), default=math.nan)
                               if j else math.nan for j in distinct.tolist()])
            out = per[inverse.reshape(-1)]
        self._type_rates[label] = (rates, out)
        return out


def _document_votes(doc_of_group: numpy.ndarray, group: numpy.ndarray, first: numpy.ndarray,
                    concept: numpy.ndarray) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """For each candidate row: how many other linked texts of its document have that
    concept first, and how many have it among their candidates (0 and 0 for a mention
    without a document)."""
    top_votes = numpy.zeros(len(concept))
    topk_votes = numpy.zeros(len(concept))
    doc = doc_of_group[group]
    has_doc = doc >= 0
    if not has_doc.any():
        return top_votes, topk_votes
    width = int(concept.max()) + 1
    row_code = doc * width + concept
    tops = doc_of_group >= 0
    top_code = numpy.unique(doc_of_group[tops] * width + concept[first[tops]], return_counts=True)
    # Each text counts once per concept, however often its list repeats it.
    listed = numpy.unique(group[has_doc] * width + concept[has_doc])
    listed_code = numpy.unique(doc_of_group[listed // width] * width + listed % width,
                               return_counts=True)

    def count(codes, found):
        values, counts = found
        at = numpy.minimum(numpy.searchsorted(values, codes), len(values) - 1)
        return numpy.where(values[at] == codes, counts[at], 0)

    own_top = concept == concept[first][group]
    top_votes[has_doc] = (count(row_code, top_code) - own_top)[has_doc]
    topk_votes[has_doc] = (count(row_code, listed_code) - 1)[has_doc]
    return top_votes, topk_votes


def _group_ranks(values: numpy.ndarray, group: numpy.ndarray, first: numpy.ndarray
                 ) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Each row's rank within its group by `values` (highest first, ties in row order)
    and its gap to the group's highest (NaN rows: NaN, and last in the ranking)."""
    missing = numpy.isnan(values)
    ranked = numpy.where(missing, -numpy.inf, values)
    order = numpy.lexsort((-ranked, group))
    rank = numpy.empty(len(values))
    rank[order] = numpy.arange(len(values)) - first[group[order]]
    best = numpy.maximum.reduceat(ranked, first)[group]
    gap = best - values
    rank[missing] = math.nan
    gap[missing] = math.nan
    return rank, gap


class _Trees:
    """A LightGBM model's trees as flat arrays, scored by a compiled loop: the same sums
    as `Booster.predict` at a fraction of its per-row cost on a batch of candidates."""

    MISSING = {"None": 0, "Zero": 1, "NaN": 2}

    def __init__(self, booster):
        dumped = booster.dump_model()
        roots, feature, threshold, missing, default_left, left, right, leaves = (
            [], [], [], [], [], [], [], [])

        def add(node) -> int:
            if "leaf_value" in node or "split_feature" not in node:
                leaves.append(float(node.get("leaf_value", 0.0)))
                return ~(len(leaves) - 1)
            if node.get("decision_type", "<=") != "<=":
                raise BioLinkError(Errors.E531.format(
                    path="<learned reranker>", reason="the model has a categorical split"))
            at = len(feature)
            feature.append(int(node["split_feature"]))
            threshold.append(float(node["threshold"]))
            missing.append(self.MISSING[node.get("missing_type", "None")])
            default_left.append(int(bool(node.get("default_left", True))))
            left.append(0)
            right.append(0)
            left[at] = add(node["left_child"])
            right[at] = add(node["right_child"])
            return at

        for tree in dumped["tree_info"]:
            roots.append(add(tree["tree_structure"]))
        as_int = lambda values: numpy.asarray(values, numpy.int64)  # noqa: E731
        self.arrays = (as_int(roots), as_int(feature), numpy.asarray(threshold, numpy.float64),
                       as_int(missing), as_int(default_left), as_int(left), as_int(right),
                       numpy.asarray(leaves, numpy.float64))

    def predict(self, rows: numpy.ndarray) -> numpy.ndarray:
        """The raw score of each row."""
        from .learned_reranker_kernels import in_threads, tree_scores

        out = numpy.zeros(len(rows))
        rows = numpy.ascontiguousarray(rows, numpy.float64)
        in_threads(len(rows), lambda a, b: tree_scores(rows[a:b], *self.arrays, out[a:b]))
        return out


def _softmax_groups(raw: numpy.ndarray, size: numpy.ndarray, temperature: float
                    ) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """The softmax of raw scores / temperature within each group of consecutive rows
    (sizes `size`), and the row order that ranks each group by it (ties keep their
    order), groups kept in place."""
    if not len(size):
        return raw.astype(numpy.float64), numpy.zeros(0, numpy.int64)
    group = numpy.repeat(numpy.arange(len(size)), size)
    first = numpy.zeros(len(size), numpy.int64)
    numpy.cumsum(size[:-1], out=first[1:])
    z = numpy.asarray(raw, numpy.float64) / max(float(temperature), 1e-6)
    e = numpy.exp(z - numpy.maximum.reduceat(z, first)[group])
    probs = e / numpy.add.reduceat(e, first)[group]
    return probs, numpy.lexsort((-probs, group))


class LearnedReranker(Stage):
    """The LightGBM ranker, the k candidates it reranks, its temperature and NIL rule,
    the label -> type rates learned from the training mentions, and (trained by this
    version) the calibration of the top candidate's probability fitted on dev.

    calibrated (`.v2`): scores are rescaled so that the top candidate's is the calibrated
    probability that it is right (`span._.kb_ents[0][1]`), the others keeping their
    ratio to it: they rank and compare, but are not probabilities, and where the
    calibration raises the top above its softmax probability the list sums past 1
    (a calibrated top probability; others keep their ratio); nil_precision then sets the NIL threshold on that probability from the
    dev curve saved with the model (the threshold at which the dev mentions answered are
    right that often). Without (`.v1`): softmax probabilities and nil_threshold.

    retriever_features (`.v3`, calibrated as `.v2`): the rows are FEATURES_V3, which
    add each retriever's own score, rank and gap and the query key's annotations."""

    level = "mentions"

    def __init__(self, *, k: int = 20, temperature: float = 1.0,
                 nil_threshold: Optional[float] = None, calibrated: bool = False,
                 nil_precision: Optional[float] = None, retriever_features: bool = False):
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise BioLinkError(Errors.E530.format(setting="k", value=k, what="an integer >= 1"))
        if not temperature > 0:
            raise BioLinkError(Errors.E530.format(setting="temperature", value=temperature,
                                                  what="a number > 0"))
        if nil_threshold is not None and not 0.0 <= nil_threshold <= 1.0:
            raise BioLinkError(Errors.E530.format(setting="nil_threshold", value=nil_threshold,
                                                  what="null or a probability in [0, 1]"))
        if nil_precision is not None and not (calibrated and 0.0 < nil_precision < 1.0
                                              and nil_threshold is None):
            raise BioLinkError(Errors.E530.format(
                setting="nil_precision", value=nil_precision,
                what="null, or a precision in (0, 1) with nil_threshold null (a calibrated "
                     "LearnedReranker)"))
        self.k = k
        self.retriever_features = bool(retriever_features)
        self.feature_names = FEATURES_V3 if self.retriever_features else FEATURES
        self.temperature = float(temperature)
        self.nil_threshold = nil_threshold
        self.calibrated = bool(calibrated)
        self.nil_precision = nil_precision
        self.booster = None
        self.label_types: Dict[str, Dict[str, float]] = {}
        self.calibration: Optional[Dict[str, List[float]]] = None
        self._view: Optional[_ConceptView] = None

    @property
    def uses_query_vectors(self) -> bool:
        """`.v3` reads the encoded queries (each retriever's part over a hybrid)."""
        return self.retriever_features

    def confidence(self, top: numpy.ndarray) -> numpy.ndarray:
        """The probability that each top candidate is right: calibrated (Platt scaling of
        the logit of its softmax probability, fitted on dev) when the stage is; its
        softmax probability otherwise."""
        top = numpy.asarray(top, numpy.float64)
        if not self.calibrated:
            return top
        if self.calibration is None:
            raise BioLinkError(Errors.E531.format(
                path="<learned reranker>", reason="a calibrated LearnedReranker needs a calibration on "
                "dev, which this model was trained without: train it again with this version"))
        a, b = self.calibration["platt"]
        return platt(top, a, b)

    @property
    def nil_cutoff(self) -> Optional[float]:
        """The confidence under which a mention is NIL: from nil_precision on the saved
        dev curve where it is set, else nil_threshold (None: never NIL)."""
        if self.nil_precision is None:
            return self.nil_threshold
        self.confidence(numpy.zeros(0))  # E531 without a calibration
        found = nil_threshold_for(numpy.asarray(self.calibration["dev_confidence"]),
                                  numpy.asarray(self.calibration["dev_right"], bool),
                                  self.nil_precision)
        # No dev threshold reaches the precision: everything is NIL rather than nothing.
        return 1.0 + 1e-9 if found is None else found

    # Features ---------------------------------------------------------------

    def view(self, linker) -> _ConceptView:
        """The concept tables of the linker's dictionary (rebuilt when it changes)."""
        if self._view is None or self._view.dictionary is not linker.dictionary:
            self._view = _ConceptView(linker)
        return self._view

    def features(self, linker, mentions: Sequence, links: Sequence) -> numpy.ndarray:
        """One row of `feature_names` (FEATURES, or FEATURES_V3) per candidate (the first
        k) of every linked text, in order: mention by mention, part by part, candidate by
        candidate; computed for the whole batch at once (the lexical ones once per
        distinct (query key, concept) pair)."""
        return self._rows(linker, mentions, links)[0]

    def _rows(self, linker, mentions: Sequence, links: Sequence
              ) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
        """features(), with each row's concept and each linked text's number of rows
        (texts without candidates left out)."""
        view = self.view(linker)
        k = self.k
        concepts: List[int] = []
        scores: List[float] = []
        sizes, key_of_group, docs, flags, label_of_group = [], [], [], [], []
        doc_ids: Dict[int, int] = {}
        key_ids: Dict[str, int] = {}  # text -> id of its query key
        keys: Dict[str, int] = {}  # query key -> id
        label_ids: Dict[str, int] = {}
        for mention, parts in zip(mentions, links):
            doc = -1 if mention.doc is None else doc_ids.setdefault(id(mention.doc), len(doc_ids))
            raw = " ".join(mention.text.split())
            label = label_ids.setdefault(mention.label or "", len(label_ids))
            for text, candidates in parts:
                candidates = candidates[:k]
                if not candidates:
                    continue
                ids, values = zip(*candidates)
                concepts.extend(ids)
                scores.extend(values)
                sizes.append(len(candidates))
                key = key_ids.get(text)
                if key is None:
                    key = key_ids[text] = keys.setdefault(linker.query_key(text), len(keys))
                key_of_group.append(key)
                docs.append(doc)
                flags.append((float(len(parts) == 1 and text != raw and len(raw) <= 10),
                              float(len(parts) > 1)))
                label_of_group.append(label)
        out = numpy.zeros((len(concepts), len(self.feature_names)))
        if not concepts:
            return out, numpy.zeros(0, numpy.int64), numpy.zeros(0, numpy.int64)
        concept = numpy.asarray(concepts, numpy.int64)
        score = numpy.asarray(scores, numpy.float64)
        size = numpy.asarray(sizes, numpy.int64)
        group = numpy.repeat(numpy.arange(len(sizes)), size)
        first = numpy.zeros(len(sizes), numpy.int64)
        numpy.cumsum(size[:-1], out=first[1:])
        column = {name: i for i, name in enumerate(self.feature_names)}
        best = score[first][group]
        out[:, column["score"]] = score
        out[:, column["rank"]] = numpy.arange(len(concept)) - first[group]
        out[:, column["gap_to_best"]] = best - score
        positive = best > 0
        out[positive, column["score_ratio"]] = score[positive] / best[positive]
        # Lexical: once per distinct (key, concept) pair.
        n_concepts = view.dictionary.n_concepts
        key_of_row = numpy.asarray(key_of_group, numpy.int64)[group]
        pairs, pair_of_row = numpy.unique(key_of_row * n_concepts + concept, return_inverse=True)
        lexical = view.lexical(list(keys), pairs // n_concepts, pairs % n_concepts)
        at = column["exact_name"]
        out[:, at:at + 4] = lexical[pair_of_row.reshape(-1)]
        flag = numpy.asarray(flags, numpy.float64)[group]
        out[:, column["short_form"]] = flag[:, 0]
        out[:, column["composite_part"]] = flag[:, 1]
        out[:, column["log_annotations"]] = view.log_annotations[concept]
        out[:, column["log_names"]] = view.log_names[concept]
        type_rate = out[:, column["label_type_rate"]]
        type_rate[:] = math.nan
        label_of_row = numpy.asarray(label_of_group, numpy.int64)[group]
        for label, at in label_ids.items():
            rates = self.label_types.get(label, {})
            if rates:
                rows = label_of_row == at
                type_rate[rows] = view.type_rates(label, rates)[concept[rows]]
        out[:, column["doc_top_votes"]], out[:, column["doc_topk_votes"]] = _document_votes(
            numpy.asarray(docs, numpy.int64), group, first, concept)
        if self.retriever_features:
            self._retriever_rows(linker, view, list(keys), pairs // n_concepts,
                                 pairs % n_concepts, pair_of_row.reshape(-1), group, first,
                                 score, out, column)
        return out, concept, size

    @staticmethod
    def _retriever_rows(linker, view, keys, pair_key, pair_concept, pair_of_row, group, first,
                        score, out, column) -> None:
        """Fill the `.v3` columns of `out`: each retriever's score, rank and gap (over a
        hybrid, computed per distinct (key, concept) pair; over one retriever, the
        candidate's score is that one's and the other is missing), and the key's
        annotations with the candidate."""
        parts = view.retriever_parts(linker, keys, pair_key, pair_concept)
        if parts is not None:
            dense, tfidf = (part[pair_of_row] for part in parts)
        else:
            missing = numpy.full(len(score), math.nan)
            if getattr(linker.retriever.index, "vector_kind", "") == "dense":
                dense, tfidf = score, missing
            else:
                dense, tfidf = missing, score
        for name, values in (("dense", dense), ("tfidf", tfidf)):
            rank, gap = _group_ranks(values, group, first)
            out[:, column[f"{name}_score"]] = values
            out[:, column[f"{name}_rank"]] = rank
            out[:, column[f"{name}_gap"]] = gap
        count, share = view.key_annotations(keys, pair_key, pair_concept)
        out[:, column["key_annotations"]] = count[pair_of_row]
        out[:, column["key_annotation_share"]] = share[pair_of_row]

    # As a stage of the linker -----------------------------------------------

    def scores(self, features: numpy.ndarray) -> numpy.ndarray:
        """The ranker's raw score of each feature row."""
        if self.booster is None:
            raise BioLinkError(Errors.E531.format(path="<learned reranker>",
                                                  reason="no trained model loaded"))
        if not len(features):
            return numpy.zeros(0)
        return self._trees.predict(features)

    def apply_to_mentions(self, linker, mentions: Sequence, links: Sequence) -> List:
        """Each linked text's first k candidates in the ranker's order, scored by their
        probability (calibrated: see `confidence`); a text whose top candidate's
        probability is under the NIL threshold gets none. One LightGBM call per batch."""
        features, concept, size = self._rows(linker, mentions, links)
        raw = self.scores(features)
        probs, order = _softmax_groups(raw, size, self.temperature)
        first = numpy.zeros(len(size), numpy.int64)
        numpy.cumsum(size[:-1], out=first[1:])
        top = probs[order[first]] if len(size) else probs
        confidence = self.confidence(top)
        scale = confidence / numpy.maximum(top, 1e-300) if self.calibrated else None
        threshold = self.nil_cutoff
        ranked_ids = concept[order].tolist()
        ranked_probs = probs[order]
        if scale is not None:
            ranked_probs = numpy.minimum(ranked_probs * numpy.repeat(scale, size), 1.0)
        ranked_probs = ranked_probs.tolist()
        nil = (confidence < threshold).tolist() if threshold is not None else [False] * len(size)
        bounds = (first + size).tolist()
        out, g = [], 0
        for parts in links:
            new_parts = []
            for text, candidates in parts:
                if not candidates[:self.k]:
                    new_parts.append((text, []))
                    continue
                a, b = bounds[g] - len(candidates[:self.k]), bounds[g]
                new_parts.append((text, [] if nil[g] else
                                  list(zip(ranked_ids[a:b], ranked_probs[a:b]))))
                g += 1
            out.append(new_parts)
        return out

    def clear_cache(self) -> None:
        """Nothing to forget: no query result is kept. The tables of the dictionary's
        names stay, as the index does (they are rebuilt when the dictionary changes)."""

    # Weights ----------------------------------------------------------------

    def state_to_bytes(self) -> bytes:
        """The ranker in LightGBM's text format and the label -> type rates."""
        if self.booster is None:
            raise BioLinkError(Errors.E531.format(path="<learned reranker>",
                                                  reason="no trained model to save"))
        return srsly.msgpack_dumps({"model": self.booster.model_to_string(),
                                    "label_types": self.label_types,
                                    "calibration": self.calibration})

    def state_from_bytes(self, data: bytes) -> None:
        """Read what state_to_bytes wrote (text, never a pickle)."""
        try:
            state = srsly.msgpack_loads(data)
            self.set_model(state["model"], state["label_types"], state.get("calibration"))
        except (ValueError, KeyError, TypeError) as err:
            raise BioLinkError(Errors.E531.format(path="<stage state>", reason=str(err))) from None
        # Its numba kernels are loaded with the pipeline, not on its first batch (issue 58).
        from . import learned_reranker_kernels  # noqa: F401

    def set_model(self, model_text: str, label_types: Dict[str, Dict[str, float]],
                  calibration: Optional[Dict] = None) -> None:
        """Use a LightGBM model (its text format), label -> type rates and the dev
        calibration (None for a model trained without)."""
        import lightgbm

        if not isinstance(model_text, str) or not model_text.startswith("tree"):
            raise BioLinkError(Errors.E531.format(path="<learned reranker>",
                                                  reason="the model is not LightGBM's text format"))
        booster = lightgbm.Booster(model_str=model_text)
        if booster.num_feature() != len(self.feature_names):
            raise BioLinkError(Errors.E531.format(
                path="<learned reranker>",
                reason=f"the model reads {booster.num_feature()} features, this version "
                       f"computes {len(self.feature_names)} (a model trained by "
                       f"LearnedRerankerTrainer.v2 needs LearnedReranker.v3, one trained "
                       f"by .v1 needs .v1 or .v2)"))
        self.booster = booster
        self._trees = _Trees(booster)
        self.label_types = {str(label): {str(t): float(r) for t, r in rates.items()}
                            for label, rates in label_types.items()}
        if calibration is not None:
            calibration = {"platt": [float(v) for v in calibration["platt"]],
                           "dev_confidence": [float(v) for v in calibration["dev_confidence"]],
                           "dev_right": [bool(v) for v in calibration["dev_right"]]}
            if len(calibration["platt"]) != 2 or (len(calibration["dev_confidence"])
                                                  != len(calibration["dev_right"])):
                raise ValueError("a calibration is two Platt weights and a dev curve")
        self.calibration = calibration
        self._view = None

    def load_trained(self, path: PathLike) -> None:
        """Read a directory written by `train configs/rank.cfg`."""
        model_text, _, label_types, calibration = read_trained(path)
        self.set_model(model_text, label_types, calibration)


def platt(p: numpy.ndarray, a: float, b: float) -> numpy.ndarray:
    """sigmoid(a * logit(p) + b), p clipped away from 0 and 1."""
    p = numpy.clip(numpy.asarray(p, numpy.float64), 1e-12, 1.0 - 1e-12)
    return 1.0 / (1.0 + numpy.exp(-(a * numpy.log(p / (1.0 - p)) + b)))


def nil_threshold_for(confidence: numpy.ndarray, right: numpy.ndarray, precision: float
                      ) -> Optional[float]:
    """The lowest confidence t such that the mentions whose top candidate has confidence
    >= t are right at least `precision` of the time; None if none is."""
    order = numpy.argsort(-confidence, kind="stable")
    hits = numpy.cumsum(right[order])
    answered = numpy.arange(1, len(order) + 1)
    ok = numpy.flatnonzero(hits / answered >= precision)
    if not len(ok):
        return None
    return float(confidence[order][ok.max()])


def read_trained(path: PathLike) -> Tuple[str, Dict, Dict, Optional[Dict]]:
    """The model text, settings (k, temperature, nil_threshold, nil_precision), label ->
    type rates and dev calibration (None where it was trained without) of a trained
    learned-reranker directory."""
    path = Path(path)
    for name in (MODEL_FILE, SETTINGS_FILE, LABEL_TYPES_FILE):
        if not (path / name).is_file():
            raise BioLinkError(Errors.E531.format(path=path, reason=f"no {name}"))
    # The standard library's parser, not srsly's: that one reads 0.95 as
    # 0.9500000000000001, which init-linker then wrote into the config, and the dev
    # curve and type rates one unit in the last place off what was saved.
    from ...io.files import read_json

    settings = read_json(path / SETTINGS_FILE, what="Learned reranker settings",
                         expected="a JSON object", type=dict)
    kept = {key: settings[key] for key in ("k", "temperature", "nil_threshold", "nil_precision")
            if key in settings}
    calibration = (read_json(path / CALIBRATION_FILE, what="Learned reranker calibration",
                             expected="a JSON object", type=dict)
                   if (path / CALIBRATION_FILE).is_file() else None)
    label_types = read_json(path / LABEL_TYPES_FILE, what="Learned reranker label types",
                            expected="a JSON object", type=dict)
    return (path / MODEL_FILE).read_text(encoding="utf8"), kept, label_types, calibration


def trained_features(path: PathLike) -> List[str]:
    """The feature names a trained learned-reranker directory's model reads (FEATURES
    for one saved before they were listed)."""
    from ...io.files import read_json

    settings = read_json(Path(path) / SETTINGS_FILE, what="Learned reranker settings",
                         expected="a JSON object", type=dict)
    return list(settings.get("features", FEATURES))


def is_learned_reranker_dir(path: PathLike) -> bool:
    """Whether `path` holds a trained learned reranker (not a cross-encoder)."""
    return (Path(path) / SETTINGS_FILE).is_file()


def stage_block(path: PathLike) -> Dict:
    """The stage block that reads a trained learned-reranker directory: the current
    LearnedReranker over the features it was trained on. A ranker trained before the
    trainer calibrated on dev gets the superseded stage that reads it
    (spacy_biolink/legacy/stages.py)."""
    _, stage, _, calibration = read_trained(path)
    if calibration is None:
        stage.pop("nil_precision", None)
        return {"@misc": "spacy-biolink.LearnedReranker.v1", **stage}
    stage.pop("nil_threshold", None)
    return {"@misc": "spacy-biolink.LearnedReranker.v3", **stage,
            "retriever_features": trained_features(path) == list(FEATURES_V3)}
