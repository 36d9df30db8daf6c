"""Every query of search: candidate rows and their extras, graph proximity, linked context, the
namespace's highest access count, arrival neighbours and their vectors, and the entity names
query expansion adds. Functions of one connection: the search service decides which run at
once, each on its own connection."""

from __future__ import annotations

import operator
from collections.abc import Collection, Sequence
from typing import Any, NamedTuple

import numpy as np
from psycopg import AsyncConnection, AsyncCursor
from psycopg.rows import RowMaker

from exocortex.core import scope
from exocortex.core.db.arrays import TextArray
from exocortex.core.domain import token_vectors
from exocortex.core.domain.token_vectors import Packed
from exocortex.core.domain.vectors import Vector, from_bytes
from exocortex.core.records import MemoryRecord
from exocortex.core.repositories import memories
from exocortex.retrieval.search import expansion, hops
from exocortex.retrieval.search.graph import Extras, Link, entity_names
from exocortex.retrieval.search.neighbours import Found, NeighbourSettings, group, id_windows

Conn = AsyncConnection[Any]

# Links are walked from the ~20 seeds (two index lookups each), never from the ~200 candidates:
# given both lists the planner picked the candidates' side (measured at 100k: 770 index pages
# a search instead of ~180). OFFSET 0 keeps the per-seed subquery from being flattened back
# into that plan. Each seed's links, both directions, as ``l(other, strength)``:
_SEED_LINKS = """
     CROSS JOIN LATERAL (
        SELECT x.source_id AS other, x.strength FROM memory_links x WHERE x.target_id = seed.id
        UNION ALL
        SELECT x.target_id, x.strength FROM memory_links x WHERE x.source_id = seed.id
        OFFSET 0
     ) l
"""
_PROXIMITY_SQL = """
SELECT memory_id, max(score) AS score FROM (
    SELECT l.other AS memory_id, 0.3 + 0.5 * l.strength AS score
      FROM unnest(%(s)s::text[]) AS seed(id)
{seed_links}     WHERE l.other = ANY(%(c)s) AND l.other <> seed.id
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
""".replace("{seed_links}", _SEED_LINKS.lstrip("\n"))

# The strongest link per neighbour, both directions, excluding the results themselves.
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


# Per memory: how many links it has (either direction) and its strongest link to an active goal
# (explicit progress 1.0, found by enrichment 0.7). Three index lookups a memory, read in the
# same statement as the rows themselves: one round trip, one statement for Postgres to run.
_EXTRAS_COLUMNS = """
       (SELECT count(*) FROM memory_links l WHERE l.source_id = r.id)
     + (SELECT count(*) FROM memory_links l WHERE l.target_id = r.id) AS extra_links,
       coalesce((SELECT max(CASE gl.kind WHEN 'explicit' THEN %s ELSE %s END)
                   FROM goal_links gl JOIN goals g ON g.id = gl.goal_id AND g.status = 'active'
                  WHERE gl.memory_id = r.id), 0) AS extra_goal
"""


def _record_and_extras(cursor: AsyncCursor[Any]) -> RowMaker[tuple[MemoryRecord, Extras]]:
    """Rows of ``records`` as (the typed row, its extras): the last two columns are the
    extras."""
    names = [column.name for column in cursor.description or ()][:-2]
    fields = [name for name in _RECORD_FIELDS if name in names]
    if len(fields) == len(names) and fields == list(_RECORD_FIELDS[: len(fields)]):
        # Every column is one of the record's leading fields: the values are passed by
        # position, picked in field order, instead of through a dict of keywords a row (about
        # half the cost of building a record).
        pick = operator.itemgetter(*(names.index(name) for name in fields))

        def by_position(values: Sequence[Any]) -> tuple[MemoryRecord, Extras]:
            return MemoryRecord(*pick(values)), Extras(int(values[-2]), float(values[-1]))

        return by_position

    def make(values: Sequence[Any]) -> tuple[MemoryRecord, Extras]:
        record = MemoryRecord(**dict(zip(names, values, strict=False)))
        return record, Extras(int(values[-2]), float(values[-1]))

    return make


_RECORD_FIELDS = tuple(MemoryRecord.__dataclass_fields__)


async def records(
    conn: Conn, ids: Sequence[str], explicit: float, implicit: float
) -> dict[str, tuple[MemoryRecord, Extras]]:
    """The candidates' rows that exist within the caller's scope (the same statement as
    ``memories.get_records``), each with what the quality and goal-relevance signals need
    beyond it (``explicit`` and ``implicit``: the goal relevance of each kind of goal link)."""
    if not ids:
        return {}
    cond, params = scope.sql_filter()
    sql = (
        f"SELECT r.*, {_EXTRAS_COLUMNS} FROM ({memories.SELECT_MEMORY} "
        f"WHERE m.id = ANY(%s) AND {cond}) r"
    )
    async with conn.cursor(row_factory=_record_and_extras) as cur:
        await cur.execute(sql, (explicit, implicit, TextArray(ids), *params))
        return {record.id: (record, more) for record, more in await cur.fetchall()}


async def proximity(
    conn: Conn,
    namespace: str | None,
    candidates: Sequence[str],
    seeds: Sequence[str],
    query: str,
) -> dict[str, float]:
    """Graph proximity of each candidate to the seeds and the query (see ``graph``)."""
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


async def linked(conn: Conn, result_ids: Sequence[str], limit: int) -> list[Link]:
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


async def max_access(conn: Conn, namespace: str | None) -> int:
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


# Either side of each seed, within its arrival window, nearest first. Ids are ULIDs: their order
# is arrival order (an import hands out increasing ids), and a time bound is an id bound, so each
# side is one short range scan of the partial index ix_memories_namespace_root_id.
# The window is written into the statement, not bound: with LIMIT a parameter, the generic plan
# guessed 50 rows a side and read far more (50 ms at 100k), so Postgres planned the
# statement afresh on every search (0.7 ms). With a literal its one generic plan is the right
# one (a handful of statements, one per window setting). The neighbours' namespace is the seed's
# column for the same reason: the index bounds then never depend on a parameter.
_NEIGHBOURS_SQL = """
SELECT w.seed, s.version AS seed_version, n.id, n.version, n.side
  FROM unnest(%(seeds)s::text[], %(lows)s::text[], %(highs)s::text[]) AS w(seed, low, high)
  JOIN memories s ON s.id = w.seed AND (%(ns)s::text IS NULL OR s.namespace = %(ns)s)
 CROSS JOIN LATERAL (
    (SELECT m.id, m.version, -1 AS side
       FROM memories m
      WHERE m.namespace = s.namespace AND m.parent_id IS NULL AND m.is_active
        AND m.id < w.seed AND m.id >= w.low
        AND (s.session_id IS NULL OR m.session_id IS NULL OR m.session_id = s.session_id)
        AND (s.conversation_id IS NULL OR m.conversation_id IS NULL
             OR m.conversation_id = s.conversation_id)
        AND (s.source IS NULL OR m.source IS NULL OR m.source = s.source)
      ORDER BY m.id DESC
      LIMIT {window})
    UNION ALL
    (SELECT m.id, m.version, 1
       FROM memories m
      WHERE m.namespace = s.namespace AND m.parent_id IS NULL AND m.is_active
        AND m.id > w.seed AND m.id <= w.high
        AND (s.session_id IS NULL OR m.session_id IS NULL OR m.session_id = s.session_id)
        AND (s.conversation_id IS NULL OR m.conversation_id IS NULL
             OR m.conversation_id = s.conversation_id)
        AND (s.source IS NULL OR m.source IS NULL OR m.source = s.source)
      ORDER BY m.id
      LIMIT {window})
 ) n
"""


class Arrivals(NamedTuple):
    """What the neighbours statement reads: the seeds' arrival neighbours, and the row version
    of every seed and neighbour in them (their stored vectors are kept by id and version)."""

    found: Found
    versions: dict[str, int]


async def around(
    conn: Conn,
    namespace: str | None,
    seeds: Sequence[str],
    cfg: NeighbourSettings,
) -> Arrivals:
    """The seeds' arrival neighbours (see ``neighbours.Found``), and the version of each seed
    that has any and of each neighbour (what their stored vectors are kept by)."""
    windows = id_windows(seeds, cfg)
    if not windows or not cfg.enabled:
        return Arrivals({}, {})
    params: dict[str, Any] = {
        "seeds": TextArray(windows),
        "lows": TextArray(w[0] for w in windows.values()),
        "highs": TextArray(w[1] for w in windows.values()),
        "ns": namespace,
    }
    cur = await conn.execute(_NEIGHBOURS_SQL.format(window=int(cfg.window)), params)
    rows = await cur.fetchall()
    versions: dict[str, int] = {}
    for row in rows:
        versions[row["seed"]] = int(row["seed_version"])
        versions[row["id"]] = int(row["version"])
    return Arrivals(group((row["seed"], int(row["side"]), row["id"]) for row in rows), versions)


# The memories one hop from each seed (see ``hops``): linked to it (either direction, from the
# seed's side, as in _PROXIMITY_SQL), or naming an entity it names that at most MAX_MENTIONS
# memories name (counted with a LIMIT, so a name every memory carries costs one short index
# scan). Only live roots of the seed's own namespace, within the caller's scope, are returned:
# the rows every search answers from.
_HOPS_SQL = """
WITH seed AS (
    SELECT s.id, s.namespace FROM memories s
     WHERE s.id = ANY(%(seeds)s) AND (%(ns)s::text IS NULL OR s.namespace = %(ns)s)
), hop AS (
    SELECT seed.id AS seed, l.other AS id, 'link' AS kind, max(l.strength) AS value
      FROM seed
{seed_links}     GROUP BY 1, 2
    UNION ALL
    SELECT seed.id, me.memory_id, 'entity', sum(1.0 / (n.mentions - 1))
      FROM seed
      JOIN memory_entities se ON se.memory_id = seed.id
     CROSS JOIN LATERAL (
        SELECT count(*) AS mentions FROM (
            SELECT 1 FROM memory_entities c WHERE c.entity_id = se.entity_id
             LIMIT %(cap)s + 1
        ) c
     ) n
      JOIN memory_entities me ON me.entity_id = se.entity_id
     WHERE n.mentions BETWEEN 2 AND %(cap)s AND me.memory_id <> seed.id
     GROUP BY 1, 2
)
SELECT h.seed, h.id, h.kind, h.value
  FROM hop h
  JOIN seed ON seed.id = h.seed
  JOIN memories m ON m.id = h.id
 WHERE m.id <> h.seed AND m.namespace = seed.namespace AND m.parent_id IS NULL
   AND m.is_active AND (m.expires_at IS NULL OR m.expires_at > now()) AND {scope}
""".replace("{seed_links}", _SEED_LINKS.lstrip("\n"))


async def one_hop(conn: Conn, namespace: str | None, seeds: Sequence[str]) -> list[hops.Hop]:
    """The live memories one hop from the seeds, in the seeds' namespace and the caller's scope
    (see ``hops``)."""
    if not seeds:
        return []
    cond, params = scope.sql_filter()
    sql = _HOPS_SQL.format(scope=cond.replace("%s", "%(scope)s"))
    values: dict[str, Any] = {
        "seeds": TextArray(seeds),
        "ns": namespace,
        "cap": hops.MAX_MENTIONS,
    }
    if params:
        values["scope"] = params[0]
    cur = await conn.execute(sql, values)
    return [
        hops.Hop(row["seed"], row["id"], row["kind"], float(row["value"]))
        for row in await cur.fetchall()
    ]


_VECTORS_SQL = """
SELECT id, embedding FROM memories WHERE id = ANY(%(ids)s) AND embedding IS NOT NULL
"""


async def vectors(conn: Conn, found: Found) -> dict[str, Vector]:
    """Unit vectors of the seeds and their neighbours, for ``neighbours.coherence``."""
    ids = {i for seed, near in found.items() for i in (seed, *(n for n, _ in near))}
    if not ids:
        return {}
    cur = await conn.execute(_VECTORS_SQL, {"ids": TextArray(ids)})
    out: dict[str, Vector] = {}
    for row in await cur.fetchall():
        vector = from_bytes(row["embedding"])
        norm = float(np.linalg.norm(vector))
        if norm > 0:
            out[row["id"]] = vector / norm
    return out


async def _binary_rows(conn: Conn, sql: str, params: dict[str, object]) -> list[Any]:
    """The rows of ``sql`` in binary form: bytea columns (vectors, token vectors) arrive as
    their bytes instead of hex text twice their size that psycopg then decodes (measured on 20
    rows of token vectors: 0.82 -> 0.39 ms)."""
    async with conn.cursor(binary=True) as cur:
        await cur.execute(sql, params)
        return await cur.fetchall()


_VERSIONED_VECTORS_SQL = """
SELECT id, version, embedding FROM memories WHERE id = ANY(%(ids)s) AND embedding IS NOT NULL
"""


async def versioned_vectors(conn: Conn, ids: Collection[str]) -> dict[str, tuple[int, Vector]]:
    """Unit vectors of ``ids`` (those stored with one), each with the version of its row."""
    if not ids:
        return {}
    out: dict[str, tuple[int, Vector]] = {}
    for row in await _binary_rows(conn, _VERSIONED_VECTORS_SQL, {"ids": TextArray(ids)}):
        vector = from_bytes(row["embedding"])
        norm = float(np.linalg.norm(vector))
        if norm > 0:
            out[row["id"]] = (int(row["version"]), vector / norm)
    return out


_CONTEXT_SQL = """
SELECT id, context_embedding FROM memories
 WHERE id = ANY(%(ids)s) AND context_embedding IS NOT NULL
"""


async def context_vectors(conn: Conn, ids: Sequence[str]) -> dict[str, Vector]:
    """The contextual vectors of those of ``ids`` that have one (see ``search.context``)."""
    if not ids:
        return {}
    rows = await _binary_rows(conn, _CONTEXT_SQL, {"ids": TextArray(ids)})
    return {row["id"]: from_bytes(row["context_embedding"]) for row in rows}


_TOKENS_SQL = """
SELECT memory_id, dimensions, tokens FROM memory_tokens
 WHERE memory_id = ANY(%(ids)s) AND model = %(model)s
"""


async def stored_tokens(conn: Conn, ids: Sequence[str], model: str) -> dict[str, Packed]:
    """The token vectors stored with those of ``ids`` that have them for ``model`` (made with
    their vector; see ingest's ``store/tokens.py``). A memory whose content or model changed
    has none: the change deletes them."""
    if not ids or not model:
        return {}
    out: dict[str, Packed] = {}
    for row in await _binary_rows(conn, _TOKENS_SQL, {"ids": TextArray(ids), "model": model}):
        try:
            out[row["memory_id"]] = token_vectors.read(row["tokens"], row["dimensions"])
        except ValueError:  # damaged bytes: the memory is encoded as if it had none
            continue
    return out


_ENTITY_TERMS = """
WITH hit AS (
    SELECT e.id, e.name, e.aliases
    FROM entities e
    WHERE {scope}(lower(e.name) = ANY(%(phrases)s)
           OR EXISTS (SELECT 1 FROM jsonb_array_elements_text(e.aliases) a
                      WHERE lower(a) = ANY(%(phrases)s)))
    LIMIT 20
)
SELECT h.name,
       ARRAY(SELECT jsonb_array_elements_text(h.aliases)) AS aliases,
       ARRAY(
           SELECT other.name
           FROM entity_relationships r
           JOIN entities other ON other.id = CASE WHEN r.source_entity_id = h.id
                                                  THEN r.target_entity_id
                                                  ELSE r.source_entity_id END
           WHERE r.source_entity_id = h.id OR r.target_entity_id = h.id
           ORDER BY r.confidence DESC, other.name
           LIMIT %(related)s
       ) AS related
FROM hit h
ORDER BY h.name
"""


async def entity_terms(conn: Conn, namespace: str | None, query: str) -> list[str]:
    """Entity names, aliases and related names for the query's phrases, in the namespace or,
    with None, in every namespace (a separate statement, so each keeps its own plan)."""
    grams = expansion.phrases(query)
    if not grams:
        return []
    scope = "" if namespace is None else "e.namespace = %(namespace)s AND "
    cur = await conn.execute(
        _ENTITY_TERMS.format(scope=scope),
        {
            "namespace": namespace,
            "phrases": TextArray(grams),
            "related": expansion.RELATED_PER_ENTITY,
        },
    )
    out: list[str] = []
    for row in await cur.fetchall():
        out.extend([row["name"], *row["aliases"], *row["related"]])
    return out
