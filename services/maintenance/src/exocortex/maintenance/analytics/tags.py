"""Tag spellings that are probably one tag (nextjs / next.js, test / tests): the seed's tag
cleanup rule, normalised Levenshtein similarity of at least 0.8 between tags used at least
twice, pure so it is easy to test."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from exocortex.maintenance.analytics.models import TagMergeSuggestion, TagUse

MIN_SIMILARITY = 0.8
MIN_USES = 2
# The most used tags compared (pairs grow with the square; rarer tags matter least).
MAX_TAGS = 2_000


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
    return 1.0 if longest == 0 else 1.0 - levenshtein(a, b) / longest


def merge_suggestions(uses: Sequence[TagUse]) -> list[TagMergeSuggestion]:
    """Every similar pair, most similar first. Tags are compared within the same first
    character and only when their lengths allow the similarity (at 0.8 a tag of 10 characters
    is at most 2 edits from the other), which keeps the pairs near linear in practice."""
    common = [u for u in uses if u.memory_count >= MIN_USES][:MAX_TAGS]
    by_initial: dict[str, list[TagUse]] = defaultdict(list)
    for use in common:
        by_initial[use.tag[:1]].append(use)
    found: list[TagMergeSuggestion] = []
    for group in by_initial.values():
        for i, first in enumerate(group):
            for second in group[i + 1 :]:
                short, long_ = sorted((len(first.tag), len(second.tag)))
                if short < MIN_SIMILARITY * long_:
                    continue
                score = similarity(first.tag, second.tag)
                if MIN_SIMILARITY <= score < 1.0:
                    # `uses` is sorted by use, so `first` is the more used: the other merges in.
                    found.append(
                        TagMergeSuggestion(
                            from_tag=second.tag,
                            to_tag=first.tag,
                            similarity=round(score, 3),
                            from_count=second.memory_count,
                            to_count=first.memory_count,
                        )
                    )
    found.sort(key=lambda s: (-s.similarity, -s.to_count, s.from_tag))
    return found
