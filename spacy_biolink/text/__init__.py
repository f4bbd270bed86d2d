"""Mention text processing: normalization, composite splitting, abbreviations."""
