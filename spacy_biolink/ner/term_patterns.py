"""Training terms a statistical NER misses, as spaCy span_ruler patterns.

A gold mention string of the training corpora becomes a pattern when, wherever its
lowercased tokens occur in the training texts, they are mostly annotated as that mention
with its most frequent label (`min_precision`), often enough (`min_count`). The patterns
feed spaCy's `span_ruler` placed after the NER (add_term_ruler; as `bio_term_ruler`, whose
patterns are tokenized alone): it adds the terms the NER missed and saves its patterns with
the pipeline. Build them from training corpora
only: patterns from the test corpus would score their own mentions.
"""
import collections
import json
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence

from spacy.language import Language
from spacy.pipeline import SpanRuler
from spacy.tokens import Doc

from ..errors import BioLinkError, Errors
from ..io.files import atomic_file, iter_lines
from ..io.util import PathLike

# spaCy's span_ruler as the term ruler: entities, matched on lowercase tokens; the NER's
# entities stay unless a longer term covers them (spaCy's default first-longest filter).
TERM_RULER_CONFIG = {"spans_key": None, "annotate_ents": True, "overwrite": False,
                     "phrase_matcher_attr": "LOWER", "validate": True}
TERM_RULER_NAME = "term_ruler"
TERM_RULER_FACTORY = "bio_term_ruler"
# PhraseMatcher.add takes the patterns in chunks: one call per term is slow.
_CHUNK = 1000


def corpus_files(paths: Iterable[PathLike]) -> List[Path]:
    """The .spacy files of `paths`: a file as given, a directory's .spacy files sorted
    (as spaCy's Corpus reads a directory)."""
    files: List[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found = sorted(path.rglob("*.spacy"))
            if not found:
                raise BioLinkError(Errors.E762.format(path=path))
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise BioLinkError(Errors.E010.format(what="Corpus", path=path))
    return files


def term_patterns(docs: Sequence[Doc], *, min_precision: float = 0.8, min_count: int = 2,
                  min_length: int = 3) -> List[Dict[str, str]]:
    """span_ruler patterns ({"label", "pattern"}) of the gold entities of `docs` whose
    lowercased text, matched on tokens in the same docs, is that entity with its most
    frequent label in at least `min_precision` of its occurrences and at least
    `min_count` times. Terms shorter than `min_length` characters or without a letter
    are left out (abbreviations are the abbreviation step's job)."""
    from spacy.matcher import PhraseMatcher

    if not docs:
        return []
    vocab = docs[0].vocab
    labels: Dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for doc in docs:
        for ent in doc.ents:
            labels[ent.text.lower()][ent.label_] += 1
    make_doc = _tokenizer(vocab)
    matcher = PhraseMatcher(vocab, attr="LOWER")
    terms = list(labels)
    for start in range(0, len(terms), _CHUNK):
        matcher.add("TERM", [make_doc(t) for t in terms[start:start + _CHUNK]])
    seen: collections.Counter = collections.Counter()
    annotated: collections.Counter = collections.Counter()
    for doc in docs:
        gold = {(ent.start, ent.end): ent.label_ for ent in doc.ents}
        for _, start, end in matcher(doc):
            text = doc[start:end].text.lower()
            seen[text] += 1
            label = gold.get((start, end))
            if label:
                annotated[(text, label)] += 1
    patterns = []
    for text, counts in labels.items():
        label = counts.most_common(1)[0][0]
        if len(text) < min_length or not any(ch.isalpha() for ch in text):
            continue
        hits = annotated[(text, label)]
        if hits >= min_count and hits / max(seen[text], 1) >= min_precision:
            patterns.append({"label": label, "pattern": text})
    return patterns


def _tokenizer(vocab):
    import spacy

    return spacy.blank("en", vocab=vocab).make_doc


def patterns_from_corpora(paths: Iterable[PathLike], **settings) -> List[Dict[str, str]]:
    """term_patterns over the docs of DocBin files or directories of them."""
    import spacy

    from ..corpora.docbin import read_docbin

    vocab = spacy.blank("en").vocab
    docs: List[Doc] = []
    for path in corpus_files(paths):
        docs.extend(read_docbin(path, vocab, "Training DocBin"))
    return term_patterns(docs, **settings)


def write_term_patterns(path: PathLike, patterns: Iterable[Dict], *, force: bool = False) -> int:
    """Write `patterns` as JSONL to `path`, whole or not at all; an existing file is only
    replaced with force=True (E763). Returns the number written."""
    path = Path(path)
    if path.exists() and not force:
        raise BioLinkError(Errors.E763.format(path=path))
    n = 0
    with atomic_file(path) as fileh:
        for pattern in patterns:
            fileh.write(json.dumps(pattern, ensure_ascii=False) + "\n")
            n += 1
    return n


def read_term_patterns(path: PathLike) -> List[Dict]:
    """The patterns of a JSONL file (one {"label": str, "pattern": str or token list} a
    line; blank lines skipped), with path:line in the error of a bad line (E764)."""
    patterns = []
    for line_no, line in iter_lines(path, "Pattern file"):
        if not line.strip():
            continue
        try:
            pattern = json.loads(line)
        except json.JSONDecodeError as err:
            raise BioLinkError(Errors.E764.format(path=path, line=line_no,
                                                  reason=f"not valid JSON ({err.msg})")) from None
        if (not isinstance(pattern, dict) or not isinstance(pattern.get("label"), str)
                or not isinstance(pattern.get("pattern"), (str, list)) or not pattern["pattern"]):
            raise BioLinkError(Errors.E764.format(
                path=path, line=line_no, reason="not an object with a \"label\" string and "
                "a non-empty \"pattern\" (a string or a list of token patterns)"))
        patterns.append(pattern)
    return patterns


class TermRuler(SpanRuler):
    """spaCy's SpanRuler whose phrase patterns are made by the tokenizer alone. spaCy's
    runs every pipe before the ruler over the pattern texts, when they are added and at
    every load: in front of bio_gazetteer, the tok2vec and the NER that is wasted work
    (LOWER matching reads none of it), and the gazetteer's tags make each load warn
    (W012)."""

    def add_patterns(self, patterns: List[Dict]) -> None:
        """Add span_ruler patterns (see SpanRuler.add_patterns) with the pipes before this
        one disabled."""
        names = self.nlp.pipe_names
        before = names[:names.index(self.name)] if self.name in names else []
        with self.nlp.select_pipes(disable=before):
            super().add_patterns(patterns)


@Language.factory(
    TERM_RULER_FACTORY,
    assigns=["doc.ents"],
    default_config={**TERM_RULER_CONFIG, "spans_filter": None,
                    "ents_filter": {"@misc": "spacy.first_longest_spans_filter.v1"},
                    "matcher_fuzzy_compare": {"@misc": "spacy.levenshtein_compare.v1"},
                    "scorer": {"@scorers": "spacy.overlapping_labeled_spans_scorer.v1",
                               "spans_key": "ruler"}},
)
def make_term_ruler(nlp: Language, name: str, *, spans_key, spans_filter, annotate_ents: bool,
                    ents_filter, phrase_matcher_attr, matcher_fuzzy_compare, validate: bool,
                    overwrite: bool, scorer) -> TermRuler:
    """The `bio_term_ruler` factory: spaCy's span_ruler settings, TERM_RULER_CONFIG's
    defaults (entities matched on lowercase tokens), patterns tokenized alone."""
    return TermRuler(nlp, name, spans_key=spans_key, spans_filter=spans_filter,
                     annotate_ents=annotate_ents, ents_filter=ents_filter,
                     phrase_matcher_attr=phrase_matcher_attr,
                     matcher_fuzzy_compare=matcher_fuzzy_compare, validate=validate,
                     overwrite=overwrite, scorer=scorer)


def add_term_ruler(nlp: Language, patterns: Sequence[Dict], *,
                   after: Optional[str] = None, name: str = TERM_RULER_NAME):
    """Add a `bio_term_ruler` (spaCy's span_ruler, patterns tokenized alone) named `name`
    with `patterns` after the pipe `after` (the NER; the end when None), replacing a pipe
    of that name. Returns the ruler."""
    if name in nlp.pipe_names:
        nlp.remove_pipe(name)
    where = {"after": after} if after is not None else {}
    ruler = nlp.add_pipe(TERM_RULER_FACTORY, name=name, config=dict(TERM_RULER_CONFIG),
                         **where)
    ruler.add_patterns(list(patterns))
    return ruler
