"""The `bio_linker` pipe (component.py) and what it is made of: the linking policy
(policy.py), its stages (stages/), the span extensions it writes (extensions.py), the
pipelines init-linker and assemble build (pipeline.py, assemble.py)."""
from .component import BioLinker, make_bio_linker
from .extensions import install_extensions
from .policy import LinkingPolicy, Mention

__all__ = ["BioLinker", "LinkingPolicy", "Mention", "install_extensions", "make_bio_linker"]

# bio_linker's default config names spacy-biolink.MentionNormalizer.v1 and the linking
# scorer. spaCy imports the factory through its entry point with no `import spacy_biolink`,
# and the package root loads lazily, so registering them is done here, after component.py
# is complete (registry imports evaluation, which imports linker.find -> component).
from .. import registry as _registry  # noqa: E402,F401
