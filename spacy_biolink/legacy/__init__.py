"""Superseded registered builders, as spacy-legacy keeps spaCy's.

The package proper registers one version of each name. A name's older versions live
here, with entry points of their own, so that a pipeline or config saved with them still
loads and behaves as it did; nothing in the package proper imports this folder. A new
`.vN` is made only for a name that has been released.
"""
