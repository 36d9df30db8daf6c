"""Normalised Levenshtein similarity of tags, and the merge suggestions (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


def levenshtein(a: str, b: str) -> int:
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def similarity(a: str, b: str) -> float:
    longest = max(len(a), len(b))
    return 1.0 - levenshtein(a, b) / longest if longest else 1.0


@dataclass(frozen=True, slots=True)
class Suggestion:
    from_tag: str  # the less used spelling
    to_tag: str
    similarity: float
    from_count: int
    to_count: int


def suggestions(
    counts: Mapping[str, int], *, min_similarity: float, min_count: int = 2
) -> list[Suggestion]:
    """Pairs of tags used at least ``min_count`` times that are at least ``min_similarity``
    alike (and not equal), most similar first; the less used one merges into the other."""
    tags = sorted(t for t, n in counts.items() if n >= min_count)
    out = []
    for i, a in enumerate(tags):
        for b in tags[i + 1 :]:
            # Cheap bound first: the length difference alone caps the similarity.
            if 1.0 - abs(len(a) - len(b)) / max(len(a), len(b)) < min_similarity:
                continue
            score = similarity(a, b)
            if min_similarity <= score < 1.0:
                low, high = (a, b) if (counts[a], b) < (counts[b], a) else (b, a)
                out.append(Suggestion(low, high, round(score, 4), counts[low], counts[high]))
    out.sort(key=lambda s: (-s.similarity, -s.to_count, s.from_tag))
    return out
