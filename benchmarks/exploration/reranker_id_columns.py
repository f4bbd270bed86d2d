#!/usr/bin/env python
"""Can the learned reranker learn a corpus's id convention? Session 24 counted 34 of the 95
NCBI-disease dev errors of the cross-fitted ranker as a choice between an OMIM concept and a
MeSH one (MEDIC keeps many OMIM entries as concepts of their own beside the MeSH disease
they specialise), and the ranker's rows say nothing of a candidate's id or of how specific
the mention is. This trains `configs/rank.cfg` with the project's own trainer, the stage
class swapped in its module for one that appends these columns to every candidate row
(nothing in the product changes):

- id_namespace: the candidate's primary id's prefix as a code (MESH 0, OMIM 1, other 2);
- n_ids: how many ids the concept carries (a MeSH disease that absorbed OMIM entries
  has many);
- mention_digits: whether the mention holds a digit ("type 2", "CDG-Ia" does not);
- mention_tokens: the mention's number of words;
- doc_namespace_share: the share of the document's other mentions whose first candidate
  is in the candidate's namespace (a paper on one OMIM syndrome annotates its subtypes
  with OMIM ids throughout).

    python benchmarks/exploration/reranker_id_columns.py none -- train configs/rank.cfg \
        --output rank_base --paths.linker dict_linker --paths.train TRAIN --paths.dev DEV \
        --training.cross_fit_folds 5
    python benchmarks/exploration/reranker_id_columns.py id_namespace,n_ids,mention_digits,mention_tokens \
        -- train configs/rank.cfg --output rank_ids ...   (the same arguments)

Compare dev_acc@1 in each output's meta.json (dev only: choose nothing on test)."""

import numpy

from reranker_context_columns import train_with_columns

ALL = ("id_namespace", "n_ids", "mention_digits", "mention_tokens", "doc_namespace_share")
NAMESPACES = {"MESH": 0, "OMIM": 1}


def concept_id_columns(dictionary):
    """Per concept: its primary id's namespace code and its number of ids."""
    cached = getattr(dictionary, "_exploration_id_columns", None)
    if cached is None:
        n = dictionary.n_concepts
        namespace = numpy.empty(n)
        n_ids = numpy.empty(n)
        for c in range(n):
            ids = dictionary.ids_of(c)
            namespace[c] = NAMESPACES.get(ids[0].split(":", 1)[0].upper(), 2)
            n_ids[c] = len(ids)
        cached = dictionary._exploration_id_columns = (namespace, n_ids)
    return cached


def mention_columns(mentions, links, k):
    """Per candidate row (in _rows' order): whether its mention holds a digit, and the
    mention's number of words."""
    digits, tokens = [], []
    for mention, parts in zip(mentions, links):
        text = mention.text
        has_digit = float(any(ch.isdigit() for ch in text))
        n_words = float(len(text.split()))
        for _, candidates in parts:
            size = len(candidates[:k])
            digits.extend([has_digit] * size)
            tokens.extend([n_words] * size)
    return numpy.asarray(digits), numpy.asarray(tokens)


def namespace_share_column(mentions, links, k, namespace):
    """Per candidate row (in _rows' order): the share of the other mentions of its
    mention's document whose first candidate has the candidate's namespace."""
    firsts, doc_of = [], []
    for mention, parts in zip(mentions, links):
        top = next((c[0][0] for _, c in parts if c), None)
        firsts.append(None if top is None else int(namespace[top]))
        doc_of.append(id(mention.doc))
    per_doc = {}
    for d, ns in zip(doc_of, firsts):
        counts = per_doc.setdefault(d, [0, 0, 0, 0])
        if ns is not None:
            counts[ns] += 1
            counts[3] += 1
    out = []
    for mention, parts, d, own in zip(mentions, links, doc_of, firsts):
        counts = per_doc[d]
        for _, candidates in parts:
            for concept, _ in candidates[:k]:
                ns = int(namespace[concept])
                same = counts[ns] - (1 if own == ns else 0)
                others = counts[3] - (0 if own is None else 1)
                out.append(same / others if others else -1.0)
    return numpy.asarray(out)


def compute_ids(stage, linker, mentions, links, concept):
    """The id and mention columns by name."""
    namespace, n_ids = concept_id_columns(linker.dictionary)
    digits, tokens = mention_columns(mentions, links, stage.k)
    assert len(digits) == len(concept)
    return {"id_namespace": namespace[concept], "n_ids": n_ids[concept],
            "mention_digits": digits, "mention_tokens": tokens,
            "doc_namespace_share": namespace_share_column(mentions, links, stage.k, namespace)}


if __name__ == "__main__":
    train_with_columns(ALL, compute_ids)
