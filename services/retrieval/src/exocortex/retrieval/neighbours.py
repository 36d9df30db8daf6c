"""Arrival neighbours: memories stored just before or after a strong hit share its context.

An agent stores a conversation turn by turn and a working session note by note. The answer to a
question is often the turn *next to* the one that names the question's subject ("Did you go?" —
"Yes, last Sunday"), which shares none of its words and little of its meaning. So the best
candidates of a search (the seeds) pass a share of their fused score to the memories stored right
next to them in the same namespace: ``scoring.neighbour_weight`` × the seed's score ÷ the distance
(1 for the adjacent memory, 2 for the one after, up to ``search.neighbour_window``). A neighbour
the indexes did not find becomes a candidate this way.

Only memories of one stretch of work are neighbours: no more than
``search.neighbour_max_gap_minutes`` apart, and in the same session and conversation when both
carry those ids. Memories stored in one import keep their order (ids are monotonic there).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from psycopg import AsyncConnection

from exocortex.core.indexes.base import IndexFilter

Row = dict[str, Any]

# Either side of each seed, nearest first; same-session and gap rules applied in SQL. The
# partial index ix_memories_namespace_root_order makes each side one short index scan.
_NEIGHBOURS_SQL = """
SELECT s.id AS seed, n.id, n.side, n.created_at, n.seq
  FROM memories s
 CROSS JOIN LATERAL (
    (SELECT m.id, -1 AS side, m.created_at,
            row_number() OVER (ORDER BY m.created_at DESC, m.id DESC) AS seq
       FROM memories m
      WHERE m.namespace = s.namespace AND m.parent_id IS NULL AND m.is_active
        AND (m.created_at, m.id) < (s.created_at, s.id)
        AND m.created_at >= s.created_at - %(gap)s
        AND (s.session_id IS NULL OR m.session_id IS NULL OR m.session_id = s.session_id)
        AND (s.conversation_id IS NULL OR m.conversation_id IS NULL
             OR m.conversation_id = s.conversation_id)
      ORDER BY m.created_at DESC, m.id DESC
      LIMIT %(window)s)
    UNION ALL
    (SELECT m.id, 1, m.created_at,
            row_number() OVER (ORDER BY m.created_at, m.id)
       FROM memories m
      WHERE m.namespace = s.namespace AND m.parent_id IS NULL AND m.is_active
        AND (m.created_at, m.id) > (s.created_at, s.id)
        AND m.created_at <= s.created_at + %(gap)s
        AND (s.session_id IS NULL OR m.session_id IS NULL OR m.session_id = s.session_id)
        AND (s.conversation_id IS NULL OR m.conversation_id IS NULL
             OR m.conversation_id = s.conversation_id)
      ORDER BY m.created_at, m.id
      LIMIT %(window)s)
 ) n
 WHERE s.id = ANY(%(seeds)s) AND s.namespace = %(ns)s
"""


def _float(s: Mapping[str, str], key: str, default: float) -> float:
    try:
        return float(s.get(key, default))
    except ValueError:
        return default


@dataclass(frozen=True)
class NeighbourSettings:
    weight: float = 0.3
    window: int = 2
    max_gap: timedelta = timedelta(minutes=30)

    @classmethod
    def from_settings(cls, s: Mapping[str, str]) -> NeighbourSettings:
        return cls(
            weight=max(0.0, _float(s, "scoring.neighbour_weight", 0.3)),
            window=max(0, min(10, int(_float(s, "search.neighbour_window", 2)))),
            max_gap=timedelta(minutes=max(0.0, _float(s, "search.neighbour_max_gap_minutes", 30))),
        )

    @property
    def enabled(self) -> bool:
        return self.weight > 0 and self.window > 0


async def around(
    conn: AsyncConnection[Row], namespace: str, seeds: Sequence[str], cfg: NeighbourSettings
) -> dict[str, list[tuple[str, int]]]:
    """Seed id → its neighbours as (id, distance), nearest first."""
    if not seeds or not cfg.enabled:
        return {}
    cur = await conn.execute(
        _NEIGHBOURS_SQL,
        {"seeds": list(seeds), "ns": namespace, "gap": cfg.max_gap, "window": cfg.window},
    )
    out: dict[str, list[tuple[str, int]]] = {}
    for row in await cur.fetchall():
        out.setdefault(row["seed"], []).append((row["id"], int(row["seq"])))
    for found in out.values():
        found.sort(key=lambda pair: pair[1])
    return out


def bonuses(
    found: Mapping[str, list[tuple[str, int]]], seed_scores: Mapping[str, float], weight: float
) -> dict[str, float]:
    """Neighbour id → the score its seeds pass on (weight × seed score ÷ distance, summed)."""
    out: dict[str, float] = {}
    for seed, neighbours in found.items():
        score = seed_scores.get(seed)
        if not score:
            continue
        for memory_id, distance in neighbours:
            out[memory_id] = out.get(memory_id, 0.0) + weight * score / max(1, distance)
    return out


def passes(row: Row, flt: IndexFilter, now: datetime) -> bool:
    """Whether a memory the indexes did not return meets the search's filters (the indexes
    apply them to their own hits)."""
    expires = row.get("expires_at")
    if not row["is_active"] or (expires is not None and expires <= now):
        return False
    if flt.tags_any and not set(flt.tags_any).intersection(row["tags"]):
        return False
    if flt.content_type is not None and row["content_type"] != flt.content_type:
        return False
    if flt.source is not None and row["source"] != flt.source:
        return False
    created = row["created_at"]
    if flt.created_after is not None and created < flt.created_after:
        return False
    if flt.created_before is not None and created >= flt.created_before:
        return False
    if flt.min_importance is not None and float(row["importance"]) < flt.min_importance:
        return False
    if flt.exclude_metadata and row["is_metadata"]:
        return False
    return row["id"] not in flt.exclude_ids
