"""Recall: facts as the index, the conversation as the evidence (see `ranked`)."""

from core.recall.ranked import TURN_BUDGET, Recalled, estimate_tokens, recall

__all__ = ["TURN_BUDGET", "Recalled", "estimate_tokens", "recall"]
