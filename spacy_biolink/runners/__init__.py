"""Running a saved pipeline over documents: a file in this process (local.py), a
directory of shards on Ray or rows in Spark (distributed.py), a displaCy page
(visualize.py), and a trained NER joined with saved linkers into one pipeline
(assemble.py). Nothing here knows about encoders or indexes: they load a pipeline and
call it."""
from .local import link_file
from .distributed import link_corpus, link_rows

__all__ = ["link_corpus", "link_file", "link_rows"]
