"""The linking stages' registered builders: a block under [components.NAME.stages.STAGE]
each. The steps every linker has (abbreviations, composites, sieve, prior, type filter,
NIL rule) stand for flat settings of bio_linker (linker/settings.py); their defaults are
those settings' defaults."""
from typing import Dict, List, Optional

from spacy.util import registry

from ..settings import chosen


@registry.misc("spacy-biolink.Abbreviations.v1")
def build_abbreviations_step(enabled: bool = chosen("resolve_abbreviations")):
    """Registered `spacy-biolink.Abbreviations.v1`: a mention that is a short form its
    document defines is linked as its long form (linker/stages/abbreviations.py)."""
    from .abbreviations import Abbreviations

    return Abbreviations(enabled)


@registry.misc("spacy-biolink.CompositeSplitter.v1")
def build_composite_splitter(enabled: bool = chosen("split_composites"),
                             margin: float = chosen("split_margin")):
    """Registered `spacy-biolink.CompositeSplitter.v1`: coordinated mentions ("breast and
    ovarian cancer") are searched as their parts too, and split where each part beats the
    whole by more than `margin` and they name different concepts."""
    from .composites import CompositeSplitter

    return CompositeSplitter(enabled, margin)


# The flat sieve_threshold defaults to null (no sieve); a sieve block is written to have
# one, so its threshold defaults to Triplet-Search's.
@registry.misc("spacy-biolink.CorpusSieve.v1")
def build_corpus_sieve(threshold: float = 0.95):
    """Registered `spacy-biolink.CorpusSieve.v1`: a mention whose best corpus name scores
    at least `threshold` is answered from the corpus names alone (Triplet-Search's sieve)."""
    from .sieve import CorpusSieve

    return CorpusSieve(threshold)


@registry.misc("spacy-biolink.AnnotationPrior.v1")
def build_annotation_prior(weight: float = chosen("prior_weight"),
                           mode: str = chosen("prior_mode")):
    """Registered `spacy-biolink.AnnotationPrior.v1`: near ties go to the concept the
    corpora annotated most (`weight * ln(1 + n)`); mode "order" only orders the k best,
    "add" adds the boost to the score."""
    from .prior import AnnotationPrior

    return AnnotationPrior(weight, mode)


@registry.misc("spacy-biolink.TypeFilter.v1")
def build_type_filter(types: Dict[str, List[str]]):
    """Registered `spacy-biolink.TypeFilter.v1`: span label -> allowed types (the
    dictionary's own, or UMLS semantic groups such as "DISO"); labels not listed are not
    filtered."""
    from .type_filter import TypeFilter

    return TypeFilter(types)


@registry.misc("spacy-biolink.ScoreThreshold.v1")
def build_score_threshold(threshold: float = chosen("threshold"),
                          max_entities_per_mention: int = chosen("max_entities_per_mention")):
    """Registered `spacy-biolink.ScoreThreshold.v1`: the NIL rule by score; candidates at or
    above `threshold` go to kb_ents (at most `max_entities_per_mention`), a mention with
    none is NIL."""
    from .score_threshold import ScoreThreshold

    return ScoreThreshold(threshold, max_entities_per_mention)


@registry.misc("spacy-biolink.SiameseVerifierStage.v1")
def build_siamese_verifier_stage(model, mode: str = "nil", threshold: float = 0.5,
                                 max_tries: int = 3, rule: str = "verifier",
                                 score_threshold: Optional[float] = None,
                                 weights: Optional[List[float]] = None):
    """Registered `spacy-biolink.SiameseVerifierStage.v1`: seed 004's verifier as a stage
    that checks each query's candidates; `model` is its `SiameseVerifier` architecture
    block (the weights travel with the pipeline), the rest its NIL rule: mode "nil" (a
    rejected top candidate makes the mention NIL) or "next" (try the next, up to
    max_tries); rule "verifier" (p < threshold), "either" (or score < score_threshold)
    or "combined" (weights [w_p, w_s, bias])."""
    from ...encoders.checks import check_model
    from .verifier import CandidateVerifier

    check_model(model, role="verifier", where="bio_linker verifier stage")
    return CandidateVerifier(model, threshold, mode, max_tries, rule=rule,
                             score_threshold=score_threshold, weights=weights)


@registry.misc("spacy-biolink.CrossEncoderRerankerStage.v1")
def build_cross_encoder_reranker_stage(model, k: int = 10, temperature: float = 1.0,
                                       context_chars: int = 150, cache_size: int = 100000):
    """Registered `spacy-biolink.CrossEncoderRerankerStage.v1`: the cross-encoder as a stage
    that reorders each mention's k best candidates read in its sentence (`context_chars`
    each side); scores become probabilities at `temperature`. `model` is its
    `CrossEncoderReranker` architecture block (the weights travel with the pipeline)."""
    from ...encoders.checks import check_model
    from .reranker import Reranker

    check_model(model, role="reranker", where="bio_linker reranker stage")
    return Reranker(model, k=k, temperature=temperature, context_chars=context_chars,
                    cache_size=cache_size)


@registry.misc("spacy-biolink.LearnedReranker.v3")
def build_learned_reranker_v3(k: int = 20, temperature: float = 1.0,
                              nil_precision: Optional[float] = None,
                              retriever_features: bool = True):
    """Registered `spacy-biolink.LearnedReranker.v3`: LightGBM lambdarank over features of
    each mention's first k candidates (learned_reranker.py) as a stage; the top
    candidate's score is the probability that it is right, calibrated on dev (the others
    keep their ratio to it), and with `nil_precision` (e.g. 0.95; null: never NIL) a
    mention is NIL where that probability is under the threshold at which the dev
    mentions answered were right that often. retriever_features: the ranker reads
    FEATURES_V3, which add each retriever's own score, rank among the k and gap to its
    best (dense and TF-IDF apart where the first stage is a hybrid) and how often the
    corpus annotations gave the mention's exact text the candidate; false, FEATURES.
    It must match the trained model's (`spacy-biolink.LearnedRerankerTrainer.v2`, the same
    setting); init-linker --reranker writes it."""
    from .learned_reranker import LearnedReranker

    return LearnedReranker(k=k, temperature=temperature, calibrated=True,
                           nil_precision=nil_precision, retriever_features=retriever_features)


@registry.misc("spacy-biolink.GeneContext.v1")
def build_gene_context(margin: float = 1e-6, species: bool = True, name_sources: bool = True,
                       short_forms: bool = True, animals: bool = True):
    """Registered `spacy-biolink.GeneContext.v1`: a gene linker's tied candidates (scores
    within `margin` of the best) ordered by the document's species (human or not, from
    its words; with `animals`, among genes that are not human, the animal the document
    names most, each gene's animal learned from the augmenting corpora), then dictionary
    names before corpus-only ones, then corpus counts; with short_forms, a mention whose
    abbreviation was resolved is also searched as written (linker/stages/gene_context.py).
    Nothing to train."""
    from .gene_context import GeneContext

    return GeneContext(margin=margin, species=species, name_sources=name_sources,
                       short_forms=short_forms, animals=animals)


@registry.misc("spacy-biolink.VariantNormalizer.v1")
def build_variant_normalizer(labels: List[str] = ["Variant"], fallback: bool = True,
                             prefer_exact: bool = False, rules: Optional[str] = None):
    """Registered `spacy-biolink.VariantNormalizer.v1`: mentions of `labels` get the
    tmVar-style id (`p|SUB|V|600|E`, `rs2297882`) of the first rule of the rule table
    that matches their text (data/variant_rules.tsv, or the table file `rules`; saved
    with the pipeline); one no rule matches keeps the retriever's candidates (fallback)
    or none. prefer_exact: a mention whose text is a dictionary name keeps the
    dictionary's answer (a corpus annotated "M404V" as rs771966860) before the rules
    (linker/stages/variants.py)."""
    from .variants import VariantNormalizer

    return VariantNormalizer(labels, fallback=fallback, prefer_exact=prefer_exact,
                             rules=rules)


@registry.misc("spacy-biolink.ScoreCalibration.v1")
def build_score_calibration(method: str = "platt"):
    """Registered `spacy-biolink.ScoreCalibration.v1`: the last stage before the NIL rule;
    each candidate's score becomes the probability that it is right (Platt scaling of its
    score and its margin over the best other candidate, one set of weights for a list's
    first and one for the rest, fitted on dev gold mentions by training/calibrate.py or
    the `calibrate` command and saved with the pipeline), so `threshold` is a
    probability."""
    from .calibration import ScoreCalibration

    return ScoreCalibration(method)
