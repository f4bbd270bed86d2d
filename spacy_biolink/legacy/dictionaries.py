"""Superseded dictionary loaders (`load_dictionary.v1`-`v3`), kept so that pipelines
saved with them load; each reads as `load_dictionary.v4` with the settings it had."""
from typing import Callable, List, Optional

from spacy.util import registry

from ..kb.dictionary import ConceptDictionary
from ..kb.readers.dictionaries import load_dictionary
from ..kb.readers.registry import build_dictionary_loader_v4
from ..io.util import PathLike


@registry.misc("spacy-biolink.load_dictionary.v1")
def build_dictionary_loader(path: PathLike, format: Optional[str] = None
                            ) -> Callable[[], ConceptDictionary]:
    """For [initialize.components.bio_linker.dictionary]: read only when initialize runs.
    Frozen; v2 adds the readers' filters and a null path in shipped configs."""

    def load() -> ConceptDictionary:
        return load_dictionary(path, format)

    return load


@registry.misc("spacy-biolink.load_dictionary.v2")
def build_dictionary_loader_v2(path: Optional[PathLike], format: Optional[str] = None,
                               languages: Optional[List[str]] = None,
                               sources: Optional[List[str]] = None,
                               suppressed: Optional[bool] = None,
                               semantic_types: Optional[List[str]] = None,
                               synonym_scopes: Optional[List[str]] = None,
                               xref_prefixes: Optional[List[str]] = None,
                               code_sources: Optional[List[str]] = None
                               ) -> Callable[[], ConceptDictionary]:
    """v1 plus the readers' filters (null: the reader's default). UMLS: languages
    (["ENG"]), sources (SABs, all), suppressed (false), semantic_types (TUIs or groups
    such as "DISO"; also filters jsonl types), code_sources (SABs whose codes become
    alternative ids, e.g. ["MSH"]: none). OBO: synonym_scopes (["EXACT"]),
    xref_prefixes (MeSH, OMIM, UMLS).

    path may be null in a shipped config (`spacy debug config` resolves [initialize]
    without running it); it must be set by the time the pipeline is initialized.
    """
    return build_dictionary_loader_v3(path, format, languages, sources, suppressed,
                                      semantic_types, synonym_scopes, xref_prefixes,
                                      code_sources, on_bad_line="error")


@registry.misc("spacy-biolink.load_dictionary.v3")
def build_dictionary_loader_v3(path: Optional[PathLike], format: Optional[str] = None,
                               languages: Optional[List[str]] = None,
                               sources: Optional[List[str]] = None,
                               suppressed: Optional[bool] = None,
                               semantic_types: Optional[List[str]] = None,
                               synonym_scopes: Optional[List[str]] = None,
                               xref_prefixes: Optional[List[str]] = None,
                               code_sources: Optional[List[str]] = None,
                               on_bad_line: str = "error"
                               ) -> Callable[[], ConceptDictionary]:
    """v2 plus on_bad_line: "error" (v2's behaviour) stops at the first malformed line
    or line with a control character, naming file:line; "skip" leaves such lines out,
    counts them and names the first few in a warning (W953). A bad value is refused here,
    when the config is resolved, not when the dictionary is read."""
    # v4 with its MeSH filters unset reads exactly as v3 did: unset filters are dropped
    return build_dictionary_loader_v4(path, format, languages, sources, suppressed,
                                      semantic_types, synonym_scopes, xref_prefixes,
                                      code_sources, on_bad_line=on_bad_line)
