"""Stages a linker runs after retrieval, each with its own weights: the Siamese verifier
(verifier.py) and the cross-encoder reranker (reranker.py)."""
