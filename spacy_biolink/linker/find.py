"""The linkers of a pipeline, found by what they are, not by what they are called.

A pipeline may hold several bio_linker pipes (`nlp.add_pipe("bio_linker",
name="chemical_linker")` beside a disease linker), each linking the spans whose labels it
is given. Commands that show results (`link`, `visualize`, the Ray runner) use every
linker; commands that need one (`evaluate`, training-pair builders) take its name, or
the only one, and say which there are when they cannot tell.
"""
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from spacy.language import Language
from spacy.tokens import Doc, Span

from ..errors import BioLinkError, Errors
from ..io.util import PathLike
from .component import BioLinker

FACTORY = "bio_linker"

LinkerPipes = Sequence[Tuple[str, BioLinker]]


def is_linker(nlp: Language, name: str) -> bool:
    """Whether pipe `name` of `nlp` is a bio_linker: made by its factory, or an instance of
    its class (a subclass registered under another factory name)."""
    return nlp.get_pipe_meta(name).factory == FACTORY or isinstance(nlp.get_pipe(name), BioLinker)


def linker_pipes(nlp: Language) -> List[Tuple[str, BioLinker]]:
    """(name, pipe) of every enabled bio_linker of `nlp`, in pipeline order."""
    return [(name, pipe) for name, pipe in nlp.pipeline if is_linker(nlp, name)]


def configured_linkers(config: Mapping[str, Any]) -> List[str]:
    """The names of the bio_linker pipes a pipeline config lists, without loading it
    (for checks that must fail before a cluster starts)."""
    components = config.get("components", {})
    return [name for name in config.get("nlp", {}).get("pipeline", [])
            if isinstance(components.get(name), Mapping)
            and components[name].get("factory") == FACTORY]


LINKER_OPTION = "--linker NAME (linker=NAME in Python)"


def the_linker(nlp: Language, name: Optional[str] = None, *, command: str = "This command",
               path: PathLike = "<nlp>", how: str = LINKER_OPTION) -> BioLinker:
    """The linker `command` works with: the one named `name`, or the only one (`how`
    says, in the error, how to name one).

    Raises BioLinkError naming the pipes when there is no linker (E402) or no linker of
    that name (E406), and naming the linkers when there are several and no `name` (E405).
    """
    return the_linker_pipe(nlp, name, command=command, path=path, how=how)[1]


def the_linker_pipe(nlp: Language, name: Optional[str] = None, *, command: str = "This command",
                    path: PathLike = "<nlp>", how: str = LINKER_OPTION) -> Tuple[str, BioLinker]:
    """(pipe name, linker) of the_linker: the name under which `nlp` holds it, which a
    linker sourced into a pipeline under a new name does not know itself."""
    found = require_linkers(nlp, path)
    names = [n for n, _ in found]
    if name is not None:
        for linker_name, pipe in found:
            if linker_name == name:
                return linker_name, pipe
        raise BioLinkError(Errors.E406.format(path=path, name=name, names=", ".join(names),
                                              pipes=", ".join(nlp.pipe_names)))
    if len(found) > 1:
        raise BioLinkError(Errors.E405.format(command=command, path=path, n=len(found),
                                              names=", ".join(names), how=how))
    return found[0]


def require_linkers(nlp: Language, path: PathLike = "<nlp>") -> List[Tuple[str, BioLinker]]:
    """linker_pipes(nlp), or BioLinkError (E402) naming the pipes when there is none."""
    found = linker_pipes(nlp)
    if not found:
        raise BioLinkError(Errors.E402.format(path=path, pipes=", ".join(nlp.pipe_names) or "none"))
    return found


def spans_keys(linkers: LinkerPipes) -> List[Optional[str]]:
    """Where the linkers read their spans, each place once, in pipeline order: None for
    doc.ents, else a doc.spans key."""
    return list(dict.fromkeys(pipe.cfg.get("spans_key") for _, pipe in linkers))


def linked_spans(doc: Doc, linkers: LinkerPipes) -> List[Tuple[Span, Optional[str], Optional[str]]]:
    """(span, spans key, name of the linker that linked it) for every span the linkers read:
    doc.ents and each doc.spans[key] they use, in that order. The name is None for a span
    no linker takes (its label is in no linker's `labels`). Two linkers taking the same
    span: the later one wrote last, so it is the one named."""
    taken: Dict[Tuple[Optional[str], int, int, int], str] = {}
    for name, pipe in linkers:
        key = pipe.cfg.get("spans_key")
        for span in pipe.spans_to_link(doc):
            taken[(key, span.start, span.end, span.label)] = name
    out = []
    for key in spans_keys(linkers):
        spans: Iterable[Span] = doc.ents if key is None else \
            (doc.spans[key] if key in doc.spans else [])
        out.extend((span, key, taken.get((key, span.start, span.end, span.label)))
                   for span in spans)
    return out
