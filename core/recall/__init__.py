"""Recall: facts as the index, the conversation as the evidence (see `ranked`)."""

from core.recall.ranked import Recalled, estimate_tokens, recall

__all__ = ["Recalled", "estimate_tokens", "recall"]
