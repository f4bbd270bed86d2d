"""bio_variants: sequence variants found by their written forms, after the NER.

Variants are written in a handful of compact notations: dbSNP ids (rs121913529), HGVS
(c.1799T>A, p.Val600Glu, c.436_436+1delAG) and the legacy forms papers still use (V600E,
Arg72Pro, 677C>T, IVS8-2A>G, 999del5). A statistical NER learns them from the few hundred
variant mentions of tmVar3 and BioRED and misses the commonest ("V600E", "L858R") in
text unlike its training documents. tmVar, which PubTator runs for variants, finds them
with patterns; so does this pipe, after the NER and before the linkers:

- a candidate is a stretch of text in one of those notations (`CANDIDATE`, boundaries
  not inside a word), kept only when the variant normalizer's rule table
  (data/variant_rules.tsv, the table the variant linker links with) gives it an id: a
  span this pipe tags is one the variant linker can link;
- it must start and end on token boundaries, and is not taken where the NER saw
  otherwise: an entity of the same span under another label ("T47D" as a cell line), or
  one reaching outside it. Entities inside it are the NER's pieces of the variant ("C>T"
  of "677 C>T", "677C" of "677C>T" as a gene) and give way to it;
- a bare one-letter form followed by "cell(s)" is a cell line's name ("T98G cells").

The rule table travels with the saved pipeline (to_disk), so a pipeline finds the same
variants wherever it is loaded; `rules` names a table of one's own instead.
"""
import re
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

from spacy.language import Language
from spacy.tokens import Doc, Span

from ..errors import BioLinkError, Errors
from ..io.files import atomic_file
from ..linker.stages.variants import VariantRules
from ..text.abbreviations import doc_text

VARIANTS_NAME = "bio_variants"
RULES_FILE_NAME = "variant_rules.tsv"

_AA1 = "ACDEFGHIKLMNPQRSTVWY"
_AA3 = "Ala|Arg|Asn|Asp|Cys|Gln|Glu|Gly|His|Ile|Leu|Lys|Met|Phe|Pro|Ser|Thr|Trp|Tyr|Val"
_NT_CHANGE = r"[ACGTU]+\s?(?:>|-+>|/|→)\s?[ACGTU]+"
_POSITION = r"[-+*]?\d+(?:[-+_]\d+)*"
_NOTATIONS = (
    r"(?i:rs)\s?\d{2,}",  # dbSNP
    # HGVS on DNA or RNA: c.28T>C, c. *469 C>A, c.1811_1812delAT, g.10435_10809del
    r"[cgmnr]\.\s?\(?" + _POSITION + r"\s?(?:" + _NT_CHANGE
    + r"|del[ACGTU]*\d*|ins[ACGTU]+|dup[ACGTU]*\d*|delins[ACGTU]+)\)?",
    # HGVS on protein: p.R469X, p.(Arg58Trp), p.Val35fsX25, p.R469[R,X]
    r"p\.\s?\(?(?:" + _AA3 + r"|[" + _AA1 + r"])\d+(?:" + _AA3 + r"|Ter|[" + _AA1
    + r"X*]|fs\S*|del|\[[^\]\s]{1,9}\])\)?",
    r"(?:" + _AA3 + r")\s?\d+\s?(?:" + _AA3 + r"|Ter|X|\*|stop)",  # Arg72Pro, Arg 1306 Trp
    # V600E, E873stop, C105Vfs114X: two digits at least ("E2F" is a gene)
    r"[" + _AA1 + r"]\d{2,5}(?:[" + _AA1 + r"X*]|stop|Ter|fs(?:X\d+|\*\d+)?)",
    r"(?:IVS\d+\s?)?" + _POSITION + r"\s?\(?" + _NT_CHANGE + r"\)?",  # 677C>T, -1082(G/A)
    r"[ACGT]\d{2,6}[ACGT]",  # G20210A
    r"\d+(?:[-_]\d+)?\s?(?:del|ins|dup)\s?(?:[ACGT]+|\d+)?",  # 999del5, 2238-9del AG
    r"\d+del[" + _AA1 + r"]+",  # 157delMTTTVP
)
# Not inside a word, a number or another notation on either side.
CANDIDATE = re.compile(r"(?<![\w.+\-*/>])(?:" + "|".join(f"(?:{n})" for n in _NOTATIONS)
                       + r")(?![\w>/])")
_ONE_LETTER = re.compile(r"[A-Z]\d+[A-Z]")
_CELL_WORDS = ("cell", "cells")


@Language.factory(
    VARIANTS_NAME,
    assigns=["doc.ents"],
    default_config={"label": "Variant", "rules": None},
)
def make_variant_finder(nlp: Language, name: str, *, label: str, rules: Optional[str]):
    """The `bio_variants` factory: a VariantFinder pipe (config: label, the entity label
    it sets; rules, a rule table file, null for the shipped data/variant_rules.tsv)."""
    return VariantFinder(nlp, name, label=label, rules=rules)


class VariantFinder:
    """Adds to doc.ents the variants written in a notation its rule table normalizes
    (module docstring)."""

    def __init__(self, nlp: Language, name: str = VARIANTS_NAME, *, label: str = "Variant",
                 rules: Optional[str] = None):
        if not isinstance(label, str) or not label.strip():
            raise BioLinkError(Errors.E767.format(
                setting="label", value=label, reason="give the entity label variants "
                "get, e.g. \"Variant\""))
        self.name = name
        self.label = label
        # A pipeline saved with a table of the user's own holds the table itself: loaded
        # where that file is not, the rules come from the saved copy (from_disk).
        self.rules_path = rules
        self.rules: Optional[VariantRules] = None
        if rules is None or Path(rules).is_file():
            self.rules = VariantRules.from_file(rules)

    def __call__(self, doc: Doc) -> Doc:
        """Add the variants of `doc` to doc.ents in place and return it."""
        found = list(self.find(doc))
        if not found:
            return doc
        owner = {}
        for ent in doc.ents:
            for i in range(ent.start, ent.end):
                owner[i] = ent
        added: List[Span] = []
        for span in found:
            inside = {owner[i] for i in range(span.start, span.end) if i in owner}
            if any(ent.start < span.start or ent.end > span.end for ent in inside):
                continue  # an entity reaching outside it: the NER read this text otherwise
            if any(ent.start == span.start and ent.end == span.end for ent in inside):
                continue  # the NER's own entity on the same span keeps its label
            added.append(span)
        if added:
            # Entities inside an added span are replaced by it; tokens the NER left
            # unannotated elsewhere stay so.
            doc.set_ents(added, default="unmodified")
        return doc

    def pipe(self, docs, batch_size: int = 128):
        """Each doc of `docs`, its variants added."""
        for doc in docs:
            yield self(doc)

    def find(self, doc: Doc) -> Iterator[Span]:
        """The variant spans of `doc` (labelled, on token boundaries, not overlapping),
        whatever entities the doc has."""
        # doc.text makes a Token object per token; the arrays do not
        text = doc_text(doc)
        for start, end in self.find_in_text(text):
            span = doc.char_span(start, end, label=self.label)
            if span is None:
                continue
            if (_ONE_LETTER.fullmatch(text, start, end) and span.end < len(doc)
                    and doc[span.end].lower_ in _CELL_WORDS):
                continue
            yield span

    def find_in_text(self, text: str) -> Iterator[Tuple[int, int]]:
        """(start, end) character offsets of the candidates in `text` that the rule table
        normalizes."""
        rules = self._rules()
        for match in CANDIDATE.finditer(text):
            start, end = match.span()
            found = text[start:end]
            # "(c.73G>A)": the optional closing bracket belongs to the sentence
            if found.endswith(")") and found.count("(") < found.count(")"):
                end -= 1
                found = found[:-1]
            if rules.normalize(found) is not None:
                yield start, end

    def _rules(self) -> VariantRules:
        if self.rules is None:
            raise BioLinkError(Errors.E767.format(
                setting="rules", value=str(self.rules_path),
                reason="no such file, and no table saved with the pipeline; give a rule "
                       "table in data/variant_rules.tsv's format, or null for that one"))
        return self.rules

    def to_disk(self, path, *, exclude=tuple()) -> None:
        """Save the rule table, so the pipeline finds the same variants wherever it is
        loaded."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        with atomic_file(path / RULES_FILE_NAME, "wb") as f:
            f.write(self._rules().text.encode("utf8"))

    def from_disk(self, path, *, exclude=tuple()) -> "VariantFinder":
        """Load the rule table saved with the pipeline."""
        rules_file = Path(path) / RULES_FILE_NAME
        if rules_file.is_file():
            self.rules = VariantRules.from_file(rules_file)
        return self
