"""The reranker stage of bio_linker: a cross-encoder reads each mention in its sentence
beside each of its retriever's top-k concepts and orders them again.

Policy, not plumbing: the component (and the gold-mention evaluation, and the trainer's
dev score) hand it (query text, context, retrieved candidates) items for a whole batch;
it scores every (context, candidate) pair not in its cache in one model call and returns
the candidates re-ranked, each scored by a calibrated probability:

    p(candidate) = softmax over the k candidates of (logit + w * retriever score) / T

with w learned with the model and T fitted on dev (trainer), so that bio_linker's
`threshold` on p gives NIL where the reranker is unsure.

The query side is "MENTION ; left context * MENTION * right context" (the mention's
sentence, cut to `context_chars` each side) or the mention alone with use_context off;
the candidate side is the concept's canonical name and, when it differs, the concept's
name closest to the mention.
"""
import re
from collections import OrderedDict
from pathlib import Path
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy
import srsly

from ...kb.dictionary import ConceptDictionary
from ...errors import BioLinkError, Errors
from ...io.util import PathLike
from . import Stage

Candidates = List[Tuple[int, float]]
RERANKER_CFG = "reranker.cfg"
RERANKER_JSON = "reranker.json"
MODEL_FILE = "model"
META_FILE = "meta.json"
MARK = "*"
# Where a sentence ends: . ! ? followed by white space (abstracts have no newlines).
_SENTENCE_END = re.compile(r"[.!?]\s+")


class RerankItem(NamedTuple):
    """One query to rerank: the text linked (a mention or a composite's part), the doc
    text and the mention's offsets in it (for the context), the retrieved candidates."""

    query: str
    doc_text: str
    start: int
    end: int
    candidates: Candidates


def mention_context(query: str, doc_text: str, start: int, end: int, *,
                    use_context: bool = True, context_chars: int = 150) -> str:
    """The query side of a pair: the query text, then (use_context) its sentence with the
    mention between MARKs, at most `context_chars` characters each side."""
    query = " ".join(query.split())
    if not use_context or not doc_text:
        return query
    left_start = 0
    for match in _SENTENCE_END.finditer(doc_text, 0, start):
        left_start = match.end()
    found = _SENTENCE_END.search(doc_text, end)
    right_end = found.start() + 1 if found else len(doc_text)
    left = doc_text[max(left_start, start - context_chars):start]
    right = doc_text[end:min(right_end, end + context_chars)]
    mention = doc_text[start:end]
    return " ".join(f"{query} ; {left} {MARK} {mention} {MARK} {right}".split())


def candidate_text(dictionary: ConceptDictionary, concept: int, closest: str) -> str:
    """The candidate side of a pair: canonical name, then the closest name if another."""
    names = dictionary.names_of(concept)
    canonical = names[0] if names else ""
    return canonical if closest in ("", canonical) else f"{canonical} ; {closest}"


def softmax_rows(logits: numpy.ndarray, temperature: float = 1.0) -> numpy.ndarray:
    """Softmax of each row of `logits` / temperature (a 1-d array is one row)."""
    z = numpy.asarray(logits, dtype=numpy.float64) / max(float(temperature), 1e-6)
    z = z - z.max(axis=-1, keepdims=True)
    e = numpy.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def fit_temperature(logit_rows: Sequence[numpy.ndarray], positives: Sequence[numpy.ndarray],
                    grid: Optional[Sequence[float]] = None) -> float:
    """The temperature T minimizing the negative log of the summed softmax mass of the
    positive candidates (the training loss) over `logit_rows`, searched on a log grid;
    rows without a positive are left out. 1.0 when there is nothing to fit on."""
    rows = [(numpy.asarray(lg), numpy.asarray(pos, bool)) for lg, pos in zip(logit_rows, positives)
            if len(lg) and numpy.asarray(pos, bool).any()]
    if not rows:
        return 1.0
    grid = list(grid) if grid is not None else list(numpy.exp(numpy.linspace(-3, 3, 121)))

    def nll(t: float) -> float:
        return -sum(numpy.log(max(softmax_rows(lg, t)[pos].sum(), 1e-12)) for lg, pos in rows)

    return float(min(grid, key=nll))


class Reranker(Stage):
    """The cross-encoder Model (List[(query, candidate)] -> logits), how many candidates
    it reranks, its temperature, and a cache of pair logits: a "mentions" stage (it
    reads each mention in its document)."""

    level = "mentions"

    def __init__(self, model, *, k: int = 10, temperature: float = 1.0,
                 context_chars: int = 150, cache_size: int = 100000,
                 model_config: Optional[Dict] = None):
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise BioLinkError(Errors.E530.format(setting="k", value=k, what="an integer >= 1"))
        if not temperature > 0:
            raise BioLinkError(Errors.E530.format(setting="temperature", value=temperature,
                                                  what="a number > 0"))
        self.model = model
        self.k = k
        self.temperature = float(temperature)
        self.context_chars = int(context_chars)
        self.cache_size = int(cache_size)
        self.model_config = dict(model_config or {})
        self._cache: "OrderedDict[Tuple[str, str], float]" = OrderedDict()
        self._best_name_of: Optional[Callable[[int, str], str]] = None
        self._best_name_source = None
        # Pairs scored by the model (not found in the cache), for speed measurements.
        self.n_scored = 0

    @property
    def use_context(self) -> bool:
        """Whether the query side holds the mention's sentence (a model setting)."""
        return bool(self.model.attrs["use_context"])

    @property
    def retriever_weight(self) -> float:
        """The learned weight of the retriever's score in each candidate's logit."""
        from ...encoders.cross_encoder import retriever_weight

        return retriever_weight(self.model)

    # Scoring ---------------------------------------------------------------

    def pairs(self, dictionary: ConceptDictionary, items: Sequence[RerankItem],
              normalize: Callable[[str], str] = str.lower) -> List[List[Tuple[str, str]]]:
        """The (query side, candidate side) texts of each item's first k candidates."""
        from .verifier import best_name_finder

        if self._best_name_of is None or self._best_name_source is not dictionary:
            self._best_name_of = best_name_finder(dictionary, normalize)
            self._best_name_source = dictionary
        out = []
        for item in items:
            left = mention_context(item.query, item.doc_text, item.start, item.end,
                                   use_context=self.use_context,
                                   context_chars=self.context_chars)
            out.append([(left, candidate_text(dictionary, c, self._best_name_of(c, item.query)))
                        for c, _ in item.candidates[:self.k]])
        return out

    def logits(self, pair_rows: Sequence[Sequence[Tuple[str, str]]],
               retriever_scores: Sequence[Sequence[float]]) -> List[numpy.ndarray]:
        """Each row's logits (model logit + retriever_weight * retriever score): every
        distinct pair not in the cache is scored in one model call."""
        from ...encoders.cross_encoder import pair_logits

        cache = self._cache
        todo = list(dict.fromkeys(p for row in pair_rows for p in row if p not in cache))
        fresh = dict(zip(todo, pair_logits(self.model, todo).tolist())) if todo else {}
        self.n_scored += len(todo)
        weight = self.retriever_weight
        out = []
        for row, scores in zip(pair_rows, retriever_scores):
            values = []
            for pair in row:
                if pair in fresh:
                    value = fresh[pair]
                else:
                    value = cache[pair]
                    cache.move_to_end(pair)
                values.append(value)
            out.append(numpy.asarray(values, dtype=numpy.float32)
                       + weight * numpy.asarray(scores[:len(row)], dtype=numpy.float32))
        if self.cache_size:
            cache.update(fresh)
            while len(cache) > self.cache_size:
                cache.popitem(last=False)
        return out

    def rerank(self, dictionary: ConceptDictionary, items: Sequence[RerankItem],
               normalize: Callable[[str], str] = str.lower) -> List[Candidates]:
        """Each item's first k candidates, best first by calibrated probability (the
        score they carry from now on); candidates past k are dropped."""
        rows = self.pairs(dictionary, items, normalize)
        logits = self.logits(rows, [[s for _, s in item.candidates] for item in items])
        out = []
        for item, row in zip(items, logits):
            if not len(row):
                out.append([])
                continue
            probs = softmax_rows(row, self.temperature)
            order = numpy.argsort(-probs, kind="stable")
            out.append([(item.candidates[i][0], float(probs[i])) for i in order.tolist()])
        return out

    # As a stage of the linker (stages/__init__.py) -------------------------

    def apply_to_mentions(self, linker, mentions: Sequence, links: Sequence) -> List:
        """Every part's candidates reranked in its mention's context, in one model call."""
        return rerank_mention_links(linker, self, mentions, links)

    def clear_cache(self) -> None:
        """Forget the pair logits scored so far."""
        self._cache.clear()

    def state_to_bytes(self) -> bytes:
        """The model's weights; k, temperature and the context width are the stage's config."""
        return self.model.to_bytes()

    def state_from_bytes(self, data: bytes) -> None:
        """Read weights written by `state_to_bytes`; the stage's config keeps its model
        settings (batch_size, use_context, max_length)."""
        from ...encoders.settings import keeping_config_settings

        try:
            with keeping_config_settings(self.model, where="reranker stage"):
                self.model.from_bytes(data)
        except (ValueError, KeyError, OSError) as err:
            raise BioLinkError(Errors.E531.format(path="<stage state>", reason=f"model: {err}")) from None

    def load_trained(self, path: PathLike) -> None:
        """Read the weights of a reranker directory written by `train configs/reranker.cfg`."""
        self.state_from_bytes((Path(path) / MODEL_FILE).read_bytes())

    # Serialization (a reranker directory, and pipelines saved before stages were config)

    def _settings(self) -> Dict:
        # cache_size is the runtime's choice, not the model's (a trainer scores without one)
        return {"k": self.k, "temperature": self.temperature,
                "context_chars": self.context_chars}

    def to_disk(self, path: PathLike, meta: Optional[Dict] = None) -> None:
        """Write model (weights as safetensors, tokenizer as msgpack), reranker.json (k,
        temperature), meta.json and reranker.cfg ([model] block) into `path`, each file
        renamed into place when complete, reranker.cfg last: a directory with one holds
        a complete reranker (a trainer's logs and checkpoints beside it stay)."""
        from thinc.api import Config

        from ...io.files import atomic_file, json_text

        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        with atomic_file(path / MODEL_FILE, "wb") as fileh:
            fileh.write(self.model.to_bytes())
        with atomic_file(path / RERANKER_JSON) as fileh:
            fileh.write(json_text(self._settings(), indent=2))
        if meta is not None:
            with atomic_file(path / META_FILE) as fileh:
                fileh.write(json_text(meta, indent=2))
        with atomic_file(path / RERANKER_CFG) as fileh:
            fileh.write(Config({"model": self.model_config}).to_str())

    @classmethod
    def from_disk(cls, path: PathLike, **settings) -> "Reranker":
        """A reranker directory written by `to_disk` (or `train configs/reranker.cfg`);
        `settings` (k, temperature, ...) replace the saved ones. Nothing is unpickled:
        reranker.cfg may name only spacy-biolink's reranker architecture."""
        model_config, saved = trained_settings(path)
        return cls._build(model_config, (Path(path) / MODEL_FILE).read_bytes(),
                          {**saved, **{k: v for k, v in settings.items() if v is not None}},
                          where=str(path))

    def to_bytes(self) -> bytes:
        """The model block, weights and settings as msgpack bytes."""
        return srsly.msgpack_dumps({"model_config": self.model_config,
                                    "model": self.model.to_bytes(),
                                    "settings": self._settings()})

    @classmethod
    def from_bytes(cls, data: bytes) -> "Reranker":
        """A reranker serialized by `to_bytes`."""
        msg = srsly.msgpack_loads(data)
        if not isinstance(msg, dict) or not {"model_config", "model", "settings"} <= set(msg):
            raise BioLinkError(Errors.E531.format(path="<bytes>",
                                                  reason="no model_config, model or settings"))
        return cls._build(msg["model_config"], msg["model"], msg["settings"], where="<bytes>")

    @classmethod
    def _build(cls, model_config: Dict, model_bytes: bytes, settings: Dict, *, where: str
               ) -> "Reranker":
        from spacy.util import registry

        from ...encoders.checks import check_model
        from ...io.safe_models import check_model_config

        check_model_config(model_config, role="reranker", where=f"{where} [model]")
        model = registry.resolve({"model": model_config})["model"]
        check_model(model, role="reranker", where=where)
        try:
            model.from_bytes(model_bytes)
        except (ValueError, KeyError, OSError) as err:
            raise BioLinkError(Errors.E531.format(path=where, reason=f"model: {err}")) from None
        known = {k: settings[k] for k in ("k", "temperature", "context_chars", "cache_size")
                 if k in settings}
        return cls(model, model_config=model_config, **known)


def trained_settings(path: PathLike) -> Tuple[Dict, Dict]:
    """The [model] block of a reranker directory (`train configs/reranker.cfg`, or a
    pipeline's saved `reranker` part) and its settings (k, temperature, context_chars)."""
    from ...io.files import read_config, read_json

    path = Path(path)
    for name in (RERANKER_CFG, MODEL_FILE, RERANKER_JSON):
        if not (path / name).is_file():
            raise BioLinkError(Errors.E531.format(path=path, reason=f"no {name}"))
    config = read_config(path / RERANKER_CFG, interpolate=False)
    if "model" not in config:
        raise BioLinkError(Errors.E531.format(path=path, reason=f"{RERANKER_CFG} has no [model]"))
    saved = read_json(path / RERANKER_JSON, "Reranker settings", type=dict)
    return dict(config["model"]), {k: saved[k] for k in ("k", "temperature", "context_chars")
                                   if k in saved}


def rerank_links(linker, reranker: Reranker, items: Sequence[RerankItem]) -> List[Candidates]:
    """`reranker` over `items` with `linker`'s dictionary and mention folding."""
    if not items:
        return []
    return reranker.rerank(linker.dictionary, items, linker.normalizer.mention)


def rerank_mention_links(linker, reranker: Reranker, mentions: Sequence, links: Sequence
                         ) -> List:
    """bio_linker's links ([(text, candidates), ...] per mention, one entry per composite
    part) with every part's candidates reranked in its mention's context, all in one
    call."""
    items = [RerankItem(text, mention.doc.text if mention.doc is not None else "",
                        mention.start_char, mention.end_char, cands)
             for mention, parts in zip(mentions, links) for text, cands in parts]
    reranked = iter(rerank_links(linker, reranker, items))
    return [[(text, next(reranked)) for text, _ in parts] for parts in links]
