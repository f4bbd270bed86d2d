"""The `bio_linker` pipe (component.py) and what it is made of: the linking policy
(policy.py), its stages (stages/), the span extensions it writes (extensions.py), the
pipeline init-linker builds (pipeline.py), corpus mentions added to the dictionary as
names (augment.py)."""
from .component import BioLinker, make_bio_linker
from .extensions import install_extensions
from .policy import LinkingPolicy, Mention

__all__ = ["BioLinker", "LinkingPolicy", "Mention", "install_extensions", "make_bio_linker"]
