"""Superseded stage builders (`LearnedReranker.v1`/`v2`), kept so that pipelines saved with
rankers trained for them load and rank as they did."""
from typing import Optional

from spacy.util import registry


@registry.misc("spacy-biolink.LearnedReranker.v1")
def build_learned_reranker(k: int = 20, temperature: float = 1.0,
                           nil_threshold: Optional[float] = None):
    """Registered `spacy-biolink.LearnedReranker.v1`: LightGBM lambdarank over features of
    each mention's first k candidates (linker/stages/learned_reranker.py) as a stage;
    scores become probabilities at `temperature`, and a mention whose top probability is
    under `nil_threshold` (null: never) is NIL. Its trained model travels with the
    pipeline (LightGBM's text format)."""
    from ..linker.stages.learned_reranker import LearnedReranker

    return LearnedReranker(k=k, temperature=temperature, nil_threshold=nil_threshold)


@registry.misc("spacy-biolink.LearnedReranker.v2")
def build_learned_reranker_v2(k: int = 20, temperature: float = 1.0,
                              nil_precision: Optional[float] = None):
    """Registered `spacy-biolink.LearnedReranker.v2`: v1's ranker, its scores rescaled so
    that the top candidate's is the probability that it is right, calibrated on dev
    (`span._.kb_ents[0][1]`; the others keep their ratio to it, so they are not
    probabilities and a list can sum past 1); with `nil_precision` (e.g. 0.95; null: never NIL), a
    mention is NIL where that probability is under the threshold at which the dev
    mentions answered were right that often (read from the dev curve saved with the
    model). Needs a model trained by `train configs/rank.cfg` of this version."""
    from ..linker.stages.learned_reranker import LearnedReranker

    return LearnedReranker(k=k, temperature=temperature, calibrated=True,
                           nil_precision=nil_precision)
