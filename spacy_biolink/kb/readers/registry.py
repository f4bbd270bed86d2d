"""The dictionary loaders' registered builders, for [initialize.components.NAME.dictionary]:
a dictionary is read only when the pipeline is initialized."""
from typing import Any, Callable, Dict, List, Optional

from spacy.util import registry

from ..dictionary import ConceptDictionary
from ...errors import BioLinkError, Errors
from ...io.util import PathLike
from .dictionaries import load_dictionary


@registry.misc("spacy-biolink.load_dictionary.v4")
def build_dictionary_loader_v4(path: Optional[PathLike], format: Optional[str] = None,
                               languages: Optional[List[str]] = None,
                               sources: Optional[List[str]] = None,
                               suppressed: Optional[bool] = None,
                               semantic_types: Optional[List[str]] = None,
                               synonym_scopes: Optional[List[str]] = None,
                               xref_prefixes: Optional[List[str]] = None,
                               code_sources: Optional[List[str]] = None,
                               on_bad_line: str = "error",
                               mesh_branches: Optional[List[str]] = None,
                               mesh_supplementary: Optional[List[str]] = None
                               ) -> Callable[[], ConceptDictionary]:
    """v3 plus the MeSH readers' filters (mesh-tsv, mesh-ascii): mesh_branches, the tree
    branches to keep (["D"] for chemicals, ["C", "F03"] for diseases; null: all), and
    mesh_supplementary, more MeSH files read with `path` (the supplementary records beside
    the descriptors; null: none). A bad branch is refused here, when the config is
    resolved."""
    from .lines import BadLines
    from .mesh import check_branches

    BadLines(str(path), on_bad_line)
    check_branches(mesh_branches)
    filters = {"languages": languages, "sources": sources, "suppressed": suppressed,
               "semantic_types": semantic_types, "synonym_scopes": synonym_scopes,
               "xref_prefixes": xref_prefixes, "code_sources": code_sources,
               "mesh_branches": mesh_branches, "mesh_supplementary": mesh_supplementary}

    def load() -> ConceptDictionary:
        if path is None:
            raise BioLinkError(Errors.E900)
        return load_dictionary(path, format, on_bad_line=on_bad_line, **filters)

    return load


@registry.misc("spacy-biolink.extended_dictionary.v1")
def build_extended_dictionary_loader(base: Callable[[], ConceptDictionary],
                                     # Any: confection checks a Dict[str, Callable] value
                                     # before it resolves the loader blocks inside it
                                     extensions: Dict[str, Any]
                                     ) -> Callable[[], ConceptDictionary]:
    """The `base` dictionary loader's concepts extended by each of `extensions` in turn
    (each a dictionary loader block, e.g. load_dictionary.v4 over MeSH 2024 C + F03
    beside MEDIC): an extension concept sharing an id with a concept adds its names to
    it, one sharing none joins as a new concept (kb/extend.py)."""
    from ..extend import extend_dictionary

    def load() -> ConceptDictionary:
        dictionary = base()
        for name, load_extension in extensions.items():
            dictionary = extend_dictionary(dictionary, load_extension(), source=name)
        return dictionary

    return load
