"""Compact previews and token-budget packing (pure)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")

PREVIEW_CHARS = 200
# Fields around the text of a result (id, score, tags, dates) cost about this many tokens.
RESULT_OVERHEAD_TOKENS = 20
COMPACT_OVERHEAD_TOKENS = 15

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"\w+", re.UNICODE)


def estimate_tokens(text: str) -> int:
    """About four characters a token, the usual rule of thumb for English with BPE tokenisers."""
    return math.ceil(len(text) / 4)


def preview(content: str, query: str, limit: int = PREVIEW_CHARS) -> str:
    """The sentence sharing the most words with the query (the first on a tie), cut to limit."""
    sentences = [s.strip() for s in _SENTENCE.split(content) if s.strip()]
    if not sentences:
        return content[:limit]
    wanted = {w for w in _WORD.findall(query.lower()) if len(w) > 2}
    best = max(
        enumerate(sentences),
        key=lambda item: (len(wanted.intersection(_WORD.findall(item[1].lower()))), -item[0]),
    )[1]
    if len(best) <= limit:
        return best
    return best[: limit - 1].rstrip() + "…"


def pack(items: Sequence[T], cost: Callable[[T], int], budget: int) -> list[T]:
    """Take items in order while the running cost fits the budget; the first always fits, so a
    budget smaller than one result still answers something."""
    packed: list[T] = []
    used = 0
    for item in items:
        c = cost(item)
        if packed and used + c > budget:
            break
        packed.append(item)
        used += c
    return packed
