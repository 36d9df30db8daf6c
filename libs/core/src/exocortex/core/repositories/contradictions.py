"""Recording contradiction candidates: enrichment (at store time) and the maintenance job
(batch detection) write the same table, at the same time."""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection

from exocortex.core.domain.contradictions import Candidate
from exocortex.core.ids import new_id


async def add_candidate(
    conn: AsyncConnection[Any], a: str, b: str, candidate: Candidate
) -> str | None:
    """Record a pending candidate for the pair ``a``/``b``; its id, or None when the pair
    (either order, any status) is already known. The unique index on the unordered pair
    (migration 0015) makes a concurrent insert of the same pair wait for the first one and
    then add nothing, so a pair someone resolved never comes back as a new pending row."""
    contradiction_id = new_id()
    cur = await conn.execute(
        """
        INSERT INTO contradictions (id, memory_a_id, memory_b_id, description, kind, score)
        VALUES (%s, %s, %s, %s, %s, %s)
        ON CONFLICT DO NOTHING
        """,
        (contradiction_id, a, b, candidate.description, candidate.kind, candidate.score),
    )
    return contradiction_id if cur.rowcount else None
