"""Graph signals for search, read from Postgres: memory links and shared entities.

Graph proximity of a candidate (0..1, the maximum of):
* 1.0 when it mentions an entity named exactly like a word or 2-/3-word phrase of the query;
* 0.3 + 0.5 · strength when it is linked (either direction) to one of the top seeds;
* 0.5 when it shares an entity with one of the top seeds.
Only candidates the indexes found are scored: the graph reorders, it does not invent matches.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from psycopg import AsyncConnection

from exocortex.core.db.arrays import TextArray

Row = dict[str, Any]

_TOKEN = re.compile(r"[\w.+#-]+", re.UNICODE)

# Links are walked from the ~20 seeds (two index lookups each), never from the ~200 candidates:
# given both lists the planner picked the candidates' side (measured at 100k: 770 index pages
# a search instead of ~180). OFFSET 0 keeps the per-seed subquery from being flattened back
# into that plan.
_PROXIMITY_SQL = """
SELECT memory_id, max(score) AS score FROM (
    SELECT l.other AS memory_id, 0.3 + 0.5 * l.strength AS score
      FROM unnest(%(s)s::text[]) AS seed(id)
     CROSS JOIN LATERAL (
        SELECT x.source_id AS other, x.strength FROM memory_links x WHERE x.target_id = seed.id
        UNION ALL
        SELECT x.target_id, x.strength FROM memory_links x WHERE x.source_id = seed.id
        OFFSET 0
     ) l
     WHERE l.other = ANY(%(c)s) AND l.other <> seed.id
    UNION ALL
    SELECT me.memory_id, 0.5
      FROM memory_entities me
      JOIN memory_entities se ON se.entity_id = me.entity_id
     WHERE me.memory_id = ANY(%(c)s) AND se.memory_id = ANY(%(s)s)
       AND se.memory_id <> me.memory_id
    UNION ALL
    SELECT me.memory_id, 1.0
      FROM memory_entities me
      JOIN entities e ON e.id = me.entity_id
     WHERE me.memory_id = ANY(%(c)s) AND lower(e.name) = ANY(%(names)s)
       AND (%(ns)s::text IS NULL OR e.namespace = %(ns)s)
) g
GROUP BY memory_id
"""

# The strongest link per neighbour, both directions, excluding the results themselves.
_LINKED_SQL = """
SELECT x.other, x.from_id, x.link_type, x.strength FROM (
    SELECT DISTINCT ON (other) other, from_id, link_type, strength FROM (
        SELECT l.target_id AS other, l.source_id AS from_id, l.link_type, l.strength
          FROM memory_links l WHERE l.source_id = ANY(%(r)s)
        UNION ALL
        SELECT l.source_id, l.target_id, l.link_type, l.strength
          FROM memory_links l WHERE l.target_id = ANY(%(r)s)
    ) y
    WHERE other <> ALL(%(r)s)
    ORDER BY other, strength DESC
) x
JOIN memories m ON m.id = x.other
WHERE m.is_active AND (m.expires_at IS NULL OR m.expires_at > now())
ORDER BY x.strength DESC, x.other
LIMIT %(n)s
"""


@dataclass(frozen=True)
class Link:
    memory_id: str
    linked_from: str
    link_type: str
    strength: float


def entity_names(query: str) -> list[str]:
    """Words, 2-grams and 3-grams of the query (lower case): candidate entity names."""
    words = _TOKEN.findall(query.lower())
    names = {w for w in words if len(w) > 2}
    for n in (2, 3):
        names.update(" ".join(words[i : i + n]) for i in range(len(words) - n + 1))
    return sorted(names)


async def proximity(
    conn: AsyncConnection[Row],
    namespace: str | None,
    candidates: Sequence[str],
    seeds: Sequence[str],
    query: str,
) -> dict[str, float]:
    if not candidates:
        return {}
    cur = await conn.execute(
        _PROXIMITY_SQL,
        {
            "c": TextArray(candidates),
            "s": TextArray(seeds),
            "ns": namespace,
            "names": TextArray(entity_names(query)),
        },
    )
    return {row["memory_id"]: float(row["score"]) for row in await cur.fetchall()}


async def linked(conn: AsyncConnection[Row], result_ids: Sequence[str], limit: int) -> list[Link]:
    if not result_ids or limit <= 0:
        return []
    cur = await conn.execute(_LINKED_SQL, {"r": TextArray(result_ids), "n": limit})
    return [
        Link(
            memory_id=row["other"],
            linked_from=row["from_id"],
            link_type=row["link_type"],
            strength=float(row["strength"]),
        )
        for row in await cur.fetchall()
    ]


# Per memory: how many links it has (either direction) and its strongest link to an active goal
# (explicit progress 1.0, found by enrichment 0.7). Three index lookups a memory.
_EXTRAS_SQL = """
SELECT c.id,
       (SELECT count(*) FROM memory_links l WHERE l.source_id = c.id)
     + (SELECT count(*) FROM memory_links l WHERE l.target_id = c.id) AS links,
       coalesce((SELECT max(CASE gl.kind WHEN 'explicit' THEN %(explicit)s ELSE %(implicit)s END)
                   FROM goal_links gl JOIN goals g ON g.id = gl.goal_id AND g.status = 'active'
                  WHERE gl.memory_id = c.id), 0) AS goal
  FROM unnest(%(ids)s::text[]) AS c(id)
"""


@dataclass(frozen=True)
class Extras:
    links: int
    goal: float


async def extras(
    conn: AsyncConnection[Row], ids: Sequence[str], explicit: float, implicit: float
) -> dict[str, Extras]:
    """What the quality and goal-relevance signals need beyond a memory's row."""
    if not ids:
        return {}
    params = {"ids": TextArray(ids), "explicit": explicit, "implicit": implicit}
    cur = await conn.execute(_EXTRAS_SQL, params)
    return {r["id"]: Extras(int(r["links"]), float(r["goal"])) for r in await cur.fetchall()}


async def max_access(conn: AsyncConnection[Row], namespace: str | None) -> int:
    """The highest access count among the namespace's active memories, or every namespace's
    with None (chunks are never ranked on their own). Limited to roots, the join reads the
    narrow partial index on (namespace, id) instead of every wide row: 55 instead of 340 ms at
    100k memories."""
    sql = (
        "SELECT coalesce(max(u.access_count), 0) AS n FROM memory_usage u "
        "JOIN memories m ON m.id = u.memory_id "
        "WHERE m.is_active AND m.parent_id IS NULL"
    )
    if namespace is None:
        cur = await conn.execute(sql)
    else:
        cur = await conn.execute(sql + " AND m.namespace = %s", (namespace,))
    row = await cur.fetchone()
    return int(row["n"]) if row else 0
