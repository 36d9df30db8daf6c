"""Reads of the knowledge graph: entities, their memories and relationships, the whole graph and
its analysis (communities and bridges)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import networkx as nx  # type: ignore[import-untyped,unused-ignore]
import psycopg
from psycopg import sql
from psycopg_pool import AsyncConnectionPool

from exocortex.core import scope
from exocortex.core.errors import InvalidArgument, NotFound

Row = dict[str, Any]

MAX_ENTITIES = 1_000
MAX_GRAPH = 5_000
# Exact betweenness is O(V·E); beyond this many nodes it is estimated from sampled sources.
EXACT_BETWEENNESS_NODES = 1_000
BETWEENNESS_SAMPLES = 200
ENTITY_TYPES = ("person", "project", "technology", "organization", "concept")

_ENTITY_COLUMNS = """
    e.id, e.namespace, e.name, e.type, e.aliases, e.metadata, e.created_at, e.updated_at,
    coalesce(array(select t.tag from entity_tags t where t.entity_id = e.id order by t.tag),
             '{}'::text[]) AS tags,
    (SELECT count(*) FROM memory_entities me JOIN memories m ON m.id = me.memory_id
      WHERE me.entity_id = e.id AND m.is_active) AS memory_count
"""


@dataclass
class EntityFilter:
    namespace: str | None = None
    type: str | None = None
    tags: tuple[str, ...] = ()
    query: str | None = None
    limit: int = 200


@dataclass
class Relationship:
    entity: Row
    relationship: str
    direction: str
    context: str
    confidence: float
    memory_id: str | None


class EntityService:
    def __init__(self, pool: AsyncConnectionPool[psycopg.AsyncConnection[Row]]) -> None:
        self._pool = pool

    async def find(self, f: EntityFilter) -> list[Row]:
        if not 1 <= f.limit <= MAX_ENTITIES:
            raise InvalidArgument(f"limit must be between 1 and {MAX_ENTITIES}", field="limit")
        if f.type is not None and f.type not in ENTITY_TYPES:
            raise InvalidArgument(f"type must be one of {', '.join(ENTITY_TYPES)}", field="type")
        where: list[sql.Composable] = [sql.SQL("TRUE")]
        params: dict[str, Any] = {"limit": f.limit}
        if f.namespace is not None:
            where.append(sql.SQL("e.namespace = %(ns)s"))
            params["ns"] = f.namespace
        if f.type is not None:
            where.append(sql.SQL("e.type = %(type)s"))
            params["type"] = f.type
        if f.tags:
            where.append(
                sql.SQL(
                    "EXISTS (SELECT 1 FROM entity_tags t WHERE t.entity_id = e.id "
                    "AND t.tag = ANY(%(tags)s))"
                )
            )
            params["tags"] = list(f.tags)
        if f.query:
            where.append(
                sql.SQL(
                    "(lower(e.name) LIKE %(q)s OR EXISTS (SELECT 1 FROM "
                    "jsonb_array_elements_text(e.aliases) a WHERE lower(a) LIKE %(q)s))"
                )
            )
            params["q"] = f"%{f.query.lower()}%"
        stmt = sql.SQL(
            "SELECT {cols} FROM entities e WHERE {where} ORDER BY lower(e.name), e.id "
            "LIMIT %(limit)s"
        ).format(cols=sql.SQL(_ENTITY_COLUMNS), where=sql.SQL(" AND ").join(where))
        async with self._pool.connection() as conn:
            return await (await conn.execute(stmt, params)).fetchall()

    async def tags(self, namespace: str | None) -> list[str]:
        async with self._pool.connection() as conn:
            cur = await conn.execute(
                "SELECT DISTINCT t.tag FROM entity_tags t JOIN entities e ON e.id = t.entity_id "
                "WHERE %(ns)s::text IS NULL OR e.namespace = %(ns)s ORDER BY t.tag",
                {"ns": namespace},
            )
            return [r["tag"] for r in await cur.fetchall()]

    async def get(self, entity_id: str) -> Row:
        """The entity; NotFound also when it lies outside the caller's namespace scope."""
        cond, params = scope.sql_filter("e")
        async with self._pool.connection() as conn:
            cur = await conn.execute(
                f"SELECT {_ENTITY_COLUMNS} FROM entities e WHERE e.id = %s AND {cond}",
                (entity_id, *params),
            )
            row = await cur.fetchone()
        if row is None:
            raise NotFound(f"entity {entity_id} not found", field="id")
        return row

    async def memories(self, entity_id: str, limit: int) -> tuple[Row, list[tuple[str, float]]]:
        """The entity and its active memories' ids, most relevant first."""
        entity = await self.get(entity_id)
        # An entity's memories are in its namespace, unless a link crossed over: keep to the
        # caller's scope all the same.
        cond, params = scope.sql_filter("m")
        async with self._pool.connection() as conn:
            cur = await conn.execute(
                f"""
                SELECT me.memory_id, me.relevance FROM memory_entities me
                  JOIN memories m ON m.id = me.memory_id
                 WHERE me.entity_id = %s AND m.is_active AND {cond}
                 ORDER BY me.relevance DESC, m.created_at DESC, m.id
                 LIMIT %s
                """,
                (entity_id, *params, limit),
            )
            rows = await cur.fetchall()
        return entity, [(r["memory_id"], float(r["relevance"])) for r in rows]

    async def relationships(self, entity_id: str) -> list[Relationship]:
        await self.get(entity_id)
        async with self._pool.connection() as conn:
            cur = await conn.execute(
                """
                SELECT r.target_entity_id AS other, 'outgoing' AS direction, r.relationship,
                       r.context, r.confidence, r.memory_id
                  FROM entity_relationships r WHERE r.source_entity_id = %(id)s
                UNION ALL
                SELECT r.source_entity_id, 'incoming', r.relationship, r.context, r.confidence,
                       r.memory_id
                  FROM entity_relationships r WHERE r.target_entity_id = %(id)s
                ORDER BY confidence DESC, relationship, other
                """,
                {"id": entity_id},
            )
            rels = await cur.fetchall()
            cond, params = scope.sql_filter("e")
            others_cur = await conn.execute(
                f"SELECT {_ENTITY_COLUMNS} FROM entities e WHERE e.id = ANY(%s) AND {cond}",
                ([r["other"] for r in rels], *params),
            )
            others = {r["id"]: r for r in await others_cur.fetchall()}
        return [
            Relationship(
                entity=others[r["other"]],
                relationship=r["relationship"],
                direction=r["direction"],
                context=r["context"] or "",
                confidence=float(r["confidence"]),
                memory_id=r["memory_id"],
            )
            for r in rels
            if r["other"] in others
        ]

    async def graph(self, namespace: str | None, limit: int) -> tuple[list[Row], list[Row]]:
        if not 1 <= limit <= MAX_GRAPH:
            raise InvalidArgument(f"limit must be between 1 and {MAX_GRAPH}", field="limit")
        entities = await self.find(EntityFilter(namespace=namespace, limit=min(limit, 1_000)))
        if limit > 1_000:
            async with self._pool.connection() as conn:
                cur = await conn.execute(
                    f"SELECT {_ENTITY_COLUMNS} FROM entities e "
                    "WHERE %(ns)s::text IS NULL OR e.namespace = %(ns)s "
                    "ORDER BY lower(e.name), e.id LIMIT %(limit)s",
                    {"ns": namespace, "limit": limit},
                )
                entities = await cur.fetchall()
        ids = [e["id"] for e in entities]
        async with self._pool.connection() as conn:
            cur = await conn.execute(
                """
                SELECT source_entity_id AS source_id, target_entity_id AS target_id,
                       relationship, confidence
                  FROM entity_relationships
                 WHERE source_entity_id = ANY(%(ids)s) AND target_entity_id = ANY(%(ids)s)
                 ORDER BY source_entity_id, target_entity_id, relationship
                """,
                {"ids": ids},
            )
            edges = await cur.fetchall()
        return entities, edges

    async def analysis(self, namespace: str | None, limit: int) -> dict[str, Any]:
        entities, edges = await self.graph(namespace, MAX_GRAPH)
        return analyse(entities, edges, limit)


def analyse(entities: list[Row], edges: list[Row], limit: int) -> dict[str, Any]:
    """Stats, bridges (betweenness centrality) and communities (Louvain, fixed seed).

    Deterministic: nodes and edges are added in sorted order and the community method is seeded,
    so the same graph always gives the same answer. Large graphs get sampled betweenness."""
    g: Any = nx.Graph()
    names = {e["id"]: e for e in entities}
    g.add_nodes_from(sorted(names))
    g.add_edges_from(
        sorted(
            {
                tuple(sorted((x["source_id"], x["target_id"])))
                for x in edges
                if x["source_id"] != x["target_id"]
            }
        )
    )
    n = g.number_of_nodes()
    approximate = n > EXACT_BETWEENNESS_NODES
    betweenness: dict[str, float] = (
        nx.betweenness_centrality(g, k=BETWEENNESS_SAMPLES, seed=7, normalized=True)
        if approximate
        else nx.betweenness_centrality(g, normalized=True)
        if n
        else {}
    )
    centrality = sorted(
        (
            {
                "id": node,
                "name": names[node]["name"],
                "type": names[node]["type"],
                "betweenness": round(betweenness.get(node, 0.0), 6),
                "degree": int(g.degree[node]),
            }
            for node in g.nodes
        ),
        key=lambda c: (-c["betweenness"], -c["degree"], c["name"].lower(), c["id"]),
    )[:limit]
    communities = []
    if g.number_of_edges():
        found = nx.community.louvain_communities(g, seed=7)
        groups = sorted((sorted(c) for c in found if len(c) > 1), key=lambda c: (-len(c), c[0]))
        for index, members in enumerate(groups[:limit]):
            communities.append(
                {
                    "id": index,
                    "size": len(members),
                    "members": [
                        {"id": m, "name": names[m]["name"], "type": names[m]["type"]}
                        for m in members
                    ],
                }
            )
    components = nx.number_connected_components(g) if n else 0
    return {
        "stats": {
            "nodes": n,
            "edges": g.number_of_edges(),
            "components": components,
            "avg_degree": round(2 * g.number_of_edges() / n, 4) if n else 0.0,
            "betweenness": "approximate" if approximate else "exact",
        },
        "centrality": centrality,
        "bridges": [c for c in centrality if c["betweenness"] > 0],
        "communities": communities,
    }
