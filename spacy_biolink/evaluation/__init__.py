from .end_to_end import evaluate_end_to_end, format_end_to_end_table
from .gold_mentions import evaluate_gold_mentions, find_linker, format_table
from .scorer import score_linking

__all__ = ["evaluate_end_to_end", "format_end_to_end_table", "evaluate_gold_mentions",
           "find_linker", "format_table", "score_linking"]
