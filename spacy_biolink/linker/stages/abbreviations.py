"""The abbreviation step: a mention that is a short form its document defines ("HNPCC"
after "hereditary non-polyposis colorectal cancer (HNPCC)") is linked as its long form.

It runs first, on the mention texts, before composites are split and before anything is
searched (linker/policy.py's `link`).
"""
from typing import Dict, List, Optional, Sequence

from spacy.vocab import Vocab

from ...text.abbreviations import AbbreviationResolver, expand


class Abbreviations:
    """Spells out the abbreviations defined in each mention's document (enabled), or
    leaves mention texts as written."""

    step = "abbreviations"

    def __init__(self, enabled: bool = True, vocab: Optional[Vocab] = None):
        self.enabled = enabled
        self.resolver = AbbreviationResolver(vocab if vocab is not None else Vocab())

    @property
    def settings(self) -> Dict:
        """The flat bio_linker settings this step stands for."""
        return {"resolve_abbreviations": self.enabled}

    def texts(self, mentions: Sequence) -> List[str]:
        """Mention texts with whitespace collapsed and, when enabled, the abbreviations
        defined in their doc spelled out (each doc's definitions are found once)."""
        texts = [" ".join(m.text.split()) for m in mentions]
        if not self.enabled:
            return texts
        long_forms: Dict[int, Dict[str, str]] = {}
        resolved = []
        for mention, text in zip(mentions, texts):
            if mention.doc is None:
                resolved.append(text)
                continue
            doc_key = id(mention.doc)
            if doc_key not in long_forms:
                long_forms[doc_key] = self.resolver.long_forms(mention.doc, other_numbers=True)
            resolved.append(expand(text, long_forms[doc_key]))
        return resolved
