"""One function links a batch (LinkingPolicy.link): the pipe, `evaluate`, the `link`
runner, the Ray/Spark row runner, the training-pair builder and the reranker trainer all
go through it, so with every stage on they give the same answer for the same mention.

The pipeline here has abbreviations, composite splitting, a type filter, the annotation
prior, a verifier that rejects some top candidates (mode "next") and a mentions-level
stage set as the reranker, so a builder that skipped any of them would disagree.
"""
import json

import numpy
import pytest
import spacy

from spacy_biolink import Concept, ConceptDictionary
from spacy_biolink.evaluation import evaluate_gold_mentions
from spacy_biolink.linker.stages import Stage
from spacy_biolink.linker.stages.verifier import CandidateVerifier
from spacy_biolink.runners.distributed import link_rows
from spacy_biolink.runners.local import link_file
from spacy_biolink.training.pairs import link_corpus_mentions
from spacy_biolink.training.rerank import corpus_items

CONCEPTS = [
    Concept(["D003924"], ["Diabetes Mellitus, Type 2", "type 2 diabetes", "NIDDM"], "T047"),
    Concept(["D003922"], ["Diabetes Mellitus, Type 1", "type 1 diabetes"], "T047"),
    Concept(["D001943"], ["Breast Neoplasms", "breast cancer", "breast tumor"], "T191"),
    Concept(["D010051"], ["Ovarian Neoplasms", "ovarian cancer"], "T191"),
    Concept(["D006816"], ["Huntington Disease", "Huntington chorea"], "T047"),
    Concept(["D008274"], ["Magnesium", "magnesium"], "T196"),
    Concept(["D002118"], ["Calcium", "calcium"], "T196"),
    Concept(["C000001"], ["Diabetes drug", "type 2 diabetes drug"], "T121"),
]

# PMID | offsets | text | type | id; the Disease/Chemical labels drive the type filter.
DOCS = [
    ("1", "Huntington disease (HD) and type 2 diabetes. HD patients took magnesium.",
     [(0, 18, "Disease", "D006816"), (20, 22, "Disease", "D006816"),
      (28, 43, "Disease", "D003924"), (45, 47, "Disease", "D006816"),
      (62, 71, "Chemical", "D008274")]),
    ("2", "Breast cancer, type 1 diabetes and calcium in NIDDM.",
     [(0, 13, "Disease", "D001943"), (15, 30, "Disease", "D003922"),
      (35, 42, "Chemical", "D002118"), (46, 51, "Disease", "D003924")]),
]


class ShortestChemicalFirst(Stage):
    """A mentions-level stage standing in for a reranker (it reads each mention, here its
    label): for Chemical mentions, of the top two candidates the concept with the shorter
    canonical name goes first."""

    level = "mentions"
    k = 0

    def apply_to_mentions(self, linker, mentions, links):
        def reorder(candidates):
            top = sorted(candidates[:2], key=lambda c: len(linker.dictionary.names_of(c[0])[0]))
            return top + list(candidates[2:])

        return [[(text, reorder(c) if mention.label == "Chemical" else c) for text, c in parts]
                for mention, parts in zip(mentions, links)]


class RejectTypeOne:
    """The verifier's network: p(synonym) 0 for any name of type 1 diabetes, else 0.9."""

    def predict(self, pairs):
        return numpy.asarray([0.0 if "type 1" in name.lower() else 0.9 for _, name in pairs],
                             dtype=numpy.float32)


def pubtator(docs) -> str:
    lines = []
    for pmid, text, mentions in docs:
        lines.append(f"{pmid}|t|{text}")
        lines.append(f"{pmid}|a|")
        for start, end, label, cid in mentions:
            lines.append(f"{pmid}\t{start}\t{end}\t{text[start:end]}\t{label}\t{cid}")
        lines.append("")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def every_stage(tmp_path_factory):
    dictionary = ConceptDictionary.from_concepts(CONCEPTS)
    nlp = spacy.blank("en")
    nlp.add_pipe("bio_linker", config={
        "threshold": 0.0, "prior_weight": 0.01, "k": 4,
        "type_filter": {"Disease": ["T047", "T191"], "Chemical": ["T196"]}})
    linker = nlp.get_pipe("bio_linker")
    corpus = tmp_path_factory.mktemp("corpus") / "corpus.PubTator"
    corpus.write_text(pubtator(DOCS), encoding="utf8")
    linker.initialize(nlp=nlp, dictionary=dictionary, augment=[corpus])
    linker.verifier = CandidateVerifier(RejectTypeOne(), 0.5, "next")
    linker.reranker = ShortestChemicalFirst()
    return nlp, dictionary, corpus


def _pipe_answers(nlp):
    """Per gold mention, in corpus order: (kb_id_, [kb_ents ids]) from nlp.pipe."""
    docs = []
    for _, text, mentions in DOCS:
        doc = nlp.make_doc(text)
        doc.ents = [doc.char_span(s, e, label=label) for s, e, label, _ in mentions]
        docs.append(doc)
    return [(ent.kb_id_, [c for c, _ in ent._.kb_ents]) for doc in nlp.pipe(docs) for ent in doc.ents]


def test_every_stage_changes_what_the_pipe_answers(every_stage):
    nlp, _, _ = every_stage
    answers = _pipe_answers(nlp)
    # The abbreviation (HD) is linked as its long form; the verifier drops type 1
    # diabetes from type 2's list and sends "type 1 diabetes" to its next candidate; the
    # type filter keeps chemicals among chemicals; the stage puts calcium first.
    assert answers == [
        ("D006816", ["D006816", "D001943", "D003924", "D003922"]),
        ("D006816", ["D006816", "D001943", "D003924", "D003922"]),
        ("D003924", ["D003924", "D006816"]),
        ("D006816", ["D006816", "D001943", "D003924", "D003922"]),
        ("D002118", ["D002118", "D008274"]),
        ("D001943", ["D001943", "D010051", "D006816"]),
        ("D003924", ["D003924", "D006816"]),
        ("D002118", ["D002118", "D008274"]),
        ("D003924", ["D003924"])]


def test_evaluate_scores_what_the_pipe_answers(every_stage):
    nlp, _, corpus = every_stage
    answers = _pipe_answers(nlp)
    golds = [cid for _, _, mentions in DOCS for *_, cid in mentions]
    for k in (1, 2):
        hits = sum(gold in ids[:k] for (_, ids), gold in zip(answers, golds))
        result = evaluate_gold_mentions(nlp, corpus, ks=[k])
        assert result[f"acc@{k}"] == pytest.approx(hits / len(golds))
    # Wrong at 1: type 1 diabetes (the verifier rejects it) and magnesium (the stage).
    assert evaluate_gold_mentions(nlp, corpus, ks=[1])["acc@1"] == pytest.approx(7 / 9)


def test_link_and_the_row_runner_write_what_the_pipe_answers(every_stage, tmp_path):
    nlp, _, _ = every_stage
    answers = _pipe_answers(nlp)
    rows = [{"id": pmid, "text": text, "entities": [[s, e, label] for s, e, label, _ in mentions]}
            for pmid, text, mentions in DOCS]
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf8")
    link_file(nlp, path, tmp_path / "linked.jsonl", progress=False)
    written = [json.loads(line) for line in (tmp_path / "linked.jsonl").read_text().splitlines()]
    from_rows = link_rows(nlp, rows)
    for records in (written, from_rows):
        got = [(e["kb_id"], [c for c, _ in e["kb_ents"]]) for r in records for e in r["entities"]]
        assert got == answers


def test_training_builders_get_the_linkers_candidates(every_stage):
    nlp, dictionary, corpus = every_stage
    answers = _pipe_answers(nlp)
    linker = nlp.get_pipe("bio_linker")
    # The pair builder links every single-part mention through every stage.
    linked = link_corpus_mentions(nlp, dictionary, corpus, k=4)
    assert [[dictionary.primary_id(c) for c, _ in cands][:5] for cands in linked.candidates] == \
        [ids for _, ids in answers]
    # The reranker trainer gets the candidates the reranker is given: every stage before it.
    items = corpus_items(nlp, linker, corpus, k=4)
    reranker = linker.reranker
    linker.reranker = None
    try:
        before = _pipe_answers(nlp)
    finally:
        linker.reranker = reranker
    assert [[dictionary.primary_id(c) for c, _ in item.candidates] for item, _ in items] == \
        [ids for _, ids in before]
    assert before != answers  # the stage did reorder something
