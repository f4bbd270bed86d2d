"""The `bio_linker` pipe: links entity spans to dictionary concepts.

It owns none of the math. Per batch of docs it collects the spans to link, resolves
abbreviations defined in their doc, splits composite mentions, normalizes the texts,
dedupes them (and skips those it has seen recently), encodes the rest in one encoder
call, searches the index once, and writes `span.kb_id_`, `span._.kb_ents` and, for
composites, `span._.kb_parts`.
"""
from collections import OrderedDict
import logging
import os
from pathlib import Path
import shutil
import stat
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union
import warnings

import numpy
import srsly
from scipy import sparse
from spacy import util
from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.tokens import Doc, Span, SpanGroup
from spacy.vocab import Vocab
from thinc.api import Config, Model
from tqdm import tqdm

from .dictionary import SOURCE_DATA, SOURCE_ONTOLOGY, ConceptDictionary
from .errors import BioLinkError, Errors, Warnings
from .extensions import install_extensions
from .index import NameIndex, exact_index, exact_index_from_state
from .index.word_postings import additive_vectorizer
from .index.concepts import Candidates, concept_vectors, search_concept_index, search_concepts
from .nothing_to_link import NothingToLinkCheck, checked
from .safe_models import check_index, check_model
from .text.abbreviations import AbbreviationResolver, expand
from .text.composites import split_composite
from .text.normalize import MentionNormalizer, read_spelling_map
from .util import PathLike, atomic_directory, read_arrays

logger = logging.getLogger(__name__)

# Per mention: (text, ranked candidates) for each concept it names; one pair unless a
# composite mention ("breast and ovarian cancer") was split.
MentionLinks = List[Tuple[str, Candidates]]

# index_sources: which names the main index holds (Triplet-Search's O, D and OD).
INDEX_SOURCES = {"O": SOURCE_ONTOLOGY, "D": SOURCE_DATA, "OD": SOURCE_ONTOLOGY | SOURCE_DATA}

DEFAULT_ENCODER_CONFIG = """
[model]
@architectures = "spacy-biolink.TfidfEncoder.v1"
analyzer = "char_wb"
ngram_range = [3, 3]
lowercase = true
sublinear_tf = false
min_df = 1
"""


@Language.factory(
    "bio_linker",
    assigns=["token.ent_kb_id", "span._.kb_ents"],
    # doc.spans[spans_key] when that is set; spaCy's requires cannot name the key.
    requires=["doc.ents"],
    default_config={
        "encoder": Config().from_str(DEFAULT_ENCODER_CONFIG)["model"],
        # Exact sparse search below 500,000 names, pruned above (index/blocked.py);
        # "spacy-biolink.SparseIndex.v1" is always exact.
        "index": {"@misc": "spacy-biolink.AutoSparseIndex.v3", "chunk_size": 256},
        "normalizer": {"@misc": "spacy-biolink.MentionNormalizer.v1", "lowercase": True,
                       "remove_punctuation": True, "spelling_variants": True,
                       "strip_plurals": True},
        "resolve_abbreviations": True,
        "split_composites": True,
        "k": 10,
        # Junk ("xyzzy foo", "the patient") scores below it with the default TF-IDF encoder,
        # at no acc@1 cost on NCBI-disease and BC5CDR-disease dev (BENCHMARKS.md,
        # benchmarks/nil_threshold.py). Saved pipelines keep the value in their config.
        "threshold": 0.45,
        "nil_id": "NIL",
        "max_entities_per_mention": 5,
        "spans_key": None,
        "labels": [],
        "cache_size": 100000,
        "index_level": "name",
        "index_sources": "OD",
        "sieve_threshold": None,
        # 0 here so that a pipeline saved before the option existed ranks as it did;
        # init-linker's default config sets the value chosen on dev (README).
        "prior_weight": 0.0,
        # span label -> allowed types (TUIs, semantic groups such as "DISO", or the
        # dictionary's own types); labels not listed are not filtered.
        "type_filter": {},
        # Which of a concept's ids kb_id_ reports, by namespace (spacy_biolink/ids.py).
        "id_preference": ["MESH", "OMIM"],
        "scorer": {"@scorers": "spacy-biolink.linking_scorer.v1"},
    },
    default_score_weights={"bio_linker_acc": 1.0, "bio_linker_micro_p": None,
                           "bio_linker_micro_r": None, "bio_linker_micro_f": None},
)
def make_bio_linker(nlp: Language, name: str, *, encoder: Model, index: NameIndex,
                    normalizer: MentionNormalizer, resolve_abbreviations: bool,
                    split_composites: bool, k: int, threshold: float, nil_id: str,
                    max_entities_per_mention: int, spans_key: Optional[str], labels: List[str],
                    cache_size: int, index_level: str, index_sources: str,
                    sieve_threshold: Optional[float], prior_weight: float,
                    scorer: Optional[Callable], type_filter: Dict[str, List[str]] = {},
                    id_preference: List[str] = ["MESH", "OMIM"]) -> "BioLinker":
    """Build the `bio_linker` component from its config block (spaCy's factory hook).
    The linker is watched by a NothingToLinkCheck, which warns when the pipeline gives it
    no spans to link."""
    return checked(nlp, BioLinker(nlp.vocab, encoder, index, name=name, normalizer=normalizer,
                     resolve_abbreviations=resolve_abbreviations,
                     split_composites=split_composites, k=k, threshold=threshold,
                     nil_id=nil_id, max_entities_per_mention=max_entities_per_mention,
                     spans_key=spans_key, labels=labels, cache_size=cache_size,
                     index_level=index_level, index_sources=index_sources,
                     sieve_threshold=sieve_threshold, prior_weight=prior_weight, scorer=scorer,
                     type_filter=type_filter, id_preference=id_preference))


class Mention:
    """A stretch of a doc to link: a span, or gold offsets that need not align to tokens."""

    __slots__ = ("doc", "start_char", "end_char", "text", "label")

    def __init__(self, doc: Doc, start_char: int, end_char: int, text: Optional[str] = None,
                 label: Optional[str] = None):
        self.doc = doc
        self.start_char = start_char
        self.end_char = end_char
        self.text = doc.text[start_char:end_char] if text is None else text
        # The span label: what type_filter keys on (None: not filtered).
        self.label = label

    @classmethod
    def from_span(cls, span: Span) -> "Mention":
        """The mention a span stands for: its doc, character offsets, text and label."""
        return cls(span.doc, span.start_char, span.end_char, span.text, span.label_)


class BioLinker(Pipe):
    """Links spans (doc.ents, or doc.spans[spans_key]) to concepts of a ConceptDictionary."""

    def __init__(self, vocab: Vocab, encoder: Model, index: NameIndex, *,
                 name: str = "bio_linker", normalizer: Optional[MentionNormalizer] = None,
                 resolve_abbreviations: bool = True, split_composites: bool = True,
                 k: int = 10, threshold: float = 0.45,
                 nil_id: str = "NIL", max_entities_per_mention: int = 5,
                 spans_key: Optional[str] = None, labels: Sequence[str] = (),
                 cache_size: int = 100000, index_level: str = "name",
                 index_sources: str = "OD", sieve_threshold: Optional[float] = None,
                 prior_weight: float = 0.0, scorer: Optional[Callable] = None,
                 type_filter: Optional[Dict[str, List[str]]] = None,
                 id_preference: Sequence[str] = ("MESH", "OMIM")):
        # Policy read from config.cfg on every load, never from the saved cfg file, so
        # spacy.load(path, config=...) changes it without rebuilding.
        self.type_filter = _check_type_filter(type_filter)
        self.id_preference = _check_id_preference(id_preference)
        _check_config(k=k, threshold=threshold, max_entities_per_mention=max_entities_per_mention,
                      cache_size=cache_size, nil_id=nil_id, index_level=index_level,
                      index_sources=index_sources, sieve_threshold=sieve_threshold,
                      prior_weight=prior_weight)
        # Refused before anything is read into them: a received model directory must not
        # be able to name a layer whose state loads by unpickling (safe_models.py).
        check_model(encoder, role="encoder", where=f"{name} encoder")
        check_index(index, where=f"{name} index")
        _check_threshold(threshold, encoder, None if prior_weight else 0.0)
        install_extensions()
        self.vocab = vocab
        self.name = name
        self.model = encoder
        self.index = index
        self.normalizer = normalizer if normalizer is not None else MentionNormalizer()
        self.abbreviations = AbbreviationResolver(vocab)
        self.scorer = scorer
        self.dictionary: Optional[ConceptDictionary] = None
        self.cfg: Dict = {
            "resolve_abbreviations": resolve_abbreviations,
            "split_composites": split_composites,
            "k": k, "threshold": threshold, "nil_id": nil_id,
            "max_entities_per_mention": max_entities_per_mention,
            "spans_key": spans_key, "labels": list(labels), "cache_size": cache_size,
            # "name": one index row per name (Triplet-Search's T); "concept": one per
            # concept, the mean of its names' vectors (its C).
            "index_level": index_level,
            # "O": the dictionary's own names; "D": corpus mentions added by augment or
            # add_names; "OD": both (Triplet-Search's Search:O, D, OD).
            "index_sources": index_sources,
            # Set: a mention whose best D name scores at least this is answered from
            # the D names alone, before the main index (Triplet-Search's sieve).
            "sieve_threshold": sieve_threshold,
            # A concept's k-best score gains prior_weight * ln(1 + n), n = how often the
            # augmenting corpora annotated it: near ties go to what annotators meant most.
            "prior_weight": prior_weight,
            "initialized": False,
        }
        self._cache: "OrderedDict[str, Candidates]" = OrderedDict()
        # What the index rows mean (set with the dictionary, see _build_search):
        # the dictionary cut down to index_sources, and for index_level "concept" with
        # only some concepts reachable, the concept of each row.
        self._searched: Optional[ConceptDictionary] = None
        self._concept_rows: Optional[numpy.ndarray] = None
        # The sieve: the D names and an exact index over their vectors.
        self._sieve: Optional[Tuple[ConceptDictionary, NameIndex]] = None
        # prior_weight * ln(1 + annotations) per concept; None when it adds nothing.
        self._concept_prior: Optional[numpy.ndarray] = None
        # Optional second stage (spacy_biolink/verify.py): set by init-linker --verifier,
        # saved as the pipe's own `verifier` part.
        self.verifier = None
        # Optional last stage (spacy_biolink/rerank.py): set by init-linker --reranker,
        # saved as the pipe's own `reranker` part.
        self.reranker = None
        # Set by the factory, which knows the pipeline (nothing_to_link.py).
        self.nothing_to_link: Optional[NothingToLinkCheck] = None
        # Per dictionary: type_filter's allowed-concept mask per label, and the id
        # id_preference reports for each concept looked up so far.
        self._allowed: Dict[str, numpy.ndarray] = {}
        self._reported_ids: Dict[int, str] = {}
        self._kb = None

    @property
    def kb(self):
        """Concept lookup in scispaCy's shape: `kb[cid]` and `kb.cui_to_entity[cid]` give
        a record with concept_id, canonical_name, aliases, types, definition; `cid` may
        be any of a concept's ids."""
        from .kb import ConceptLookup

        if self.dictionary is None:
            raise BioLinkError(Errors.E163)
        if self._kb is None or self._kb.dictionary is not self.dictionary:
            self._kb = ConceptLookup(self.dictionary, self.reported_id)
        return self._kb

    def reported_id(self, concept: int) -> str:
        """The id kb_id_ and kb_ents give for a concept: its id in the namespace that
        comes first in id_preference. A concept whose primary id is in no listed
        namespace (a MONDO term, a UMLS CUI) keeps it; list that namespace after
        another (["MESH", "MONDO"]) to report the other instead."""
        found = self._reported_ids.get(concept)
        if found is not None:
            return found
        ids = self.dictionary.ids_of(concept)
        best = ids[0]
        if len(ids) > 1 and self.id_preference:
            from .ids import namespace_of

            rank = {namespace: i for i, namespace in enumerate(self.id_preference)}
            primary_rank = rank.get(namespace_of(ids[0]))
            if primary_rank is not None:
                best = min(ids, key=lambda i: rank.get(namespace_of(i), len(rank)))
        if len(self._reported_ids) < 1_000_000:
            self._reported_ids[concept] = best
        return best

    def allowed_concepts(self, label: Optional[str]) -> Optional[numpy.ndarray]:
        """type_filter's mask for a span label: True for concepts with an allowed type;
        None when the label is not filtered."""
        if label is None or label not in self.type_filter or self.dictionary is None:
            return None
        mask = self._allowed.get(label)
        if mask is None:
            allowed = self.type_filter[label]
            mask = numpy.zeros(self.dictionary.n_concepts, dtype=bool)
            if self.dictionary.types is not None:
                for c, joined in enumerate(self.dictionary.types):
                    if joined and not allowed.isdisjoint(joined.split("|")):
                        mask[c] = True
            if not mask.any():
                warnings.warn(Warnings.W020.format(types=sorted(allowed), label=label))
            self._allowed[label] = mask
        return mask

    # Set-up ----------------------------------------------------------------

    @property
    def is_initialized(self) -> bool:
        """True once a dictionary is loaded and the index built, i.e. the linker can link."""
        return self.dictionary is not None and self.index.is_built

    def initialize(self, get_examples: Optional[Callable[[], Iterable]] = None, *,
                   nlp: Optional[Language] = None,
                   dictionary: Union[ConceptDictionary, Callable[[], ConceptDictionary], None] = None,
                   spelling_map: Optional[PathLike] = None,
                   augment: Sequence[PathLike] = (), augment_short_forms: bool = True) -> None:
        """Fit the encoder's statistics on the dictionary names and build the index.

        dictionary: a ConceptDictionary, or a callable returning one (the registered
            loader `spacy-biolink.load_dictionary.v1` in [initialize.components.NAME]).
        spelling_map: a `wrong||right` file of mention typos; saved with the pipeline.
        augment: PubTator corpora whose gold mentions are added to the dictionary as
            names of their concepts (training mentions, as BioSyn and Triplet-Search do).
        augment_short_forms: with augment, a mention whose abbreviation was resolved
            ("HTN" defined as "hypertension") also adds its own text, for later
            documents that use the short form without defining it.
        """
        if dictionary is None:
            dictionary = self.dictionary
        elif not isinstance(dictionary, ConceptDictionary) and callable(dictionary):
            dictionary = dictionary()
        if dictionary is None:
            raise BioLinkError(Errors.E101)
        if not isinstance(dictionary, ConceptDictionary):
            raise BioLinkError(Errors.E105.format(type=type(dictionary).__name__))
        if spelling_map is not None:
            self.normalizer.set_spelling(read_spelling_map(spelling_map))
        if augment:
            from .augment import augment_dictionary

            make_doc = nlp.make_doc if nlp is not None else util.get_lang_class("en")().make_doc
            dictionary, stats = augment_dictionary(dictionary, augment, self, make_doc,
                                                   short_forms=augment_short_forms)
            logger.info("bio_linker: %s", stats.summary())
        shared = dictionary.shared_names()
        if shared:
            name, ids = shared[0]
            warnings.warn(Warnings.W001.format(n=len(shared), name=name, ids=", ".join(ids)))
        names = [self.normalizer.name(name) for name in dictionary.names]
        self.model.initialize(X=names)
        vectors = self.encode(names, progress=True)
        # 10M names are ~1 GB of Python strings: gone before the index doubles the vectors.
        del names
        self._build_search(dictionary, vectors)
        if self.cfg["sieve_threshold"] is not None:
            if self._sieve is None:
                warnings.warn(Warnings.W003)
            similarity = self.model.attrs.get("similarity", "cosine")
            if similarity != "cosine":
                warnings.warn(Warnings.W004.format(threshold=self.cfg["sieve_threshold"],
                                                   similarity=similarity))
        self.cfg["initialized"] = True

    def add_names(self, pairs: Iterable[Tuple[str, str]]) -> int:
        """Add (name, concept id) pairs to the live linker: new synonyms, or corpus
        mentions to search among (Triplet-Search's D set). Returns how many were added.

        Nothing is refitted or retrained: the names are encoded with the encoder as it is
        and the index is rebuilt over the whole name list (the dictionary renumbers its
        names), so add in batches rather than one name at a time. They are saved with
        the pipeline like any other name.
        """
        if not self.is_initialized:
            raise BioLinkError(Errors.E101)
        pairs = [(name, concept_id) for name, concept_id in pairs]
        unknown = [(n, c) for n, c in pairs if self.dictionary.concept_index(c) is None]
        if unknown:
            raise BioLinkError(Errors.E107.format(n=len(unknown), name=unknown[0][0],
                                                  concept_id=unknown[0][1]))
        if not pairs:
            return 0
        dictionary, _ = self.dictionary.with_names(pairs, source="<add_names>")
        names = [self.normalizer.name(name) for name in dictionary.names]
        self._build_search(dictionary, self.encode(names, progress=True))
        return len(pairs)

    def _search_plan(self, dictionary: ConceptDictionary, where="bio_linker"
                     ) -> Tuple[ConceptDictionary, numpy.ndarray, Optional[numpy.ndarray]]:
        """The dictionary cut down to index_sources, its names' positions in `dictionary`,
        and (index_level "concept", some concepts unreachable) the concept of each row."""
        sources = self.cfg["index_sources"]
        searched, rows = dictionary.select_names(INDEX_SOURCES[sources])
        if searched.n_names == 0:
            n_data = int(numpy.count_nonzero(dictionary.name_concept_sources & SOURCE_DATA))
            raise BioLinkError(Errors.E108.format(sources=sources, where=where,
                                                  n_names=dictionary.n_names, n_data=n_data))
        concept_rows = None
        if searched is not dictionary and self.cfg["index_level"] == "concept":
            concept_rows = numpy.flatnonzero(numpy.bincount(searched.name_concepts,
                                                            minlength=dictionary.n_concepts))
        return searched, rows, concept_rows

    def _build_search(self, dictionary: ConceptDictionary, name_vectors) -> None:
        """Adopt `dictionary` given its names' vectors: build the index over the names
        index_sources selects (or their concepts' mean vectors) and, with a sieve, the
        exact index over the D names. Nothing is encoded twice."""
        searched, rows, concept_rows = self._search_plan(dictionary)
        vectors = name_vectors if len(rows) == dictionary.n_names else name_vectors[rows]
        if self.cfg["index_level"] == "concept":
            vectors = concept_vectors(searched, vectors)
            if concept_rows is not None:
                vectors = vectors[concept_rows]
        self.index.build(vectors)
        if hasattr(self.index, "add_words") and self.cfg["index_level"] == "name":
            vectorizer = additive_vectorizer(self.model)
            if vectorizer is not None:
                # Normalized again one at a time: the list encode saw is gone at 10M names.
                self.index.add_words((self.normalizer.name(name) for name in searched.names),
                                     vectorizer)
        sieve = None
        if self.cfg["sieve_threshold"] is not None:
            data, data_rows = dictionary.select_names(SOURCE_DATA)
            if data.n_names:
                sieve = exact_index(name_vectors[data_rows])
        self._adopt(dictionary, where="bio_linker", sieve=sieve)

    def encode(self, texts: Sequence[str], *, batch_size: int = 16384, progress: bool = False):
        """Encode texts in batches (sparse rows or a dense float32 array)."""
        batches = range(0, len(texts), batch_size)
        if not batches:
            return self.model.predict([])
        parts, out = [], None
        for i in tqdm(batches, desc=f"{self.name}: encoding names", unit="batch",
                      disable=not progress or len(batches) < 2):
            part = self.model.predict(list(texts[i:i + batch_size]))
            if out is None and not sparse.issparse(part):
                # Dense rows go straight into one array: a list of parts concatenated at
                # the end would hold 10M names' vectors twice.
                out = numpy.empty((len(texts),) + part.shape[1:], dtype=part.dtype)
            if out is not None:
                out[i:i + len(part)] = part
            else:
                parts.append(part)
        return out if out is not None else sparse.vstack(parts, format="csr")

    # Linking ---------------------------------------------------------------

    def __call__(self, doc: Doc) -> Doc:
        """Link the mentions of one doc in place and return it."""
        self.set_annotations([doc], self.predict([doc]))
        return doc

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128) -> Iterator[Doc]:
        """Link docs in batches of `batch_size`, yielding each doc as its batch is done.
        A failing batch goes to the pipeline's error handler (raise by default)."""
        error_handler = self.get_error_handler()
        for docs in util.minibatch(stream, size=batch_size):
            try:
                self.set_annotations(docs, self.predict(docs))
                yield from docs
            except Exception as err:
                error_handler(self.name, self, docs, err)

    def spans_to_link(self, doc: Doc) -> List[Span]:
        """The spans this linker links in `doc`: `doc.ents`, or `doc.spans[spans_key]` when set,
        kept only where the label is in `labels` (all labels when `labels` is empty)."""
        key = self.cfg["spans_key"]
        if key is None:
            spans = list(doc.ents)
        else:
            spans = list(doc.spans[key]) if key in doc.spans else []
        labels = self.cfg["labels"]
        if labels:
            spans = [s for s in spans if s.label_ in labels]
        return spans

    def predict(self, docs: Iterable[Doc]) -> List[List[MentionLinks]]:
        """For each doc, the links of each span that spans_to_link returns."""
        docs = list(docs)
        per_doc = [[Mention.from_span(s) for s in self.spans_to_link(doc)] for doc in docs]
        if self.nothing_to_link is not None:
            self.nothing_to_link(docs, [len(mentions) for mentions in per_doc])
        flat = self.predict_mentions([m for mentions in per_doc for m in mentions])
        out, i = [], 0
        for mentions in per_doc:
            out.append(flat[i:i + len(mentions)])
            i += len(mentions)
        return out

    def predict_mentions(self, mentions: Sequence[Mention], k: Optional[int] = None
                         ) -> List[MentionLinks]:
        """Ranked (concept index, score) candidates for each concept each mention names,
        at most k (default cfg k) per part.

        A composite is split only when every part matches better than the whole and the
        parts name different concepts: that keeps "hereditary breast and ovarian cancer"
        whole, whether it is itself a dictionary name or its parts are names of it.
        The batch is deduplicated: each distinct text is encoded and searched once.
        """
        if not self.is_initialized:
            raise BioLinkError(Errors.E101)
        k = k or self.cfg["k"]
        if self.reranker is not None:
            k = max(k, self.reranker.k)
        texts = self.resolved_texts(mentions)
        parts = [self.composite_parts(text) for text in texts]
        groups = [self.filter_group(m.label) for m in mentions]
        keys_by_group: Dict[Optional[str], set] = {}
        for group, text, mention_parts in zip(groups, texts, parts):
            keys = keys_by_group.setdefault(group, set())
            keys.add(self.query_key(text))
            keys.update(self.query_key(p) for p in mention_parts)
        results = self.link_and_verify(keys_by_group, k)

        def linked(text: str, group: Optional[str]) -> Tuple[str, Candidates]:
            key = self.query_key(text)
            return (text, results[(group, key)] if key else [])

        out = []
        for group, text, mention_parts in zip(groups, texts, parts):
            whole = linked(text, group)
            split = [linked(p, group) for p in mention_parts]
            best_whole = whole[1][0][1] if whole[1] else -numpy.inf
            # Parts that all name the same concept are one concept written as a
            # coordination ("hereditary breast and ovarian cancer", a syndrome).
            if (split and all(c and c[0][1] > best_whole for _, c in split)
                    and len({c[0][0] for _, c in split}) > 1):
                out.append(split)
            else:
                out.append([whole])
        if self.reranker is not None:
            from .rerank import rerank_mention_links

            out = rerank_mention_links(self, self.reranker, mentions, out)
        return out

    def filter_group(self, label: Optional[str]) -> Optional[str]:
        """The label its mentions are searched under: itself where type_filter restricts
        it, None (every concept) otherwise."""
        return label if label in self.type_filter else None

    def link_and_verify(self, keys_by_group: Dict[Optional[str], Iterable[str]], k: int
                        ) -> Dict[Tuple[Optional[str], str], Candidates]:
        """The k best concepts of each query key, searched per filter_group (mentions whose
        label type_filter restricts apart), then checked by the verifier when there is
        one: what linking and `evaluate` both read, keyed by (group, key)."""
        results: Dict[Tuple[Optional[str], str], Candidates] = {}
        for group, keys in keys_by_group.items():
            found = self.link_texts(sorted(key for key in keys if key), k, label=group)
            if self.verifier is not None:
                queries = list(found)
                verified = self.verifier.verify(self.dictionary, queries,
                                                [found[q] for q in queries],
                                                self.normalizer.mention)
                found = dict(zip(queries, verified))
            results.update(((group, key), candidates) for key, candidates in found.items())
        return results

    def resolved_texts(self, mentions: Sequence[Mention]) -> List[str]:
        """Mention texts with whitespace collapsed and, if configured, the abbreviations
        defined in their doc spelled out."""
        texts = [" ".join(m.text.split()) for m in mentions]
        if not self.cfg["resolve_abbreviations"]:
            return texts
        long_forms: Dict[int, Dict[str, str]] = {}
        resolved = []
        for mention, text in zip(mentions, texts):
            doc_key = id(mention.doc)
            if doc_key not in long_forms:
                long_forms[doc_key] = self.abbreviations.long_forms(mention.doc)
            resolved.append(expand(text, long_forms[doc_key]))
        return resolved

    def composite_parts(self, text: str) -> List[str]:
        """The parts of a composite mention; empty when it is not one or splitting is off."""
        if not self.cfg["split_composites"]:
            return []
        parts = split_composite(text)
        return parts if len(parts) > 1 else []

    def query_key(self, text: str) -> str:
        """The string that is encoded for a text; empty when there is nothing to link."""
        key = self.normalizer.mention(text)
        # Whitespace or punctuation alone names no concept.
        return key if any(ch.isalnum() for ch in key) else ""

    def link_texts(self, texts: Sequence[str], k: int, *, label: Optional[str] = None
                   ) -> Dict[str, Candidates]:
        """The k best concepts of each query text; with a label that type_filter lists,
        the k best of the types it allows."""
        cache = self._cache
        cache_size = self.cfg["cache_size"]
        allowed = self.allowed_concepts(label)
        group = label if allowed is not None else None
        found: Dict[str, Candidates] = {}
        todo = []
        for text in texts:
            cached = cache.get((text, k, group)) if cache_size else None
            if cached is None:
                todo.append(text)
            else:
                cache.move_to_end((text, k, group))
                found[text] = cached
        if todo:
            searched = self.search(self.encode(todo), k, allowed=allowed)
            if self._concept_prior is not None:
                searched = [self._with_prior(candidates) for candidates in searched]
            for text, candidates in zip(todo, searched):
                found[text] = candidates
                if cache_size:
                    cache[(text, k, group)] = candidates
            while len(cache) > cache_size:
                cache.popitem(last=False)
        return found

    def search(self, vectors, k: int, allowed: Optional[numpy.ndarray] = None
               ) -> List[Candidates]:
        """The k best concepts for each row of `vectors` (encoded query texts), among
        the concepts `allowed` marks (a type filter) when given.

        With a sieve, all rows are first searched among the D names, and those whose
        best scores at least sieve_threshold keep that answer; the rest are searched in
        the main index, all at once.
        """
        results: List[Candidates] = [[] for _ in range(vectors.shape[0])]
        rest = numpy.arange(vectors.shape[0])
        if self._sieve is not None and len(rest):
            data, data_index = self._sieve
            found = search_concepts(data, data_index, vectors, k, allowed=allowed)
            threshold = self.cfg["sieve_threshold"]
            accepted = numpy.array([bool(c) and c[0][1] >= threshold for c in found], dtype=bool)
            for row in numpy.flatnonzero(accepted).tolist():
                results[row] = found[row]
            rest = numpy.flatnonzero(~accepted)
            if len(rest) and len(rest) < len(found):
                vectors = vectors[rest]
        if len(rest):
            if self.cfg["index_level"] == "concept":
                main = search_concept_index(self.index, vectors, k, self._concept_rows,
                                            allowed=allowed)
            else:
                main = search_concepts(self._searched, self.index, vectors, k, allowed=allowed)
            for row, candidates in zip(rest.tolist(), main):
                results[row] = candidates
        return results

    def _with_prior(self, candidates: Candidates) -> Candidates:
        """The k candidates re-ranked with the annotation prior (a stable sort: equal
        scores keep the search's order)."""
        prior = self._concept_prior
        return sorted(((c, score + float(prior[c])) for c, score in candidates),
                      key=lambda candidate: -candidate[1])

    def kb_ents(self, candidates: Candidates) -> List[Tuple[str, float]]:
        """Candidates at or above the threshold, as (concept id, score), best first."""
        threshold = self.cfg["threshold"]
        kept = [(self.reported_id(c), round(score, 6)) for c, score in candidates
                if score >= threshold]
        return kept[: self.cfg["max_entities_per_mention"]]

    def annotations(self, links: MentionLinks) -> Tuple[str, List[Tuple[str, float]], List]:
        """kb_id, kb_ents and kb_parts of one mention.

        A composite's kb_id joins its parts' ids with `|`, as the corpora write them, and
        its kb_ents holds the best concept of each part.
        """
        nil_id = self.cfg["nil_id"]
        if len(links) == 1:
            kb_ents = self.kb_ents(links[0][1])
            return (kb_ents[0][0] if kb_ents else nil_id), kb_ents, []
        parts = [(text, self.kb_ents(candidates)) for text, candidates in links]
        best = [ents[0] for _, ents in parts if ents]
        kb_id = "|".join(ents[0][0] if ents else nil_id for _, ents in parts) if best else nil_id
        return kb_id, best, parts

    def set_annotations(self, docs: Iterable[Doc], predictions: List[List[MentionLinks]]) -> None:
        """Write `predictions` (from `predict`, one list per doc) onto the spans: relabel them and
        set `span._.kb_ents`, and `span._.kb_parts` for split composite mentions."""
        key = self.cfg["spans_key"]
        for doc, doc_links in zip(docs, predictions):
            spans = self.spans_to_link(doc)
            results = {(span.start, span.end, span.label): self.annotations(links)
                       for span, links in zip(spans, doc_links)}
            if not results:
                continue
            if key is None:
                ents = [_relabel(e, results) for e in doc.ents]
                doc.set_ents(ents, default="unmodified")
                linked = doc.ents
            else:
                group = doc.spans[key]
                linked = [_relabel(s, results) for s in group]
                doc.spans[key] = SpanGroup(doc, name=key, attrs=dict(group.attrs), spans=linked)
            for span in linked:
                found = results.get((span.start, span.end, span.label))
                if found is not None:
                    span._.kb_ents = found[1]
                    if found[2]:
                        span._.kb_parts = found[2]

    # Evaluation ------------------------------------------------------------

    def score(self, examples, **kwargs) -> Dict[str, float]:
        """Score linking on `examples` (see `score_linking`); a gold id counts as found when it is
        any id of the predicted concept, so alternative ids (e.g. OMIM for a MeSH concept) match."""
        if self.dictionary is not None:
            kwargs.setdefault("concept_ids", self._ids_of_primary)
        return super().score(examples, **kwargs)

    def _ids_of_primary(self, concept_id: str) -> Tuple[str, ...]:
        c = self.dictionary.concept_index(concept_id)
        return (concept_id,) if c is None else self.dictionary.ids_of(c)

    # Serialization ---------------------------------------------------------

    def to_disk(self, path, *, exclude: Iterable[str] = tuple()) -> None:
        """Save the linker (cfg, normalizer, encoder; dictionary and index once initialized)
        to `path`.
        Saving over an existing directory is atomic: a kill leaves the old state or the new one."""
        serializers = {"cfg": lambda p: srsly.write_json(p, self.cfg),
                       "normalizer": lambda p: srsly.write_json(p, self.normalizer.to_dict()),
                       "encoder": lambda p: self.model.to_disk(p)}
        if self.is_initialized:
            serializers["dictionary"] = lambda p: self.dictionary.to_disk(p)
            serializers["index"] = lambda p: self.index.to_disk(p)
        if self._sieve is not None:
            serializers["sieve"] = lambda p: self._sieve[1].to_disk(p)
        if self.verifier is not None:
            serializers["verifier"] = lambda p: self.verifier.to_disk(p)
        if self.reranker is not None:
            serializers["reranker"] = lambda p: self.reranker.to_disk(p)
        # Saving over an existing pipeline: the state is written beside its directory and
        # swapped in by renames, so a kill leaves the old state or the new one, never a
        # mix (a kill between the two renames leaves the old one as .NAME.old, which
        # from_disk reads). Temp directories of earlier killed saves are removed.
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        for stale in path.parent.glob(f".{path.name}.*.tmp"):
            shutil.rmtree(stale, ignore_errors=True)
        with atomic_directory(path, force=True) as tmp:
            util.to_disk(tmp, serializers, exclude)
            _chmod_like_a_new_directory(tmp)

    def from_disk(self, path, *, exclude: Iterable[str] = tuple()) -> "BioLinker":
        """Load a linker saved by `to_disk` into this one and return it. No pickled code is run;
        a missing or malformed part raises BioLinkError, and a save killed mid-swap is recovered."""
        check_model(self.model, role="encoder", where=f"{self.name} encoder")
        path = Path(path)
        backup = path.with_name(f".{path.name}.old")
        if not path.exists() and (backup / "cfg").is_file():
            warnings.warn(Warnings.W010.format(path=path, backup=backup))
            path = backup
        cfg_path = path / "cfg"
        if not cfg_path.is_file():
            raise BioLinkError(Errors.E104.format(path=path, reason="no cfg file"))
        try:
            cfg = srsly.read_json(cfg_path)
        except ValueError as err:
            raise BioLinkError(Errors.E104.format(path=path, reason=f"cfg is not JSON: {err}")) from None
        if not isinstance(cfg, dict):
            raise BioLinkError(Errors.E104.format(path=path, reason="cfg is not a JSON object"))
        parts = ["normalizer", "encoder"] + (["dictionary", "index"] if cfg.get("initialized") else [])
        missing = [p for p in parts if p not in exclude and not (path / p).exists()]
        if missing:
            raise BioLinkError(Errors.E104.format(path=path, reason=f"missing {', '.join(missing)}"))
        self._adopt_saved_cfg(cfg, where=cfg_path)
        if "normalizer" not in exclude:
            self._adopt_saved_normalizer(srsly.read_json(path / "normalizer"),
                                         where=path / "normalizer")
        try:
            self.model.from_disk(path / "encoder")
        except (ValueError, KeyError, OSError) as err:
            raise BioLinkError(Errors.E104.format(path=path, reason=f"encoder: {err}")) from None
        _check_threshold(self.cfg["threshold"], self.model,
                         None if self.cfg["prior_weight"] else 0.0)
        if cfg.get("initialized"):
            dictionary = ConceptDictionary.from_disk(path / "dictionary")
            sieve = None
            try:
                self.index.from_disk(path / "index")
                if (path / "sieve").is_dir() and "sieve" not in exclude:
                    sieve = exact_index_from_state(*read_arrays(path / "sieve"))
            except (ValueError, KeyError, OSError, RuntimeError) as err:
                raise BioLinkError(Errors.E104.format(path=path, reason=f"index: {err}")) from None
            self._adopt(dictionary, where=path, sieve=sieve)
        if (path / "verifier").is_dir() and "verifier" not in exclude:
            from .verify import CandidateVerifier

            self.verifier = CandidateVerifier.from_disk(path / "verifier")
        if (path / "reranker").is_dir() and "reranker" not in exclude:
            from .rerank import Reranker

            self.reranker = Reranker.from_disk(path / "reranker")
        return self

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        """Serialize the linker to bytes, with the same parts `to_disk` writes."""
        serializers = {"cfg": lambda: srsly.json_dumps(self.cfg),
                       "normalizer": lambda: srsly.json_dumps(self.normalizer.to_dict()),
                       "encoder": lambda: self.model.to_bytes()}
        if self.is_initialized:
            serializers["dictionary"] = lambda: self.dictionary.to_bytes()
            serializers["index"] = lambda: self.index.to_bytes()
        if self._sieve is not None:
            serializers["sieve"] = lambda: self._sieve[1].to_bytes()
        if self.verifier is not None:
            serializers["verifier"] = lambda: self.verifier.to_bytes()
        if self.reranker is not None:
            serializers["reranker"] = lambda: self.reranker.to_bytes()
        return util.to_bytes(serializers, exclude)

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> "BioLinker":
        """Load a linker serialized by `to_bytes` into this one and return it.
        Malformed data raises BioLinkError rather than loading half a linker."""
        check_model(self.model, role="encoder", where=f"{self.name} encoder")
        msg = srsly.msgpack_loads(bytes_data)
        if any(part not in msg for part in ("cfg", "normalizer", "encoder")):
            raise BioLinkError(Errors.E104.format(path="<bytes>",
                                                  reason="no cfg, normalizer or encoder"))
        cfg = srsly.json_loads(msg["cfg"])
        if not isinstance(cfg, dict):
            raise BioLinkError(Errors.E104.format(path="<bytes>", reason="cfg is not a JSON object"))
        self._adopt_saved_cfg(cfg, where="<bytes> cfg")
        self._adopt_saved_normalizer(srsly.json_loads(msg["normalizer"]), where="<bytes> normalizer")
        self.model.from_bytes(msg["encoder"])
        _check_threshold(self.cfg["threshold"], self.model,
                         None if self.cfg["prior_weight"] else 0.0)
        if self.cfg.get("initialized"):
            if "dictionary" not in msg or "index" not in msg:
                raise BioLinkError(Errors.E104.format(path="<bytes>", reason="no dictionary or index"))
            self.index.from_bytes(msg["index"])
            sieve = None
            if "sieve" in msg and "sieve" not in exclude:
                state = srsly.msgpack_loads(msg["sieve"])
                sieve = exact_index_from_state(state["meta"], state["arrays"])
            self._adopt(ConceptDictionary.from_bytes(msg["dictionary"]), where="<bytes>",
                        sieve=sieve)
        if "verifier" in msg:
            from .verify import CandidateVerifier

            self.verifier = CandidateVerifier.from_bytes(msg["verifier"])
        if "reranker" in msg and "reranker" not in exclude:
            from .rerank import Reranker

            self.reranker = Reranker.from_bytes(msg["reranker"])
        return self

    def _adopt_saved_cfg(self, saved: Dict, *, where) -> None:
        """Take from a saved cfg only what describes the saved data; the settings stay the
        constructor's, i.e. the config's (config.cfg, spacy.load(..., config=...)).

        Saved values are checked as config values are (a damaged or hand-edited file is
        reported, not used later). Settings the saved index was built for (INDEX_SETTINGS)
        must match the config's: the index would have to be rebuilt (E124). Keys this
        version does not know (written by another version) are ignored.
        """
        checked = {key: saved[key] if key in saved else value for key, value in self.cfg.items()
                   if key in CONFIG_KEYS}
        try:
            _check_config(**checked)
        except BioLinkError as err:
            raise BioLinkError(Errors.E123.format(where=where, error=err)) from None
        initialized = saved.get("initialized", False)
        if not isinstance(initialized, bool):
            raise BioLinkError(Errors.E123.format(
                where=where, error=f"`initialized` must be true or false, got {initialized!r}"))
        if initialized:
            for key in INDEX_SETTINGS:
                if key in saved and saved[key] != self.cfg[key]:
                    raise BioLinkError(Errors.E124.format(where=where, key=key, saved=saved[key],
                                                          config=self.cfg[key]))
        self.cfg["initialized"] = initialized

    def _adopt_saved_normalizer(self, state: Dict, *, where) -> None:
        """The saved normalizer: its spelling map is data; its folding settings are the
        config's too, and since the saved index holds names folded with them, a config
        that changes them needs a rebuild (E124), like index_sources."""
        saved = MentionNormalizer.from_dict(state)
        if self.cfg["initialized"]:
            config, kept = self.normalizer.to_dict(), saved.to_dict()
            for key in config:
                if key != "spelling" and config[key] != kept[key]:
                    raise BioLinkError(Errors.E124.format(where=where, key=f"normalizer.{key}",
                                                          saved=kept[key], config=config[key]))
        self.normalizer = saved

    def _adopt(self, dictionary: ConceptDictionary, *, where,
               sieve: Optional[NameIndex] = None) -> None:
        """Take `dictionary` with the index as it stands, checking that they agree.

        sieve: the exact index over the D names; with a sieve_threshold and none given
        (a pipeline saved without one), it is rebuilt by encoding the D names.
        """
        level = self.cfg["index_level"]
        searched, _, concept_rows = self._search_plan(dictionary, where=where)
        if concept_rows is not None:
            expected = len(concept_rows)
        else:
            expected = dictionary.n_concepts if level == "concept" else searched.n_names
        if self.index.n_vectors != expected:
            raise BioLinkError(Errors.E104.format(
                path=where, reason=f"the index holds {self.index.n_vectors} vectors but "
                                   f"index_sources {self.cfg['index_sources']!r} of the "
                                   f"dictionary gives {expected} {level}s"))
        self._sieve = None
        if self.cfg["sieve_threshold"] is not None:
            data, _ = dictionary.select_names(SOURCE_DATA)
            if sieve is None and data.n_names:
                sieve = exact_index(self.encode([self.normalizer.name(n) for n in data.names]))
            if sieve is not None and sieve.n_vectors != data.n_names:
                raise BioLinkError(Errors.E104.format(
                    path=where, reason=f"the sieve index holds {sieve.n_vectors} vectors but "
                                       f"the dictionary {data.n_names} D names"))
            if data.n_names:
                self._sieve = (data, sieve)
        prior = None
        if self.cfg["prior_weight"]:
            # From the searched names only: with index_sources "O" no corpus count is used.
            counts = numpy.bincount(searched.name_concepts, weights=searched.name_concept_counts,
                                    minlength=dictionary.n_concepts)
            if counts.any():
                prior = self.cfg["prior_weight"] * numpy.log1p(counts)
        # Now that the prior's largest boost is known, the threshold's upper bound is too.
        _check_threshold(self.cfg["threshold"], self.model,
                         float(prior.max()) if prior is not None else 0.0)
        self.dictionary = dictionary
        self._searched, self._concept_rows = searched, concept_rows
        self._concept_prior = prior
        self._allowed, self._reported_ids = {}, {}
        self._cache.clear()


def _chmod_like_a_new_directory(path: Path) -> None:
    """A temp directory is private (0700); give it its parent's mode, which the pipeline
    directory got from the umask (reading the umask itself would race other threads)."""
    os.chmod(path, stat.S_IMODE(os.stat(path.parent).st_mode))


def _relabel(span: Span, results: Dict) -> Span:
    found = results.get((span.start, span.end, span.label))
    if found is None:
        return span
    return Span(span.doc, span.start, span.end, label=span.label, kb_id=found[0], span_id=span.id)


def score_range(model: Model) -> Optional[Tuple[float, float]]:
    """The (lowest, highest) score the encoder's similarity can give, from its attrs:
    cosine [-1, 1], a HybridEncoder's weighted sum of its parts' ranges; None when
    unbounded (inner products)."""
    attrs = model.attrs
    similarity = attrs.get("similarity")
    if similarity == "cosine" and attrs.get("normalize", True):
        return (-1.0, 1.0)
    if similarity == "weighted cosine" and len(model.layers) == 2:
        parts = [score_range(layer) for layer in model.layers]
        if all(parts):
            weights = (attrs.get("dense_weight", 1.0), attrs.get("sparse_weight", 1.0))
            return (sum(w * lo for w, (lo, _) in zip(weights, parts)),
                    sum(w * hi for w, (_, hi) in zip(weights, parts)))
    return None


def _check_threshold(threshold: float, encoder: Model, prior_max: Optional[float]) -> None:
    """A threshold no score can reach makes every mention NIL, one below every score does
    nothing: both are mistakes. prior_max: the most the annotation prior adds to a score
    (0 without one; None while unknown, before the dictionary is adopted)."""
    bounds = score_range(encoder)
    if bounds is None or isinstance(threshold, bool):
        return
    lo, hi = bounds
    hi = float("inf") if prior_max is None else hi + prior_max
    if not lo <= threshold <= hi:
        raise BioLinkError(Errors.E125.format(
            value=threshold, similarity=encoder.attrs.get("similarity"), name=encoder.name,
            lo=round(lo, 6), hi=round(hi, 6)))


# Settings (config.cfg) checked by _check_config; the saved cfg's copies are checked too.
CONFIG_KEYS = ("k", "threshold", "max_entities_per_mention", "cache_size", "nil_id",
               "index_level", "index_sources", "sieve_threshold", "prior_weight")
# Settings the saved index was built for: a config that changes them needs a rebuild.
INDEX_SETTINGS = ("index_level", "index_sources")


def _check_config(**values) -> None:
    if not isinstance(values["k"], int) or values["k"] < 1:
        raise BioLinkError(Errors.E102.format(key="k", what="an integer >= 1", value=values["k"]))
    m = values["max_entities_per_mention"]
    if not isinstance(m, int) or m < 1:
        raise BioLinkError(Errors.E102.format(key="max_entities_per_mention",
                                              what="an integer >= 1", value=m))
    if not isinstance(values["threshold"], (int, float)):
        raise BioLinkError(Errors.E102.format(key="threshold", what="a number",
                                              value=values["threshold"]))
    if not isinstance(values["cache_size"], int) or values["cache_size"] < 0:
        raise BioLinkError(Errors.E102.format(key="cache_size", what="an integer >= 0",
                                              value=values["cache_size"]))
    if values["index_sources"] not in INDEX_SOURCES:
        raise BioLinkError(Errors.E102.format(
            key="index_sources", value=values["index_sources"],
            what='"O" (the dictionary\'s names), "D" (corpus mentions added by augment or '
                 'add_names) or "OD" (both)'))
    sieve = values["sieve_threshold"]
    if sieve is not None and (isinstance(sieve, bool) or not isinstance(sieve, (int, float))
                              or not -1.0 <= sieve <= 1.0):
        raise BioLinkError(Errors.E102.format(
            key="sieve_threshold", value=sieve,
            what="null (no sieve) or a cosine in [-1, 1] that a mention's best D name must "
                 "reach to be answered from the D names (Triplet-Search uses 0.95)"))
    prior = values["prior_weight"]
    if isinstance(prior, bool) or not isinstance(prior, (int, float)) or prior < 0:
        raise BioLinkError(Errors.E102.format(
            key="prior_weight", value=prior,
            what="a number >= 0 (0: no annotation prior; init-linker's default is 0.005)"))
    if values["index_level"] not in ("name", "concept"):
        raise BioLinkError(Errors.E102.format(key="index_level", what='"name" or "concept"',
                                              value=values["index_level"]))
    if not isinstance(values["nil_id"], str):
        raise BioLinkError(Errors.E102.format(key="nil_id", what="a string", value=values["nil_id"]))


def _check_type_filter(value) -> Dict[str, frozenset]:
    """label -> frozenset of allowed types; UMLS semantic groups (DISO) become their TUIs."""
    from .readers.umls import semantic_groups

    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
            isinstance(label, str) and isinstance(types, (list, tuple))
            and all(isinstance(t, str) and t for t in types) for label, types in value.items()):
        raise BioLinkError(Errors.E161.format(value=value))
    groups: Dict[str, List[str]] = {}
    for tui, (group, _, _) in semantic_groups().items():
        groups.setdefault(group, []).append(tui)
    out = {}
    for label, types in value.items():
        allowed = set()
        for t in types:
            allowed.update(groups.get(t, [t]))
        out[label] = frozenset(allowed)
    return out


def _check_id_preference(value) -> Tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, (list, tuple)) or not all(
            isinstance(v, str) and v.strip() for v in value):
        raise BioLinkError(Errors.E162.format(value=value))
    return tuple(v.strip().upper() for v in value)
