"""The `bio_linker` pipe: spaCy plumbing around the linking policy (policy.py).

Here: the factory and its config, `initialize` (fit the encoder, encode the names, build
the index), the spans a pipeline hands it, writing `span.kb_id_`, `span._.kb_ents` and,
for composites, `span._.kb_parts`, scoring, and saving and loading (no pickled code, an
atomic save). What is linked to what is decided in policy.py.
"""
import json
import logging
import os
from pathlib import Path
import shutil
import stat
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union
import warnings

import srsly
from spacy import util
from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.tokens import Doc, Span, SpanGroup
from spacy.vocab import Vocab
from thinc.api import Config, Model

from ..kb.dictionary import ConceptDictionary
from ..errors import BioLinkError, Errors, Warnings
from .extensions import install_extensions
from ..index import NameIndex
from .policy import (LinkingPolicy, Mention, MentionLinks, score_range)
from .settings import BY_NAME, defaults, with_settings_signature
from .nothing_to_link import NothingToLinkCheck, checked
from .stages import Stage
from ..encoders.checks import check_model
from ..text.normalize import MentionNormalizer, read_spelling_map
from ..io.files import json_text, write_json
from ..io.util import PathLike, atomic_directory
# bio_drop_nil follows the linkers in a pipeline: registered with bio_linker, it loads
# where the install predates its entry point (an editable install not reinstalled).
from . import drop_nil  # noqa: F401

logger = logging.getLogger(__name__)

__all__ = ["BioLinker", "Mention", "MentionLinks", "make_bio_linker", "score_range"]

DEFAULT_ENCODER_CONFIG = """
[model]
@architectures = "spacy-biolink.TfidfEncoder.v1"
analyzer = "char_wb"
ngram_range = [3, 3]
lowercase = true
sublinear_tf = false
min_df = 1
"""


# Exact sparse search below 500,000 names, word candidates above (index/auto.py), the
# query's words among those sharing their rarest n-grams with it (word_kernels.py), more
# candidates rescored past 1M names; "spacy-biolink.SparseIndex.v1" is always exact. The
# trained hybrids search their TF-IDF half with it too (training/dan.py).
DEFAULT_INDEX_CONFIG = {"@misc": "spacy-biolink.AutoSparseIndex.v6", "chunk_size": 256}


@Language.factory(
    "bio_linker",
    assigns=["token.ent_kb_id", "span._.kb_ents"],
    # doc.spans[spans_key] when that is set; spaCy's requires cannot name the key.
    requires=["doc.ents"],
    default_config={
        "encoder": Config().from_str(DEFAULT_ENCODER_CONFIG)["model"],
        "index": dict(DEFAULT_INDEX_CONFIG),
        "normalizer": {"@misc": "spacy-biolink.MentionNormalizer.v1", "lowercase": True,
                       "remove_punctuation": True, "spelling_variants": True,
                       "strip_plurals": True},
        # The flat settings, each defined once in settings.py.
        **defaults(),
        # Stages after retrieval, each a registered block ([components.NAME.stages.verifier]
        # @misc = "spacy-biolink.SiameseVerifierStage.v1", ...), run in the order given;
        # the steps every linker has may be written as blocks too (stages/registry.py).
        "stages": {},
        "scorer": {"@scorers": "spacy-biolink.linking_scorer.v1"},
    },
    default_score_weights={"bio_linker_acc": 1.0, "bio_linker_micro_p": None,
                           "bio_linker_micro_r": None, "bio_linker_micro_f": None},
)
@with_settings_signature
def make_bio_linker(nlp: Language, name: str, *, encoder: Model, index: NameIndex,
                    normalizer: MentionNormalizer, scorer: Optional[Callable],
                    stages: Dict[str, Any], **settings) -> "BioLinker":
    """Build the `bio_linker` component from its config block (spaCy's factory hook).
    `settings` are the flat settings of settings.py, each a keyword of this function's
    signature with its type and default. The linker is watched by a NothingToLinkCheck,
    which warns when the pipeline gives it no spans to link."""
    if not isinstance(normalizer, MentionNormalizer):
        # a config block naming another registered function would fail at first use
        raise BioLinkError(Errors.E193.format(where=f"[components.{name}]", name=name,
                                              function=getattr(normalizer, "__name__", "it"),
                                              got=type(normalizer).__name__))
    return checked(nlp, BioLinker(nlp.vocab, encoder, index, name=name, normalizer=normalizer,
                                  scorer=scorer, stages=stages, **settings))


class BioLinker(Pipe):
    """Links spans (doc.ents, or doc.spans[spans_key]) to concepts of a ConceptDictionary.

    The pipe *has* a linker (`self.linker`, a LinkingPolicy: retriever and stages) and
    does what a spaCy pipe does around it: set-up from the config, the spans it is given,
    writing annotations, scoring and serialization."""

    def __init__(self, vocab: Vocab, encoder: Model, index: NameIndex, *,
                 name: str = "bio_linker", normalizer: Optional[MentionNormalizer] = None,
                 scorer: Optional[Callable] = None, stages: Optional[Dict[str, Stage]] = None,
                 **settings):
        """settings: the flat settings of settings.py (defaults there)."""
        spans_key = settings.pop("spans_key", BY_NAME["spans_key"].default)
        labels = settings.pop("labels", BY_NAME["labels"].default)
        # Policy read from config.cfg on every load, never from the saved cfg file, so
        # spacy.load(path, config=...) changes it without rebuilding.
        self.linker = LinkingPolicy(encoder, index, name=name, vocab=vocab,
                                    normalizer=normalizer, stages=stages, **settings)
        install_extensions()
        self.name = name
        self.vocab = vocab
        self.scorer = scorer
        # One settings dict: the linker's and the pipe's own (spans, labels, state).
        self.cfg = self.linker.cfg
        self.cfg.update({"spans_key": spans_key, "labels": list(labels), "initialized": False})
        # Stages built from the config have no trained weights until initialize or a load
        # gives them; until then linking would use random ones.
        # A stage with nothing to train (needs_training False, e.g. GeneContext) is ready.
        self._untrained_stages = {name for name, stage in self.linker.stages.items()
                                  if getattr(stage, "needs_training", True)}
        # Set by the factory, which knows the pipeline (nothing_to_link.py).
        self.nothing_to_link: Optional[NothingToLinkCheck] = None

    # The linker's parts, where a pipe's users look for them -----------------

    @property
    def model(self) -> Model:
        """The name encoder (spaCy pipes keep their model here)."""
        return self.linker.model

    @property
    def dictionary(self) -> Optional[ConceptDictionary]:
        """The concepts and names linked to (None before initialize)."""
        return self.linker.dictionary

    @property
    def index(self) -> NameIndex:
        """The search over the encoded names."""
        return self.linker.index

    @property
    def normalizer(self) -> MentionNormalizer:
        """The folding applied to names and mentions alike."""
        return self.linker.normalizer

    @property
    def kb(self):
        """Concept lookup in scispaCy's shape (see LinkingPolicy.kb)."""
        return self.linker.kb

    @property
    def stages(self) -> Dict[str, Stage]:
        """The linker's stages after retrieval, by name, in the order they run."""
        return self.linker.stages

    @property
    def verifier(self):
        """The stage named "verifier", or None."""
        return self.linker.verifier

    @verifier.setter
    def verifier(self, stage) -> None:
        """Set (or, with None, remove) the verifier stage from Python."""
        self.linker.verifier = stage

    @property
    def reranker(self):
        """The stage named "reranker", or None."""
        return self.linker.reranker

    @reranker.setter
    def reranker(self, stage) -> None:
        """Set (or, with None, remove) the reranker stage from Python."""
        self.linker.reranker = stage

    @property
    def is_initialized(self) -> bool:
        """True once a dictionary is loaded and the index built, i.e. the pipe can link."""
        return self.linker.is_initialized

    def link(self, mentions: Sequence[Mention], k: Optional[int] = None, **options
             ) -> List[MentionLinks]:
        """The linker's one entry point (LinkingPolicy.link): mentions through the
        retriever and every stage."""
        self._check_stages_trained()
        return self.linker.link(mentions, k, **options)

    def _check_stages_trained(self) -> None:
        if self._untrained_stages:
            name = sorted(self._untrained_stages)[0]
            raise BioLinkError(Errors.E168.format(pipe=self.name, name=name))

    # Set-up ----------------------------------------------------------------

    def initialize(self, get_examples: Optional[Callable[[], Iterable]] = None, *,
                   nlp: Optional[Language] = None,
                   dictionary: Union[ConceptDictionary, Callable[[], ConceptDictionary], None] = None,
                   spelling_map: Optional[PathLike] = None,
                   augment: Sequence[PathLike] = (), augment_short_forms: bool = True,
                   augment_new_concepts: Sequence[str] = (),
                   augment_replaced_ids: bool = False,
                   augment_exclude_pmids: Optional[PathLike] = None,
                   stages: Optional[Dict[str, PathLike]] = None) -> None:
        """Fit the encoder's statistics on the dictionary names, build the index, and read
        each configured stage's trained weights.

        dictionary: a ConceptDictionary, or a callable returning one (the registered
            loader `spacy-biolink.load_dictionary.v4` in [initialize.components.NAME]).
        spelling_map: a `wrong||right` file of mention typos; saved with the pipeline.
        augment: PubTator corpora whose gold mentions are added to the dictionary as
            names of their concepts (training mentions, as BioSyn and Triplet-Search do).
        augment_short_forms: with augment, a mention whose abbreviation was resolved
            ("HTN" defined as "hypertension") also adds its own text, for later
            documents that use the short form without defining it.
        augment_new_concepts: with augment, corpus mention types (e.g. ["Chemical"])
            whose ids the dictionary lacks become concepts of their own, named by their
            mentions; other unknown ids are skipped, as by default.
        augment_replaced_ids: with augment_new_concepts, such an id whose mentions are
            names of one concept of the dictionary becomes that concept's alternative id
            (an id the vocabulary has replaced) instead of a concept of its own.
        augment_exclude_pmids: with augment, a file of PMIDs (one a line) or a corpus
            whose documents' PMIDs are held out: their mentions are not added. The dev
            and test documents a linker is measured on, where another corpus holds them
            too (BioRED shares abstracts with BC5CDR, NCBI-disease and tmVar3).
        stages: stage name -> trained directory (`train configs/siamese.cfg`, `train
            configs/reranker.cfg`), one for each stage of the config; a stage given none
            keeps the weights it has (a pipeline initialized again), and a new one is an
            error (E168).
        """
        if augment_replaced_ids and not augment_new_concepts:
            raise BioLinkError(Errors.E169)
        for name, path in (stages or {}).items():
            if name not in self.linker.stages:
                raise BioLinkError(Errors.E166.format(name=name,
                                                      stages=list(self.linker.stages) or "none"))
            self.linker.stages[name].load_trained(path)
            self._untrained_stages.discard(name)
        self._check_stages_trained()
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
            from ..corpora.bioc import read_pmid_file

            held_out = (read_pmid_file(augment_exclude_pmids, "--augment-exclude-pmids")
                        if augment_exclude_pmids is not None else frozenset())
            dictionary, stats = augment_dictionary(dictionary, augment, self.linker, make_doc,
                                                   short_forms=augment_short_forms,
                                                   new_concept_types=augment_new_concepts,
                                                   replaced_ids=augment_replaced_ids,
                                                   exclude_pmids=held_out)
            logger.info("bio_linker: %s", stats.summary())
            for stage in self.linker.stages.values():
                # a stage of one's own need not derive from Stage
                learn = getattr(stage, "learn_from_corpora", None)
                if learn is not None:
                    learn(self.linker, augment, exclude_pmids=held_out)
        # Positions, not shared_names(): its (name, ids) per shared name would live through
        # index_names, scattered over the arenas the dictionary's build left (BENCHMARKS).
        shared = dictionary.shared_name_positions()
        if len(shared):
            name, ids = dictionary.shared_names_at(shared[:1])[0]
            # Corpus counts break ties only where corpus mentions were added (here, or before
            # the dictionary was passed in) and the annotation prior reads them: say so only
            # then. A linker over a trained encoder has prior_weight 0 by default.
            counted = bool(dictionary.name_concept_counts.any())
            if counted and self.linker.prior.weight > 0:
                order = ("the one corpus annotations (--augment) gave that name most often "
                         "first, then in dictionary order")
            elif counted:
                order = ("in dictionary order (prior_weight is 0, so the corpus annotations do "
                         "not order them: set components.bio_linker.prior_weight, e.g. 1e-06, "
                         "to put the most annotated first)")
            else:
                order = "in dictionary order"
            warnings.warn(Warnings.W001.format(n=len(shared), name=name, ids=", ".join(ids),
                                               order=order))
        self.linker.index_names(dictionary, fit_encoder=True)
        if self.cfg["sieve_threshold"] is not None:
            if not self.linker.has_sieve:
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
        if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Iterable):
            raise BioLinkError(Errors.E195.format(got=f"a {type(pairs).__name__} ({pairs!r:.60})"))
        pairs = list(pairs)
        for pair in pairs:
            if not (isinstance(pair, (tuple, list)) and len(pair) == 2
                    and all(isinstance(part, str) for part in pair)):
                raise BioLinkError(Errors.E195.format(got=f"{pair!r:.60}"))
        empty = [(n, c) for n, c in pairs if not n.strip()]
        if empty:
            # An empty name would join the index as a row that matches nothing (or,
            # normalized, every empty mention): never what the caller meant.
            raise BioLinkError(Errors.E953.format(n=len(empty), pair=empty[0]))
        unknown = [(n, c) for n, c in pairs if self.dictionary.concept_index(c) is None]
        if unknown:
            raise BioLinkError(Errors.E107.format(n=len(unknown), name=unknown[0][0],
                                                  concept_id=unknown[0][1]))
        if not pairs:
            return 0
        dictionary, _ = self.dictionary.with_names(pairs, source="<add_names>")
        self.linker.index_names(dictionary)
        return len(pairs)

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
        return self._with_labels(self._all_spans(doc))

    def _all_spans(self, doc: Doc) -> List[Span]:
        key = self.cfg["spans_key"]
        if key is None:
            return list(doc.ents)
        return list(doc.spans[key]) if key in doc.spans else []

    def _with_labels(self, spans: List[Span]) -> List[Span]:
        labels = self.cfg["labels"]
        if labels:
            return [s for s in spans if s.label_ in labels]
        return spans

    def predict(self, docs: Iterable[Doc]) -> List[List[MentionLinks]]:
        """For each doc, the links of each span that spans_to_link returns."""
        docs = list(docs)
        for doc in docs:
            if not isinstance(doc, Doc):
                raise BioLinkError(Errors.E196.format(type=type(doc).__name__,
                                                      value=f"{doc!r:.60}"))
        per_doc = [[Mention.from_span(s) for s in self.spans_to_link(doc)] for doc in docs]
        if self.nothing_to_link is not None:
            self.nothing_to_link(docs, [len(mentions) for mentions in per_doc])
        flat = self.link([m for mentions in per_doc for m in mentions])
        out, i = [], 0
        for mentions in per_doc:
            out.append(flat[i:i + len(mentions)])
            i += len(mentions)
        return out

    def set_annotations(self, docs: Iterable[Doc], predictions: List[List[MentionLinks]]) -> None:
        """Write `predictions` (from `predict`, one list per doc) onto the spans: relabel them and
        set `span._.kb_ents`, and `span._.kb_parts` for split composite mentions."""
        key = self.cfg["spans_key"]
        for doc, doc_links in zip(docs, predictions):
            # doc.ents makes a Span per entity each time it is read: it is read once here,
            # and the spans written are the ones annotated (kb_ents is keyed by offsets).
            current = self._all_spans(doc)
            spans = self._with_labels(current)
            results = {(span.start, span.end, span.label): self.linker.annotations(links)
                       for span, links in zip(spans, doc_links)}
            if not results:
                continue
            if key is None:
                linked = [_relabel(e, results) for e in current]
                doc.set_ents(linked, default="unmodified")
            else:
                group = doc.spans[key]
                linked = [_relabel(s, results) for s in current]
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
        """Save the pipe (cfg, then the linker's parts: normalizer, encoder; dictionary,
        index and sieve once initialized; the stages' weights) to `path`.
        Saving over an existing directory is atomic: a kill leaves the old state or the new one."""
        serializers = {"cfg": lambda p: write_json(p, self.cfg, indent=2),
                       **self.linker.part_writers()}
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
        """Load a pipe saved by `to_disk` into this one and return it. No pickled code is run;
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
            cfg = json.loads(cfg_path.read_text(encoding="utf8"))
        except ValueError as err:
            raise BioLinkError(Errors.E104.format(path=path, reason=f"cfg is not JSON: {err}")) from None
        if not isinstance(cfg, dict):
            raise BioLinkError(Errors.E104.format(path=path, reason="cfg is not a JSON object"))
        self.linker.read_parts_from_disk(path, cfg, exclude=exclude)
        if "stages" not in exclude:
            self._untrained_stages.clear()
        return self

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        """Serialize the pipe to bytes, with the same parts `to_disk` writes."""
        serializers = {"cfg": lambda: json_text(self.cfg), **self.linker.part_bytes()}
        return util.to_bytes(serializers, exclude)

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> "BioLinker":
        """Load a pipe serialized by `to_bytes` into this one and return it.
        Malformed data raises BioLinkError rather than loading half a linker."""
        check_model(self.model, role="encoder", where=f"{self.name} encoder")
        if not isinstance(bytes_data, (bytes, bytearray, memoryview)):
            raise BioLinkError(Errors.E194.format(reason=f"a {type(bytes_data).__name__}, "
                                                         "not bytes"))
        try:
            msg = srsly.msgpack_loads(bytes_data)
        except Exception as err:  # noqa: BLE001 - msgpack has many (ExtraData, ...)
            raise BioLinkError(Errors.E194.format(reason=f"{type(err).__name__}: {err}")) from None
        if not isinstance(msg, dict) or any(part not in msg for part in
                                            ("cfg", "normalizer", "encoder")):
            raise BioLinkError(Errors.E104.format(path="<bytes>",
                                                  reason="no cfg, normalizer or encoder"))
        try:
            cfg = json.loads(msg["cfg"])
        except (ValueError, TypeError) as err:
            raise BioLinkError(Errors.E194.format(reason=f"cfg: {err}")) from None
        if not isinstance(cfg, dict):
            raise BioLinkError(Errors.E104.format(path="<bytes>", reason="cfg is not a JSON object"))
        try:
            self.linker.read_parts_from_bytes(msg, cfg, exclude=exclude)
        except BioLinkError:
            raise
        except (ValueError, TypeError, KeyError, IndexError, AttributeError, EOFError) as err:
            # a part cut short or from elsewhere; msgpack's errors are ValueErrors
            raise BioLinkError(Errors.E194.format(reason=f"{type(err).__name__}: {err}")) from None
        if "stages" not in exclude:
            self._untrained_stages.clear()
        return self


def _chmod_like_a_new_directory(path: Path) -> None:
    """A temp directory is private (0700); give it its parent's mode, which the pipeline
    directory got from the umask (reading the umask itself would race other threads)."""
    os.chmod(path, stat.S_IMODE(os.stat(path.parent).st_mode))


def _relabel(span: Span, results: Dict) -> Span:
    found = results.get((span.start, span.end, span.label))
    if found is None:
        return span
    return Span(span.doc, span.start, span.end, label=span.label, kb_id=found[0], span_id=span.id)

