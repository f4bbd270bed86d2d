from .gold_mentions import evaluate_gold_mentions, find_linker, format_table
from .scorer import score_linking

__all__ = ["evaluate_gold_mentions", "find_linker", "format_table", "score_linking"]
