"""The stages a linker runs after retrieval, each a registered, versioned config block
under `[components.NAME.stages.STAGE_NAME]`, run in the order the config lists them.

A stage has a `level`:
- "candidates": `apply_to_candidates(linker, query_texts, candidates)` gets each distinct
  query's ranked candidates and returns them filtered or re-ordered, before the
  composite decision (the Siamese verifier, verifier.py);
- "mentions": `apply_to_mentions(linker, mentions, links)` gets each mention's links
  (one (text, candidates) per concept it names) after it, with the mention's document
  for context (the cross-encoder reranker, reranker.py).
`k` is how many candidates it needs retrieved (0: the linker's own k). A mention stage
whose `uses_query_vectors` is true reads `linker.query_vectors(keys)` in the same batch
and gets the rows the search encoded. Its weights
travel with the pipeline: `state_to_bytes()` / `state_from_bytes(data)` (and the disk
forms) carry only what the config does not say, so a value given in the config, or at
`spacy.load(..., config=...)`, is the value used. `load_trained(path)` reads the weights
of a trained stage directory (`train configs/siamese.cfg`, `train configs/reranker.cfg`)
at initialize.
"""
from typing import Dict, Optional

from ...errors import BioLinkError, Errors

LEVELS = ("candidates", "mentions")


class Stage:
    """What a stage provides (see the module docstring); the verifier and the reranker
    implement it."""

    level: str = "mentions"
    k: int = 0
    # True for a mention stage that reads the batch's encoded queries (the linker then
    # keeps them until the stages have run, instead of the stage encoding them again).
    uses_query_vectors: bool = False

    def apply_to_candidates(self, linker, query_texts, candidates):
        """Candidates of each distinct query, filtered or re-ordered."""
        raise NotImplementedError

    def apply_to_mentions(self, linker, mentions, links):
        """Each mention's links, filtered or re-ordered."""
        raise NotImplementedError

    def state_to_bytes(self) -> bytes:
        """The stage's weights (not its settings: those are config)."""
        raise NotImplementedError

    def state_from_bytes(self, data: bytes) -> None:
        """Read weights written by `state_to_bytes` into this stage."""
        raise NotImplementedError

    def load_trained(self, path) -> None:
        """Read the weights of a trained stage directory into this stage."""
        raise NotImplementedError

    def clear_cache(self) -> None:
        """Forget what the stage remembers across batches (none by default)."""

    def learn_from_corpora(self, linker, corpora, *, exclude_pmids=frozenset()) -> None:
        """Read what the stage needs from the corpora that augment the linker's dictionary
        (`initialize(augment=...)`), the documents of `exclude_pmids` left out; nothing
        by default."""


def check_stages(stages: Optional[Dict]) -> Dict[str, Stage]:
    """The stages setting as an ordered dict of name -> stage; E165 for anything else."""
    if stages is None:
        return {}
    if not isinstance(stages, dict):
        raise BioLinkError(Errors.E165.format(name="stages", value=stages))
    for name, stage in stages.items():
        if getattr(stage, "level", None) not in LEVELS:
            raise BioLinkError(Errors.E165.format(name=name, value=stage))
    return dict(stages)
