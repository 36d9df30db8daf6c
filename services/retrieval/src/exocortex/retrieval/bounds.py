"""Which candidates can still reach the page, so that only their rows are read from Postgres.

In RRF mode a result's score is ``(fused × boost + tag bonus) × metadata factor``. Every boost
signal lies in [0, 1], so the boost is at most 1 + the sum of the positive boost weights; the
tag bonus only applies to a memory with a tag that matches the query; the metadata factor only
lowers a score unless it is configured above 1. That gives each candidate a best possible score
from its fused score alone. Search reads the rows of the best fused candidates first, scores
them, and then reads only the candidates whose best possible score still reaches the score of
the page's last result. The page is the same as if every candidate had been read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from psycopg import AsyncConnection

from exocortex.core.db.arrays import TextArray
from exocortex.retrieval.fusion import Fused
from exocortex.retrieval.scoring import ScoringSettings

Row = dict[str, Any]

# Tag match is a substring test (see scoring.tag_match); LIKE needs its wildcards escaped.
_TAGGED_SQL = """
    SELECT DISTINCT t.memory_id FROM memory_tags t
    WHERE t.memory_id = ANY(%(ids)s) AND lower(t.tag) LIKE ANY(%(patterns)s)
"""


def max_boost(cfg: ScoringSettings) -> float:
    weights = (cfg.recency_weight, cfg.frequency_weight, cfg.usefulness_weight, cfg.valence_weight)
    return 1.0 + sum(max(0.0, w) for w in weights)


class BestPossible:
    """An upper bound on the final RRF-mode score of a candidate, from its fused score and
    whether it has a tag matching the query (the constants are worked out once a search)."""

    def __init__(self, best_fused: float, cfg: ScoringSettings) -> None:
        self._boost = max_boost(cfg)
        self._tag = max(0.0, cfg.tag_boost) * best_fused
        self._penalty = max(1.0, cfg.metadata_penalty)

    def __call__(self, fused: float, tagged: bool) -> float:
        if fused < 0:  # only with negative fusion weights; the bound below would not hold
            return float("inf")
        return (fused * self._boost + (self._tag if tagged else 0.0)) * self._penalty


def reachable(
    unread: Iterable[str],
    fused: Mapping[str, Fused],
    tagged: set[str] | None,
    page_floor: float | None,
    best_fused: float,
    cfg: ScoringSettings,
) -> list[str]:
    """The unread candidates that could still enter the page. ``page_floor`` is the score of the
    page's last result (None while the page is not full: then every candidate is needed);
    ``tagged`` is the candidates with a tag matching the query (None: unknown, assume all).
    A candidate that could tie the floor is kept, since ties are broken by id."""
    if page_floor is None:
        return list(unread)
    bound = BestPossible(best_fused, cfg)
    return [i for i in unread if bound(fused[i].score, tagged is None or i in tagged) >= page_floor]


def _like_pattern(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def like_patterns(terms: Iterable[str]) -> TextArray:
    """The query's terms as LIKE patterns for ``lower(tag) LIKE ANY(...)`` (a substring test)."""
    return TextArray(map(_like_pattern, terms))


async def tagged(conn: AsyncConnection[Row], ids: Sequence[str], terms: Sequence[str]) -> set[str]:
    """The candidates with a tag containing one of the query's terms (the tag bonus's test)."""
    if not ids or not terms:
        return set()
    cur = await conn.execute(_TAGGED_SQL, {"ids": TextArray(ids), "patterns": like_patterns(terms)})
    return {row["memory_id"] for row in await cur.fetchall()}
