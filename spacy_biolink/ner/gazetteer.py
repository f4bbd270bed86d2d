"""bio_gazetteer: the dictionary as a feature inside the statistical NER.

Before the tok2vec, each token gets a tag saying whether it starts (B-) or continues (I-)
the longest dictionary name found there, and that name's type ("B-Chemical",
"I-Disease"; "O" outside any name). The tag goes into token.tag_, which nothing else in an
NER pipeline sets, so the tok2vec's MultiHashEmbed reads it as one more attribute ("TAG")
and the NER learns how far to trust the dictionary in context.

Names are tokenized by the pipeline's own tokenizer and matched on the concatenation of
lowercased tokens: a run of tokens matches when its tokens end where the name's do, and
spelled together they are the name. Comparing spellings rather than token lists matters
because a name alone can split differently from the same name in running text ("Ca(2+)"
alone gives "2", "+"; inside "Ca(2+)-induced" it gives "2+"). The terms are saved with the
pipeline as a gzipped text file (type, tab, tokens joined by spaces), never pickled.
"""
import gzip
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import numpy
from spacy.attrs import TAG
from spacy.language import Language
from spacy.tokens import Doc

from ..errors import BioLinkError, Errors
from ..io.files import atomic_file, iter_lines
from ..io.util import PathLike

GAZETTEER_NAME = "bio_gazetteer"
OUTSIDE = "O"
# Types of a name that more than one dictionary holds, joined in one tag value.
TYPE_SEPARATOR = "|"
_TERMS_FILE = "terms.tsv.gz"


@Language.factory(
    GAZETTEER_NAME,
    assigns=["token.tag"],
    default_config={"min_chars": 3, "max_tokens": 12},
)
def make_gazetteer(nlp: Language, name: str, *, min_chars: int, max_tokens: int):
    """The `bio_gazetteer` factory: an empty Gazetteer; `initialize` (or from_disk) fills it.
    Names shorter than `min_chars` characters or longer than `max_tokens` tokens are left
    out."""
    return Gazetteer(nlp, name, min_chars=min_chars, max_tokens=max_tokens)


class Gazetteer:
    """Longest-match dictionary tagging over lowercased token sequences."""

    def __init__(self, nlp: Language, name: str = GAZETTEER_NAME, *, min_chars: int = 3,
                 max_tokens: int = 12):
        self.name = name
        self.vocab = nlp.vocab
        self._tokenizer = nlp.tokenizer
        self.min_chars = min_chars
        self.max_tokens = max_tokens
        # "tok tok tok" -> type, as saved; the tokens spelled together -> type, as matched;
        # first token -> the longest spelling of a name starting with it, which bounds how
        # far a match is tried from a position.
        self.terms: Dict[str, str] = {}
        self._spelled: Dict[str, str] = {}
        self._longest: Dict[str, int] = {}
        self._tag_hashes: Dict[str, Tuple[int, int]] = {}
        self._outside = self.vocab.strings.add(OUTSIDE)

    def __len__(self) -> int:
        return len(self.terms)

    def add(self, label: str, names: Iterable[str], batch_size: int = 1000) -> int:
        """Add `names` of type `label`, tokenized by the pipeline's tokenizer; a name already
        held with another type gets both. Returns how many names were new."""
        if not isinstance(label, str) or not label or TYPE_SEPARATOR in label \
                or "\t" in label:
            raise BioLinkError(Errors.E765.format(label=label, sep=TYPE_SEPARATOR))
        kept = (n for n in names if len(n.strip()) >= self.min_chars)
        added = 0
        for doc in self._tokenizer.pipe(kept, batch_size=batch_size):
            words = [t.lower_ for t in doc if not t.is_space]
            if not words or len(words) > self.max_tokens:
                continue
            added += self._add_key(" ".join(words), label)
        return added

    def _add_key(self, key: str, label: str) -> int:
        old = self.terms.get(key)
        if old is None:
            labels = label
        elif label in old.split(TYPE_SEPARATOR):
            return 0
        else:
            labels = TYPE_SEPARATOR.join(sorted(old.split(TYPE_SEPARATOR) + [label]))
        self.terms[key] = labels
        spelled = key.replace(" ", "")
        known = self._spelled.get(spelled)
        if known is not None and known != labels:
            labels = TYPE_SEPARATOR.join(sorted(set(known.split(TYPE_SEPARATOR))
                                                | set(labels.split(TYPE_SEPARATOR))))
        self._spelled[spelled] = labels
        first, _, _ = key.partition(" ")
        if self._longest.get(first, 0) < len(spelled):
            self._longest[first] = len(spelled)
        return int(old is None)

    def matches(self, doc: Doc) -> List[Tuple[int, int, str]]:
        """(start, end, type) of the longest dictionary names of `doc`, left to right,
        not overlapping."""
        words = [t.lower_ for t in doc]
        spelled_names, longest = self._spelled, self._longest
        found = []
        i, n = 0, len(words)
        while i < n:
            most = longest.get(words[i], 0)
            best = None
            spelled = ""
            j = i
            while j < n and j - i < self.max_tokens:
                spelled += words[j]
                j += 1
                if len(spelled) > most:
                    break
                label = spelled_names.get(spelled)
                if label is not None:
                    best = (i, j, label)
            if best is None:
                i += 1
            else:
                found.append(best)
                i = best[1]
        return found

    def __call__(self, doc: Doc) -> Doc:
        """Set token.tag_ of every token of `doc`: B-/I- and the type of the longest name
        covering it, "O" elsewhere."""
        tags = numpy.full((len(doc), 1), self._outside, dtype="uint64")
        for start, end, label in self.matches(doc):
            begin, inside = self._tags(label)
            tags[start, 0] = begin
            tags[start + 1:end, 0] = inside
        if len(doc):
            doc.from_array([TAG], tags)
        return doc

    def _tags(self, label: str) -> Tuple[int, int]:
        hashes = self._tag_hashes.get(label)
        if hashes is None:
            hashes = (self.vocab.strings.add("B-" + label), self.vocab.strings.add("I-" + label))
            self._tag_hashes[label] = hashes
        return hashes

    def pipe(self, docs: Iterable[Doc], batch_size: int = 128) -> Iterator[Doc]:
        """Each doc of `docs`, tagged."""
        for doc in docs:
            yield self(doc)

    def initialize(self, get_examples: Optional[Callable] = None, *,
                   nlp: Optional[Language] = None,
                   terms: Optional[Dict[str, Iterable[str]]] = None) -> None:
        """Fill the gazetteer from `terms` (type -> names), e.g. the registered
        `spacy-biolink.gazetteer_terms.v1` in [initialize.components.bio_gazetteer.terms].
        Without terms, what it holds stays (a sourced or loaded gazetteer)."""
        if nlp is not None:
            self._tokenizer = nlp.tokenizer
        for label, names in (terms or {}).items():
            self.add(label, names)

    def to_disk(self, path: PathLike, *, exclude: Sequence[str] = ()) -> None:
        """Write the terms to `path`/terms.tsv.gz (type, tab, lowercased tokens)."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        with atomic_file(path / _TERMS_FILE, "wb") as raw:
            with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out:
                for key, label in self.terms.items():
                    out.write(f"{label}\t{key}\n".encode("utf8"))

    def from_disk(self, path: PathLike, *, exclude: Sequence[str] = ()) -> "Gazetteer":
        """Read the terms that to_disk wrote."""
        file = Path(path) / _TERMS_FILE
        self.terms, self._spelled, self._longest = {}, {}, {}
        for line_no, line in iter_lines(file, "Gazetteer terms"):
            label, tab, key = line.partition("\t")
            if not tab or not key or not label:
                raise BioLinkError(Errors.E766.format(path=file, line=line_no, text=line[:80]))
            for one in label.split(TYPE_SEPARATOR):
                self._add_key(key, one)
        return self


def gazetteer_terms(sources: Dict[str, Dict]) -> Dict[str, List[str]]:
    """type -> names of the dictionaries in `sources` (type -> load_dictionary's keyword
    arguments: path, format, and its filters such as mesh_branches). A source whose
    settings hold `label` tags that type instead of its own key, so that one type can
    take the names of several dictionaries (`Disease` from MEDIC, `Disease_mesh` with
    label "Disease" from MeSH 2024's disease descriptors). Two formats are read
    here instead: "hgnc-symbols" (HGNC's TSV: approved, alias and previous symbols and
    approved names, `hgnc_symbols`) and "pubtator-mentions" (`paths`: PubTator files, a
    list or a name -> path section, whose mention texts of the source's six-type label
    are the names, e.g. training splits; `exclude_pmids`, a PMID file or corpus whose
    documents are left out). A source with `chemistry_forms = true` also takes the forms
    running text writes for its names that a chemical linker folds (text/chemistry.py's
    written_forms: "Quetiapine" for "Quetiapine Fumarate", "Zn2+", "CaCl(2)")."""
    from ..kb.readers.dictionaries import load_dictionary
    from ..text.chemistry import written_forms

    terms: Dict[str, List[str]] = {}
    for key, settings in sources.items():
        settings = dict(settings)
        label = settings.pop("label", key)  # checked where the names are added (E765)
        chemistry_forms = settings.pop("chemistry_forms", False)
        if not isinstance(chemistry_forms, bool):
            raise BioLinkError(Errors.E772.format(source=key, value=chemistry_forms))
        before = len(terms.get(label, []))
        fmt = settings.pop("format", None)
        if fmt == PUBTATOR_MENTIONS:
            from ..corpora.partial import mention_terms

            paths = settings.pop("paths")
            # a config section (name -> path) or a list: a list of interpolated paths
            # comes out of the config as one joined string
            paths = list(paths.values()) if isinstance(paths, dict) else paths
            # `exclude_pmids`: a file of PMIDs or a corpus whose documents' mentions are
            # left out, so that no dev or test document's gold text becomes a term
            held_out = settings.pop("exclude_pmids", None)
            if held_out:
                from ..corpora.bioc import read_pmid_file

                held_out = read_pmid_file(held_out, "gazetteer exclude_pmids")
            names = mention_terms(paths, {label}, held_out or frozenset()).get(label, set())
            terms.setdefault(label, []).extend(sorted(names))
        else:
            path = settings.pop("path")
            if fmt == HGNC_SYMBOLS:
                terms.setdefault(label, []).extend(hgnc_symbols(path))
            else:
                dictionary = load_dictionary(path, fmt, **settings)
                terms.setdefault(label, []).extend(dictionary.names)
        if chemistry_forms:
            terms[label].extend(written_forms(terms[label][before:]))
    return terms


def config_gazetteer_terms(config_path: PathLike, labels: Iterable[str],
                           overrides: Optional[Dict[str, object]] = None) -> Dict[str, List[str]]:
    """type -> names of the sources of a training config's bio_gazetteer terms
    ([initialize.components.NAME.terms.sources], NAME the pipe made by bio_gazetteer)
    that tag one of `labels`, the config's `overrides` (`--paths.mesh DIR`) applied: the
    dictionary names its NER will see tagged. E768 when the config has no such terms."""
    from thinc.api import Config

    from ..io.config_overrides import check_overrides
    from ..io.files import read_config

    raw = read_config(config_path)
    check_overrides(overrides or {}, raw)
    config = Config().from_str(raw.to_str(), overrides=overrides or {}, interpolate=True)
    names = [name for name, block in config.get("components", {}).items()
             if isinstance(block, dict) and block.get("factory") == GAZETTEER_NAME]
    blocks = config.get("initialize", {}).get("components", {})
    sources = None
    for name in names:
        terms = blocks.get(name, {}).get("terms")
        if isinstance(terms, dict) and isinstance(terms.get("sources"), dict):
            sources = terms["sources"]
    if sources is None:
        raise BioLinkError(Errors.E768.format(path=config_path))
    wanted = set(labels)
    return gazetteer_terms({key: settings for key, settings in sources.items()
                            if settings.get("label", key) in wanted})


PUBTATOR_MENTIONS = "pubtator-mentions"
HGNC_SYMBOLS = "hgnc-symbols"
# HGNC columns whose values name a gene (comma-separated lists in the alias/previous ones)
_HGNC_NAME_COLUMNS = ("Approved symbol", "Approved name", "Alias symbols", "Previous symbols")


def hgnc_symbols(path: PathLike) -> List[str]:
    """The gene names of HGNC's complete-set TSV (a header line, then one gene a line):
    approved, alias and previous symbols and approved names of approved genes. Symbols
    that are English words once lowercased ("MY", "SET") are left out, as the gazetteer
    matches lowercased tokens and they would tag the words."""
    from spacy.lang.en.stop_words import STOP_WORDS

    names: List[str] = []
    columns: Optional[List[int]] = None
    status = None
    for line_no, line in iter_lines(path, "HGNC gene table"):
        cols = line.rstrip("\n").split("\t")
        if columns is None:
            missing = [c for c in _HGNC_NAME_COLUMNS if c not in cols]
            if missing:
                raise BioLinkError(Errors.E543.format(path=path, line=line_no,
                                                      missing=missing))
            columns = [cols.index(c) for c in _HGNC_NAME_COLUMNS]
            status = cols.index("Status") if "Status" in cols else None
            continue
        if status is not None and status < len(cols) and cols[status] != "Approved":
            continue
        for header, index in zip(_HGNC_NAME_COLUMNS, columns):
            value = cols[index] if index < len(cols) else ""
            # the symbol columns list several, comma-separated; a name may hold commas
            for name in value.split(",") if "symbol" in header else [value]:
                name = name.strip()
                if name and name.lower() not in STOP_WORDS:
                    names.append(name)
    return names
