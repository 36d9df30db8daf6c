"""The extractive summary of a cluster (the seed's basic summary): a header, key facts (dates,
numbers, decisions, architecture, issues, actions), then a few sentences of context."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_KEY_FACT = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b|\d+(\.\d+)?\s*%|\$\s?\d|\b\d+(\.\d+)?\s*(ms|s|gb|mb|kb|tb|x|k)\b"
    r"|\b(decid\w*|chose|chosen|switch\w*|migrat\w*|architect\w*|design\w*|bug|issue|fix\w*"
    r"|error|fail\w*|deploy\w*|releas\w*|ship\w*|implement\w*|added|removed|replaced)\b",
    re.IGNORECASE,
)
MAX_KEY_FACTS = 8
MAX_CONTEXT = 5
MIN_SENTENCE_CHARS = 10
# Tags that describe how a memory came about, not what it is about: not carried to a summary.
NOT_CARRIED = frozenset(
    {"skill", "prompt-amendment", "goal-progress", "goal-progress-implicit", "benchmark-artifact"}
)


@dataclass(frozen=True, slots=True)
class Source:
    id: str
    content: str
    created_at: datetime
    tags: tuple[str, ...]


def summary_tags(sources: Sequence[Source]) -> list[str]:
    tags: dict[str, None] = {}
    for source in sources:
        for tag in source.tags:
            if tag not in NOT_CARRIED:
                tags.setdefault(tag, None)
    return list(tags)


def basic_summary(sources: Sequence[Source]) -> str:
    ordered = sorted(sources, key=lambda s: (s.created_at, s.id))
    facts: list[str] = []
    context: list[str] = []
    seen: set[str] = set()
    for source in ordered:
        for sentence in _SENTENCE.split(source.content):
            text = sentence.strip()
            key = text.lower()
            if len(text) <= MIN_SENTENCE_CHARS or key in seen:
                continue
            seen.add(key)
            if _KEY_FACT.search(text):
                facts.append(text)
            else:
                context.append(text)
    first = ordered[0].created_at.date().isoformat()
    last = ordered[-1].created_at.date().isoformat()
    topics = ", ".join(summary_tags(ordered)[:5]) or "none"
    lines = [
        f"[Consolidated summary of {len(ordered)} memories from {first} to {last} — "
        f"Topics: {topics}]"
    ]
    if facts:
        lines.append("Key facts:")
        lines += [f"- {f}" for f in facts[:MAX_KEY_FACTS]]
    if context:
        lines.append("Context:")
        lines += [f"- {c}" for c in context[:MAX_CONTEXT]]
    return "\n".join(lines)
