"""The linker: from mentions to ranked concepts, with no spaCy pipe around it.

A `LinkingPolicy` has a retriever (dictionary + encoder + index, retriever.py) and its
stages, in the order a mention meets them (stages/):
- abbreviations: a short form its document defines is linked as its long form;
- composites: "breast and ovarian cancer" is searched whole and as its parts;
- the search itself, per distinct query key, deduplicated and cached, with three steps
  around the retriever: the sieve over corpus names, the type filter, the annotation prior;
- candidate stages (the Siamese verifier) on each query's candidates;
- the composite decision, then mention stages (the rerankers) in each mention's context;
- the NIL rule (score threshold): which candidates become kb_id_ and kb_ents.
Each is a registered, versioned config block (`[components.NAME.stages.*]`); the flat
settings (`threshold`, `prior_weight`, ...) are the same steps' shorthand. `link` is the
one way anything links (the pipe, `evaluate`, the training-pair builders and trainers,
`link`, the Ray worker), so a stage cannot count in one place and not another. The
`bio_linker` pipe (component.py) has a LinkingPolicy and adds spaCy's config, set-up,
serialization and span writing.
"""
from collections import OrderedDict
import json
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
from scipy import sparse
import srsly
from spacy.tokens import Doc, Span
from spacy.vocab import Vocab
from thinc.api import Model

from ..kb.dictionary import ConceptDictionary, StringTable
from ..encoders.settings import keeping_config_settings
from ..errors import BioLinkError, Errors
from ..index import NameIndex, exact_index_from_state
from ..io.files import json_text, write_json
from ..io.util import RELEASE_MEMORY_FROM, read_arrays, release_memory
from ..index.concepts import Candidates
from ..encoders.checks import check_model
from ..index.sparse import check_index
from ..index.threads import single_threaded_blas, thread_pools
from ..text.normalize import MentionNormalizer
from .retriever import Retriever
from .settings import PIPE_ONLY, SETTINGS, check_settings, defaults, step_settings
from .stages import Stage, check_stages as _check_stages
from .stages.abbreviations import Abbreviations
from .stages.composites import CompositeSplitter
from .stages.prior import AnnotationPrior
from .stages.score_threshold import ScoreThreshold
from .stages.sieve import CorpusSieve
from .stages.type_filter import TypeFilter, check_type_filter as _check_type_filter

# Per mention: (text, ranked candidates) for each concept it names; one pair unless a
# composite mention ("breast and ovarian cancer") was split.
MentionLinks = List[Tuple[str, Candidates]]

# The steps every linker has, by the name their config block's stage carries as `step`,
# and the flat settings each stands for, with their defaults: a block sets those
# settings (E175 where a flat setting says otherwise).
STEP_SETTINGS = step_settings()


class Mention:
    """A stretch of a doc to link: a span, or gold offsets that need not align to tokens."""

    __slots__ = ("doc", "start_char", "end_char", "text", "label")

    def __init__(self, doc: Doc, start_char: int, end_char: int, text: Optional[str] = None,
                 label: Optional[str] = None):
        self.doc = doc  # None for a text on its own (of_text)
        self.start_char = start_char
        self.end_char = end_char
        self.text = doc.text[start_char:end_char] if text is None else text
        # The span label: what type_filter keys on (None: not filtered).
        self.label = label

    @classmethod
    def from_span(cls, span: Span) -> "Mention":
        """The mention a span stands for: its doc, character offsets, text and label."""
        return cls(span.doc, span.start_char, span.end_char, span.text, span.label_)

    @classmethod
    def of_text(cls, text: str, label: Optional[str] = None) -> "Mention":
        """A text with no document around it (a dictionary name, a query): no
        abbreviation is defined for it and a reranker sees no context."""
        return cls(None, 0, len(text), text, label)



class LinkingPolicy:
    """Links mentions to the concepts of a ConceptDictionary: a retriever (encoder and
    index) and stages (module docstring).

    Set up with `index_names(dictionary, fit_encoder=True)` or, for an index already built,
    `_adopt(dictionary, where=...)`; then `link` gives each mention's ranked
    candidates and `annotations` what a span gets from them.
    """

    def __init__(self, encoder: Model, index: NameIndex, *, name: str = "bio_linker",
                 vocab: Optional[Vocab] = None, normalizer: Optional[MentionNormalizer] = None,
                 stages: Optional[Dict[str, "Stage"]] = None, **settings):
        """settings: the flat settings of linker/settings.py (SETTINGS), each defaulting
        to its default there; the pipe's own (spans_key, labels) are not the linker's."""
        known = defaults()
        unknown = sorted(set(settings) - set(known) | set(settings) & set(PIPE_ONLY))
        if unknown:
            raise BioLinkError(Errors.E102.format(
                key=unknown[0], value=settings[unknown[0]],
                what=f"one of {sorted(set(known) - set(PIPE_ONLY))}"))
        values = {**known, **settings}
        values["type_filter"] = values["type_filter"] or {}
        step_blocks, stages = _split_step_blocks(stages, name)
        flat = _with_step_blocks(name, step_blocks, {
            key: values[key] for key in STEP_SETTINGS_KEYS})
        self.id_preference = _check_id_preference(values["id_preference"])
        k, nil_id, cache_size = values["k"], values["nil_id"], values["cache_size"]
        index_level, index_sources = values["index_level"], values["index_sources"]
        corpus_margin = values["corpus_margin"]
        self.name = name
        self.vocab = vocab if vocab is not None else Vocab()
        self.cfg: Dict = {
            "resolve_abbreviations": flat["resolve_abbreviations"],
            "split_composites": flat["split_composites"],
            "k": k, "threshold": flat["threshold"], "nil_id": nil_id,
            "max_entities_per_mention": flat["max_entities_per_mention"],
            "cache_size": cache_size,
            # "name": one index row per name (Triplet-Search's T); "concept": one per
            # concept, the mean of its names' vectors (its C).
            "index_level": index_level,
            # "O": the dictionary's own names; "D": corpus mentions added by augment or
            # add_names; "OD": both (Triplet-Search's Search:O, D, OD).
            "index_sources": index_sources,
            "sieve_threshold": flat["sieve_threshold"],
            "prior_weight": flat["prior_weight"],
            "prior_mode": flat["prior_mode"],
            "corpus_margin": corpus_margin,
            "split_margin": flat["split_margin"],
        }
        check_settings(self.cfg)
        # Refused before anything is read into them: a received model directory must not
        # be able to name a layer whose state loads by unpickling (safe_models.py).
        check_model(encoder, role="encoder", where=f"{name} encoder")
        check_index(index, where=f"{name} index")
        if not isinstance(nil_id, str) or not nil_id.strip():
            # "" would be written as ent.kb_id_, which spaCy reads as "not linked" and
            # scores as a miss, and it cannot be told from a span the linker never saw.
            raise BioLinkError(Errors.E952.format(value=nil_id))
        self.retriever = Retriever(
            encoder, index, normalizer if normalizer is not None else MentionNormalizer(),
            name=name, index_level=index_level, index_sources=index_sources,
            corpus_margin=corpus_margin)
        self.dictionary: Optional[ConceptDictionary] = None
        self._type_filter_setting = flat["type_filter"]
        self._build_steps()
        self._check_threshold_now()
        self._cache: "OrderedDict[str, Candidates]" = OrderedDict()
        # During `link`, where a stage reads them: each search's query keys and their
        # encoded rows (query_vectors); None otherwise.
        self._kept_queries: Optional[List[Tuple[List[str], object]]] = None
        # The stages after retrieval, by name, in the order they run (stages/__init__.py):
        # built from the config's [components.NAME.stages.*] blocks.
        self.stages: Dict[str, Stage] = _check_stages(stages)
        self._attached: set = set()
        # Per dictionary: the id id_preference reports for each concept looked up so far.
        self._reported_ids: Dict[int, str] = {}
        self._kb = None

    def _build_steps(self) -> None:
        """The steps every linker has (abbreviations, composites, sieve, prior, type
        filter, NIL rule), from the effective settings."""
        cfg = self.cfg
        self.abbreviations = Abbreviations(cfg["resolve_abbreviations"], self.vocab)
        self.composites = CompositeSplitter(cfg["split_composites"], cfg["split_margin"])
        self.sieve = CorpusSieve(cfg["sieve_threshold"])
        self.prior = AnnotationPrior(cfg["prior_weight"], cfg["prior_mode"])
        self.type_filter_step = TypeFilter(self._type_filter_setting)
        self.nil_rule = ScoreThreshold(cfg["threshold"], cfg["max_entities_per_mention"])

    @property
    def steps(self) -> Dict[str, object]:
        """The steps every linker has, by step name, in the order a mention meets them."""
        return {"abbreviations": self.abbreviations, "composites": self.composites,
                "sieve": self.sieve, "type_filter": self.type_filter_step,
                "prior": self.prior, "nil_rule": self.nil_rule}

    def configure(self, **settings) -> None:
        """Change flat settings of a live linker (benchmarks sweeping a setting): checked
        as the config's are, the steps rebuilt and, with a dictionary, re-adopted (the
        sieve and the prior are computed from it). Settings the index was built for
        (index_level, index_sources) need `index_names` again afterwards."""
        unknown = sorted(set(settings) - set(self.cfg) - {"type_filter"})
        if unknown:
            raise BioLinkError(Errors.E102.format(key=unknown[0], value=settings[unknown[0]],
                                                  what=f"one of {sorted(self.cfg)}"))
        if "type_filter" in settings:
            _check_type_filter(settings["type_filter"])
            self._type_filter_setting = settings.pop("type_filter") or {}
        checked = {**self.cfg, **settings}
        check_settings({key: checked[key] for key in CONFIG_KEYS})
        rebuild = any(key in settings and settings[key] != self.cfg[key]
                      for key in INDEX_SETTINGS)
        self.cfg.update(settings)
        retriever = self.retriever
        retriever.index_level = self.cfg["index_level"]
        retriever.index_sources = self.cfg["index_sources"]
        retriever.corpus_margin = self.cfg["corpus_margin"]
        sieve_index = self.sieve.index  # the same D names: still right for a new threshold
        self._build_steps()
        self._cache.clear()
        if self.dictionary is not None and self.index.is_built and not rebuild:
            self._adopt(self.dictionary, where=self.name,
                        sieve=sieve_index if self.cfg["sieve_threshold"] is not None else None)
        else:
            self._check_threshold_now()

    def _check_threshold_now(self) -> None:
        _check_threshold(self.cfg["threshold"], self.model, self.prior.score_bound)

    # The retriever's parts, where the linker's callers have always found them.

    @property
    def model(self) -> Model:
        """The encoder."""
        return self.retriever.model

    @model.setter
    def model(self, encoder: Model) -> None:
        """Swap the encoder (dev scoring puts in the one being trained)."""
        self.retriever.model = encoder

    @property
    def index(self) -> NameIndex:
        """The search over the dictionary's names."""
        return self.retriever.index

    @index.setter
    def index(self, index: NameIndex) -> None:
        """Swap the search (index it with `index_names` before linking)."""
        self.retriever.index = index

    @property
    def normalizer(self) -> MentionNormalizer:
        """How mentions and names are folded before they are encoded."""
        return self.retriever.normalizer

    @normalizer.setter
    def normalizer(self, normalizer: MentionNormalizer) -> None:
        """Take a saved normalizer (its spelling map is data)."""
        self.retriever.normalizer = normalizer

    @property
    def type_filter(self) -> Dict[str, frozenset]:
        """span label -> allowed types (semantic groups spelled out as TUIs)."""
        return self.type_filter_step.types

    @property
    def kb(self):
        """Concept lookup in scispaCy's shape: `kb[cid]` and `kb.cui_to_entity[cid]` give
        a record with concept_id, canonical_name, aliases, types, definition; `cid` may
        be any of a concept's ids."""
        from ..kb.lookup import ConceptLookup

        if self.dictionary is None:
            raise BioLinkError(Errors.E163)
        if self._kb is None or self._kb.dictionary is not self.dictionary:
            self._kb = ConceptLookup(self.dictionary, self.reported_id)
        return self._kb

    def reported_id(self, concept: int) -> str:
        """The id kb_id_ and kb_ents give for a concept: its id in the namespace that
        comes first in id_preference. A concept whose primary id is in no listed
        namespace (a MONDO term, a UMLS CUI) keeps it; list that namespace after
        another (["MESH", "MONDO"]) to report the other instead. A string is an id a
        stage built itself, outside the dictionary (a variant's `p|SUB|V|600|E`,
        stages/variants.py): reported as it is."""
        if isinstance(concept, str):
            return concept
        found = self._reported_ids.get(concept)
        if found is not None:
            return found
        ids = self.dictionary.ids_of(concept)
        best = ids[0]
        if len(ids) > 1 and self.id_preference:
            from ..kb.ids import namespace_of

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
        return self.type_filter_step.allowed(label)

    # Set-up ----------------------------------------------------------------

    @property
    def is_initialized(self) -> bool:
        """True once a dictionary is loaded and the index built, i.e. the linker can link."""
        return self.dictionary is not None and self.index.is_built

    def index_names(self, dictionary: ConceptDictionary, *, fit_encoder: bool = False,
                    encode: Optional[Callable[[List[str]], object]] = None) -> None:
        """Encode the dictionary's names (normalized as mentions are) and build the search
        over them. fit_encoder: first fit the encoder's statistics on those names (a new
        linker; not when names are added to a fitted one). encode: what gives the
        normalized names' vectors instead of the encoder (a cache of them, for callers
        that index many dictionaries sharing most names)."""
        if encode is None and dictionary.n_names >= RELEASE_MEMORY_FROM:
            self._index_names_packed(dictionary, fit_encoder=fit_encoder)
            return
        with self.normalizer.unbounded_cache():
            names = [self.normalizer.name(name) for name in dictionary.names]
            if fit_encoder:
                self.model.initialize(X=names)
                # The fit's counts are garbage now, and the heap they held is given back
                # before encoding (as after each large step: see release_memory).
                release_memory(dictionary.n_names)
            vectors = encode(names) if encode is not None else self.encode(names, progress=True)
            # The word postings (retriever.build) read the names as folded here, packed.
            folded = StringTable.from_strings(names)
            del names
        release_memory(dictionary.n_names)
        self._build_search(dictionary, vectors, folded)

    def _index_names_packed(self, dictionary: ConceptDictionary, *, fit_encoder: bool) -> None:
        """index_names for a large dictionary, never holding every folded name as a Python
        string: the names are folded a slice at a time into a packed table, which the
        encoder's fit and the encoding then read a slice at a time. The same strings in the
        same order as the list index_names folds otherwise, so the same vectors and index.
        A list of 10M strings fills Python's small-object arenas, and objects that outlive
        it (the fit's vocabulary, caches) keep most of those arenas from the OS."""
        # The folds are done before anything else is built, so that what the unbounded
        # token cache and the slices leave in the arenas is all freed together (and the
        # arenas with it) before the fit and the encoding allocate.
        with self.normalizer.unbounded_cache():
            folded = StringTable.from_strings(map(self.normalizer.name, dictionary.names))
        release_memory(dictionary.n_names)
        if fit_encoder:
            self.model.initialize(X=folded)
            release_memory(dictionary.n_names)
        vectors = self.encode(folded, progress=True)
        release_memory(dictionary.n_names)
        self._build_search(dictionary, vectors, folded)

    def _build_search(self, dictionary: ConceptDictionary, name_vectors,
                      folded: Optional[Sequence[str]] = None) -> None:
        """Adopt `dictionary` given its names' vectors (and the names as normalized, if
        at hand): the retriever's index and, with a sieve, the exact index over the D
        names. Nothing is encoded twice."""
        self.retriever.build(dictionary, name_vectors, folded=folded)
        self._adopt(dictionary, where=self.name, sieve=self.sieve.build(dictionary, name_vectors))

    def _adopt(self, dictionary: ConceptDictionary, *, where,
               sieve: Optional[NameIndex] = None) -> None:
        """Take `dictionary` with the index as it stands, checking that they agree, and
        set the steps that are computed from it (sieve, prior, type filter).

        sieve: the exact index over the D names; with a sieve_threshold and none given
        (a pipeline saved without one), it is rebuilt by encoding the D names.
        """
        self.retriever.adopt(dictionary, where=where)
        self.sieve.adopt(dictionary, where=where, index=sieve,
                         encode_names=self.retriever.encode_names)
        self.prior.adopt(self.retriever.searched, dictionary.n_concepts)
        # Now that the prior's largest boost is known, the threshold's upper bound is too.
        self._check_threshold_now()
        self.dictionary = dictionary
        self._reported_ids = {}
        self._cache.clear()
        # Each label's mask now, so that a type_filter naming no type of the dictionary
        # warns (W020) at initialize and load, not at the first span of that label.
        self.type_filter_step.reset(dictionary)
        # The BLAS and OpenMP libraries linking limits, looked up with the pipeline (the
        # index loaded faiss's) rather than in its first batch (issue 58).
        thread_pools()

    def clear_cache(self) -> None:
        """Forget every cached query result, the stages' too (benchmarks that time cold
        passes)."""
        self._cache.clear()
        for stage in self.stages.values():
            stage.clear_cache()

    def encode(self, texts: Sequence[str], *, batch_size: int = 16384, progress: bool = False):
        """Encode texts in batches (sparse rows or a dense float32 array)."""
        return self.retriever.encode(texts, batch_size=batch_size, progress=progress)

    def query_vectors(self, keys: Sequence[str]):
        """The encoded rows of query keys (distinct), as `encode` gives them. Inside `link`,
        for a stage whose `uses_query_vectors` is true, the rows this batch's search
        encoded are kept and given back, so only the keys the query cache answered are
        encoded here; elsewhere every key is encoded."""
        kept = self._kept_queries
        if not kept:
            return self.encode(keys)
        where: Dict[str, Tuple[int, int]] = {}
        for source, (texts, _) in enumerate(kept):
            for row, text in enumerate(texts):
                where.setdefault(text, (source, row))
        sources = [vectors for _, vectors in kept]
        missing = [key for key in keys if key not in where]
        if missing:
            # inside a batch, as link_texts encodes (small products, BLAS threads spin)
            with single_threaded_blas():
                sources.append(self.encode(missing))
            where.update((key, (len(sources) - 1, row)) for row, key in enumerate(missing))
        source_of = numpy.fromiter((where[key][0] for key in keys), numpy.int64, len(keys))
        row_of = numpy.fromiter((where[key][1] for key in keys), numpy.int64, len(keys))
        if len(sources) == 1:
            return sources[0][row_of]
        # Each source's rows in one slice, then put back in the keys' order.
        order = numpy.argsort(source_of, kind="stable")
        parts = [sources[s][row_of[order[source_of[order] == s]]]
                 for s in numpy.unique(source_of).tolist()]
        stacked = (sparse.vstack(parts, format="csr") if sparse.issparse(parts[0])
                   else numpy.concatenate(parts))
        back = numpy.empty(len(keys), numpy.int64)
        back[order] = numpy.arange(len(keys))
        return stacked[back]

    # Stages set as attributes (the Python API before stages were config) ---

    @property
    def verifier(self) -> Optional["Stage"]:
        """The stage named "verifier", or None."""
        return self.stages.get("verifier")

    @verifier.setter
    def verifier(self, stage: Optional["Stage"]) -> None:
        """Set (or, with None, remove) the verifier stage from Python."""
        self._attach("verifier", stage)

    @property
    def reranker(self) -> Optional["Stage"]:
        """The stage named "reranker", or None."""
        return self.stages.get("reranker")

    @reranker.setter
    def reranker(self, stage: Optional["Stage"]) -> None:
        """Set (or, with None, remove) the reranker stage from Python."""
        self._attach("reranker", stage)

    def _attach(self, name: str, stage: Optional["Stage"]) -> None:
        """A stage set from Python rather than the config: it is saved whole (model config,
        weights and settings) under its name, as pipelines saved before stages were
        config hold it, since config.cfg cannot describe it."""
        if stage is None:
            self.stages.pop(name, None)
            self._attached.discard(name)
            return
        self.stages.update(_check_stages({name: stage}))
        self._attached.add(name)

    # Saving and loading (the pipe adds its cfg and the atomic directory) -----

    def _configured_stages(self) -> List[str]:
        """The stages built from the config, whose weights alone are saved (the others,
        set from Python, are saved whole)."""
        return [name for name in self.stages if name not in self._attached]

    @property
    def has_sieve(self) -> bool:
        """Whether a sieve over corpus names is in use (sieve_threshold and D names)."""
        return self.sieve.active

    def part_writers(self) -> Dict[str, Callable]:
        """What to_disk writes of the linker, by part name: normalizer, encoder;
        dictionary, index and sieve once initialized; the configured stages' weights
        (`stages/NAME`) and stages set from Python, whole (`verifier`, `reranker`)."""
        writers: Dict[str, Callable] = {
            "normalizer": lambda p: write_json(p, self.normalizer.to_dict(), indent=2),
            "encoder": lambda p: self.model.to_disk(p)}
        if self.is_initialized:
            writers["dictionary"] = lambda p: self.dictionary.to_disk(p)
            writers["index"] = lambda p: self.index.to_disk(p)
        if self.sieve.active:
            writers["sieve"] = lambda p: self.sieve.index.to_disk(p)
        configured = self._configured_stages()
        if configured:
            writers["stages"] = lambda p: _write_stage_states(p, {
                n: self.stages[n].state_to_bytes() for n in configured})
        for name in sorted(self._attached):
            writers[name] = (lambda stage: lambda p: stage.to_disk(p))(self.stages[name])
        return writers

    def part_bytes(self) -> Dict[str, Callable]:
        """The same parts as part_writers, as bytes."""
        parts: Dict[str, Callable] = {
            "normalizer": lambda: json_text(self.normalizer.to_dict()),
            "encoder": lambda: self.model.to_bytes()}
        if self.is_initialized:
            parts["dictionary"] = lambda: self.dictionary.to_bytes()
            parts["index"] = lambda: self.index.to_bytes()
        if self.sieve.active:
            parts["sieve"] = lambda: self.sieve.index.to_bytes()
        configured = self._configured_stages()
        if configured:
            parts["stages"] = lambda: srsly.msgpack_dumps(
                {n: self.stages[n].state_to_bytes() for n in configured})
        for name in sorted(self._attached):
            parts[name] = (lambda stage: lambda: stage.to_bytes())(self.stages[name])
        return parts

    def read_parts_from_disk(self, path: Path, cfg: Dict, *, exclude: Iterable[str] = ()) -> None:
        """Read what part_writers wrote to `path`, given the saved `cfg` (already read)."""
        parts = ["normalizer", "encoder"] + (["dictionary", "index"] if cfg.get("initialized") else [])
        configured = self._configured_stages()
        if configured and "stages" not in exclude:
            parts += [f"stages/{n}" for n in configured]
        missing = [p for p in parts if p not in exclude and not (path / p).exists()]
        if missing:
            raise BioLinkError(Errors.E104.format(path=path, reason=f"missing {', '.join(missing)}"))
        self._adopt_saved_cfg(cfg, where=path / "cfg")
        if "normalizer" not in exclude:
            try:
                state = json.loads((path / "normalizer").read_text(encoding="utf8"))
            except ValueError as err:
                raise BioLinkError(Errors.E104.format(
                    path=path, reason=f"normalizer is not JSON: {err}")) from None
            self._adopt_saved_normalizer(state, where=path / "normalizer")
        try:
            with keeping_config_settings(self.model, index_built=self.cfg["initialized"],
                                         where=str(path / "encoder")):
                self.model.from_disk(path / "encoder")
        except BioLinkError:
            raise
        except (ValueError, KeyError, OSError) as err:
            raise BioLinkError(Errors.E104.format(path=path, reason=f"encoder: {err}")) from None
        self._check_threshold_now()
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
        if "stages" not in exclude:
            for name in configured:
                self.stages[name].state_from_bytes((path / "stages" / name).read_bytes())
        # Saved before stages were config, or set from Python: whole directories.
        for name, load in _WHOLE_STAGES.items():
            if (path / name).is_dir() and name not in exclude and name not in configured:
                self._attach(name, load().from_disk(path / name))

    def read_parts_from_bytes(self, msg: Dict, cfg: Dict, *, exclude: Iterable[str] = ()) -> None:
        """Read what part_bytes gave (`msg`: part name -> bytes), given the saved `cfg`."""
        self._adopt_saved_cfg(cfg, where="<bytes> cfg")
        if "normalizer" not in exclude:
            self._adopt_saved_normalizer(json.loads(msg["normalizer"]),
                                         where="<bytes> normalizer")
        with keeping_config_settings(self.model, index_built=self.cfg["initialized"],
                                     where="<bytes> encoder"):
            self.model.from_bytes(msg["encoder"])
        self._check_threshold_now()
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
        configured = self._configured_stages()
        if configured and "stages" not in exclude:
            states = srsly.msgpack_loads(msg["stages"]) if "stages" in msg else {}
            missing = [n for n in configured if n not in states]
            if missing:
                raise BioLinkError(Errors.E104.format(
                    path="<bytes>", reason=f"no weights for stage(s) {', '.join(missing)}"))
            for name in configured:
                self.stages[name].state_from_bytes(states[name])
        for name, load in _WHOLE_STAGES.items():
            if name in msg and name not in exclude and name not in configured:
                self._attach(name, load().from_bytes(msg[name]))

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
            check_settings(checked)
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
        try:
            saved = MentionNormalizer.from_dict(state)
        except (ValueError, TypeError, KeyError, AttributeError) as err:
            raise BioLinkError(Errors.E104.format(
                path=where, reason=f"the normalizer's settings are damaged ({err})")) from None
        if self.cfg["initialized"]:
            config, kept = self.normalizer.to_dict(), saved.to_dict()
            for key in config:
                if key != "spelling" and config[key] != kept[key]:
                    raise BioLinkError(Errors.E124.format(where=where, key=f"normalizer.{key}",
                                                          saved=kept[key], config=config[key]))
        self.normalizer = saved


    # Linking ---------------------------------------------------------------

    def link(self, mentions: Sequence[Mention], k: Optional[int] = None, *,
             parts: Optional[Callable[[int, str], Optional[List[str]]]] = None,
             stop_before: Optional[str] = None) -> List[MentionLinks]:
        """Link a batch of mentions through the retriever and every stage: the one way
        anything links (the pipe, evaluate, the training-pair builders and trainers, link,
        the Ray worker), so a stage cannot count in one place and not another.

        Returns, per mention, (text, ranked (concept index, score) candidates) for each
        concept it names, at most k (default cfg k) per part.

        Steps: abbreviations spelled out; each text's query key; the search, each mention
        label that type_filter restricts searched apart (with the sieve and the prior);
        the candidate stages (a verifier) on each distinct query; the composite decision;
        the mention stages (a reranker) in each mention's context.

        A composite is split only when every part matches better than the whole and the
        parts name different concepts: that keeps "hereditary breast and ovarian cancer"
        whole, whether it is itself a dictionary name or its parts are names of it.
        parts: instead, a rule that gives, for mention i and its resolved text, the texts
            to link (several: split, whatever they score; None: the linker's rule), as
            evaluate's composite protocol does.
        stop_before: the name of a stage where linking stops, for a trainer that needs
            the candidates that stage is given.
        The batch is deduplicated: each distinct text is encoded and searched once.
        """
        if not self.is_initialized:
            raise BioLinkError(Errors.E101)
        stages = self._stages_until(stop_before)
        k = max([k or self.cfg["k"]] + [stage.k for stage in stages if stage.level == "mentions"])
        keep = any(stage.level == "mentions" and getattr(stage, "uses_query_vectors", False)
                   for stage in stages)
        self._kept_queries = [] if keep else None
        try:
            return self._link(mentions, k, parts, stages)
        finally:
            self._kept_queries = None

    def _link(self, mentions: Sequence[Mention], k: int,
              parts: Optional[Callable[[int, str], Optional[List[str]]]],
              stages: Sequence["Stage"]) -> List[MentionLinks]:
        """`link` for the stages given, k already the largest any of them needs."""
        texts = self.resolved_texts(mentions)
        chosen = [parts(i, text) if parts is not None else None for i, text in enumerate(texts)]
        split_parts = [self.composite_parts(text) if given is None else
                       (given if len(given) > 1 else []) for text, given in zip(texts, chosen)]
        groups = [self.filter_group(m.label) for m in mentions]
        keys_by_group: Dict[Optional[str], set] = {}
        for group, text, mention_parts in zip(groups, texts, split_parts):
            keys = keys_by_group.setdefault(group, set())
            keys.add(self.query_key(text))
            keys.update(self.query_key(p) for p in mention_parts)
        results = self._candidates(keys_by_group, k, stages)

        def linked(text: str, group: Optional[str]) -> Tuple[str, Candidates]:
            key = self.query_key(text)
            return (text, results[(group, key)] if key else [])

        out = []
        for group, text, mention_parts, given in zip(groups, texts, split_parts, chosen):
            split = [linked(p, group) for p in mention_parts]
            if given is not None:
                out.append(split if split else [linked(text, group)])
            else:
                out.append(self.composites.choose(linked(text, group), split))
        for stage in stages:
            if stage.level == "mentions":
                out = stage.apply_to_mentions(self, mentions, out)
        return out

    def _stages_until(self, stop_before: Optional[str]) -> List["Stage"]:
        names = list(self.stages)
        if stop_before is None:
            return list(self.stages.values())
        if stop_before not in self.stages:
            raise BioLinkError(Errors.E164.format(name=stop_before, stages=names or "none"))
        return [self.stages[n] for n in names[:names.index(stop_before)]]

    def filter_group(self, label: Optional[str]) -> Optional[str]:
        """The label its mentions are searched under: itself where type_filter restricts
        it, None (every concept) otherwise."""
        return self.type_filter_step.group(label)

    def _candidates(self, keys_by_group: Dict[Optional[str], Iterable[str]], k: int,
                    stages: Sequence["Stage"]) -> Dict[Tuple[Optional[str], str], Candidates]:
        """The k best concepts of each query key, searched per filter_group (mentions whose
        label type_filter restricts apart), then passed through the candidate stages
        (a verifier), keyed by (group, key)."""
        results: Dict[Tuple[Optional[str], str], Candidates] = {}
        for group, keys in keys_by_group.items():
            found = self.link_texts(sorted(key for key in keys if key), k, label=group)
            for stage in stages:
                if stage.level == "candidates":
                    queries = list(found)
                    kept = stage.apply_to_candidates(self, queries, [found[q] for q in queries])
                    found = dict(zip(queries, kept))
            results.update(((group, key), candidates) for key, candidates in found.items())
        return results

    def resolved_texts(self, mentions: Sequence[Mention]) -> List[str]:
        """Mention texts with whitespace collapsed and, if configured, the abbreviations
        defined in their doc spelled out."""
        return self.abbreviations.texts(mentions)

    def composite_parts(self, text: str) -> List[str]:
        """The parts of a composite mention; empty when it is not one or splitting is off."""
        return self.composites.parts(text)

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
            with single_threaded_blas():
                vectors = self.encode(todo)
            if self._kept_queries is not None:
                self._kept_queries.append((todo, vectors))
            searched = [self.prior.rank(candidates)
                        for candidates in self.search(vectors, k, allowed=allowed)]
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
        if self.sieve.active and len(rest):
            answers, rest = self.sieve.search(vectors, k, allowed)
            for row, candidates in answers.items():
                results[row] = candidates
            if len(rest) and answers:
                vectors = vectors[rest]
        if len(rest):
            for row, candidates in zip(rest.tolist(), self.retriever.search(vectors, k, allowed)):
                results[row] = candidates
        return results

    def kb_ents(self, candidates: Candidates) -> List[Tuple[str, float]]:
        """Candidates at or above the threshold, as (concept id, score), best first."""
        return self.nil_rule.kb_ents(candidates, self.reported_id)

    def annotations(self, links: MentionLinks) -> Tuple[str, List[Tuple[str, float]], List]:
        """kb_id, kb_ents and kb_parts of one mention (the NIL rule's answer).

        A composite's kb_id joins its parts' ids with `|`, as the corpora write them, and
        its kb_ents holds the best concept of each part.
        """
        return self.nil_rule.annotations(links, self.reported_id, self.cfg["nil_id"])


def _split_step_blocks(stages: Optional[Dict], name: str) -> Tuple[Dict[str, object], Optional[Dict]]:
    """The stages setting split into blocks of the steps every linker has (by step) and
    the stages after retrieval (by name, in config order)."""
    if not isinstance(stages, dict):
        return {}, stages
    steps: Dict[str, object] = {}
    rest = {}
    for block_name, stage in stages.items():
        step = getattr(stage, "step", None)
        if step in STEP_SETTINGS:
            if step in steps:
                raise BioLinkError(Errors.E176.format(pipe=name, step=step, names=", ".join(
                    n for n, s in stages.items() if getattr(s, "step", None) == step)))
            steps[step] = stage
        else:
            rest[block_name] = stage
    return steps, rest


def _with_step_blocks(name: str, blocks: Dict[str, object], flat: Dict) -> Dict:
    """The flat settings with each step block's settings in place of the ones it stands
    for. A flat setting changed from its default that a block says otherwise is two
    answers to one question: E175."""
    out = dict(flat)
    for step, block in blocks.items():
        for key, value in block.settings.items():
            default = STEP_SETTINGS[step][key]
            if flat[key] != default and flat[key] != value:
                raise BioLinkError(Errors.E175.format(pipe=name, key=key, flat=flat[key],
                                                      step=step, value=value))
            out[key] = value
    return out


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
    if threshold <= lo:
        # At the lowest score the rule keeps every candidate (score >= threshold): a
        # threshold that does nothing, e.g. -1.0 with a cosine encoder.
        raise BioLinkError(Errors.E127.format(
            value=threshold, similarity=encoder.attrs.get("similarity"), name=encoder.name,
            lo=round(lo, 6), hi=round(hi, 6)))

# Settings (config.cfg) with a check (settings.py); the saved cfg's copies are checked too.
CONFIG_KEYS = tuple(s.name for s in SETTINGS if s.check is not None and s.name != "id_preference")
# Settings the saved index was built for: a config that changes them needs a rebuild.
INDEX_SETTINGS = ("index_level", "index_sources")
STEP_SETTINGS_KEYS = tuple(key for block in STEP_SETTINGS.values() for key in block)


def _check_id_preference(value) -> Tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, (list, tuple)) or not all(
            isinstance(v, str) and v.strip() for v in value):
        raise BioLinkError(Errors.E162.format(value=value))
    return tuple(v.strip().upper() for v in value)


def _load_verifier_class():
    from .stages.verifier import CandidateVerifier

    return CandidateVerifier


def _load_reranker_class():
    from .stages.reranker import Reranker

    return Reranker


# Stages a pipeline saved before stages were config holds whole, by part name.
_WHOLE_STAGES = {"verifier": _load_verifier_class, "reranker": _load_reranker_class}


def _write_stage_states(path: Path, states: Dict[str, bytes]) -> None:
    path.mkdir(parents=True, exist_ok=True)
    for name, data in states.items():
        (path / name).write_bytes(data)
