#!/usr/bin/env python
"""Does the rest of the document help the learned reranker? Issue 33's fourth pass found the
gold among the top 5 for 0.96 of the mentions and guessed that the candidates' scores and
names lack the mention's context. This trains `configs/rank.cfg` with the project's own
trainer, the stage class swapped in its module for one that appends document columns to
every candidate row (nothing in the product changes):

- ctx_cover: the best share of a name's words found in the document;
- ctx_extra: the most words of a name outside the query key found in the document (a
  specific concept whose qualifiers the abstract spells out elsewhere);
- ctx_missing: the fewest words of a name neither in the key nor in the document;
- ctx_named: whether the folded document holds one of the concept's names.

    python benchmarks/exploration/reranker_context_columns.py none -- train configs/rank.cfg \
        --output rank_base --paths.linker dict_linker --paths.train TRAIN --paths.dev DEV \
        --training.cross_fit_folds 5
    python benchmarks/exploration/reranker_context_columns.py ctx_cover,ctx_extra,ctx_missing,ctx_named \
        -- train configs/rank.cfg --output rank_ctx ...   (the same arguments)

Compare dev_acc@1 in each output's meta.json (dev only: choose nothing on test)."""
import sys

import numpy

import spacy_biolink.linker.stages.learned_reranker as lr

ALL = ("ctx_cover", "ctx_extra", "ctx_missing", "ctx_named")


def context_columns(view, linker, mentions, links, k, concept_rows):
    """Per candidate row (in _rows' order): best share of a name's words in the document;
    most name words outside the query key found in the document; fewest name words
    neither in the key nor in the document; and whether the document holds a name of the
    concept anywhere (the mention included)."""
    docs, keys, doc_of_group, key_of_group, concept = {}, {}, [], [], []
    doc_texts = []
    for mention, parts in zip(mentions, links):
        d = id(mention.doc)
        if d not in docs:
            docs[d] = len(docs)
            doc_texts.append(mention.doc.text if mention.doc is not None else "")
        for text, candidates in parts:
            candidates = candidates[:k]
            if not candidates:
                continue
            key = linker.query_key(text)
            keys.setdefault(key, len(keys))
            doc_of_group.append(docs[d])
            key_of_group.append(keys[key])
            concept.extend(c for c, _ in candidates)
    concept = numpy.asarray(concept, numpy.int64)
    sizes = [len(p[:k]) for parts in links for _, p in parts if p[:k]]
    group = numpy.repeat(numpy.arange(len(sizes)), sizes)
    assert len(group) == len(concept) and (concept == concept_rows).all()
    V = len(view.tokens) + 1
    doc_codes = []
    folded_docs = []
    for i, t in enumerate(doc_texts):
        f = view.fold(t)
        folded_docs.append(" " + f + " ")
        ids = {view.tokens[w] for w in f.split() if w in view.tokens}
        doc_codes.extend(i * V + x for x in ids)
    doc_codes = numpy.unique(numpy.asarray(doc_codes, numpy.int64))
    key_codes = []
    for key, i in keys.items():
        key_codes.extend(i * V + view.tokens[w] for w in set(key.split()) if w in view.tokens)
    key_codes = numpy.unique(numpy.asarray(key_codes, numpy.int64))
    doc_of_row = numpy.asarray(doc_of_group, numpy.int64)[group]
    key_of_row = numpy.asarray(key_of_group, numpy.int64)[group]
    count = view.concept_count[concept]
    start = view.concept_start[concept]
    first = numpy.cumsum(count) - count
    name_row = numpy.repeat(numpy.arange(len(concept)), count)
    name = numpy.repeat(start - first, count) + numpy.arange(int(count.sum()))
    tok_count = view.token_ptr[name + 1] - view.token_ptr[name]
    tok_first = numpy.cumsum(tok_count) - tok_count
    tok_name = numpy.repeat(numpy.arange(len(name)), tok_count)
    tok = view.name_tokens[numpy.repeat(view.token_ptr[name] - tok_first, tok_count)
                           + numpy.arange(int(tok_count.sum()))]
    row_of_tok = name_row[tok_name]

    def member(codes, table):
        if not len(table):
            return numpy.zeros(len(codes), bool)
        at = numpy.minimum(numpy.searchsorted(table, codes), len(table) - 1)
        return table[at] == codes

    in_doc = member(doc_of_row[row_of_tok] * V + tok, doc_codes)
    in_key = member(key_of_row[row_of_tok] * V + tok, key_codes)
    n = len(name)
    n_doc = numpy.bincount(tok_name, weights=in_doc, minlength=n)
    n_extra = numpy.bincount(tok_name, weights=in_doc & ~in_key, minlength=n)
    n_missing = numpy.bincount(tok_name, weights=~in_doc & ~in_key, minlength=n)
    cover = numpy.where(tok_count > 0, n_doc / numpy.maximum(tok_count, 1), 0.0)
    out = numpy.zeros((len(concept), 4))
    out[:, 2] = 99.0
    numpy.maximum.at(out[:, 0], name_row, cover)
    numpy.maximum.at(out[:, 1], name_row, n_extra)
    numpy.minimum.at(out[:, 2], name_row, n_missing)
    # A name of the concept (folded, 3+ characters) occurring in the folded document.
    folds_inv = {v: f for f, v in view.folds.items()}
    for r in range(len(concept)):
        d = doc_of_row[r]
        text = folded_docs[d]
        hits = 0
        # Python per row: an exploration, not the product's batch computation.
        for nm in range(first[r], first[r] + count[r]):
            f = folds_inv[int(view.name_fold[name[nm]])]
            if len(f) > 2 and (" " + f + " ") in text:
                hits = 1
                break
        out[r, 3] = hits
    return out


def stage_with_columns(columns, compute):
    """The learned reranker stage with `columns` appended to its feature rows;
    compute(stage, linker, mentions, links, concept) gives each column's values, one per
    row (a dict by column name)."""
    class ColumnsReranker(lr.LearnedReranker):
        def __init__(self, **kw):
            super().__init__(**kw)
            self.feature_names = tuple(self.feature_names) + tuple(columns)

        def _rows(self, linker, mentions, links):
            out, concept, size = super()._rows(linker, mentions, links)
            if columns and len(concept):
                values = compute(self, linker, mentions, links, concept)
                base = len(self.feature_names) - len(columns)
                for j, c in enumerate(columns):
                    out[:, base + j] = values[c]
            return out, concept, size
    return ColumnsReranker


def train_with_columns(known, compute):
    """`SCRIPT COLUMNS|none -- train ...`: the project's CLI, with the stage class swapped
    for one appending the comma-separated COLUMNS (each one of `known`)."""
    cols = [] if sys.argv[1] == "none" else sys.argv[1].split(",")
    unknown = [c for c in cols if c not in known]
    if unknown:
        sys.exit(f"unknown columns {unknown}: choose from {', '.join(known)}")
    lr.LearnedReranker = stage_with_columns(cols, compute)
    from spacy_biolink.__main__ import main  # noqa
    sys.argv = ["spacy_biolink"] + sys.argv[3:]
    main()


def compute_context(stage, linker, mentions, links, concept):
    """The document columns by name (context_columns)."""
    ctx = context_columns(stage.view(linker), linker, mentions, links, stage.k, concept)
    return {name: ctx[:, i] for i, name in enumerate(ALL)}


if __name__ == "__main__":
    train_with_columns(ALL, compute_context)
