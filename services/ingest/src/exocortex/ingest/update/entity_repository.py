"""The SQL of entity edits. An entity reached by id outside the caller's namespace scope reads
as missing; a name clash within a namespace comes out as ``UniqueClash`` (through
``store.repository.transaction``)."""

from __future__ import annotations

import json
from typing import Any

from exocortex.core import scope
from exocortex.core.db.pool import DictConnection
from exocortex.ingest.store.model import Row

Conn = DictConnection

_SELECT = (
    "SELECT e.id, e.namespace, e.name, e.type, e.aliases, e.metadata, e.created_at, "
    "e.updated_at, coalesce(array(SELECT t.tag FROM entity_tags t WHERE t.entity_id = e.id "
    "ORDER BY t.tag), '{}'::text[]) AS tags FROM entities e"
)


async def insert(
    conn: Conn,
    entity_id: str,
    *,
    namespace: str,
    name: str,
    kind: str,
    aliases: list[str],
    metadata: dict[str, Any],
) -> None:
    await conn.execute(
        "INSERT INTO entities (id, namespace, name, type, aliases, metadata) "
        "VALUES (%s, %s, %s, %s, %s, %s)",
        (entity_id, namespace, name, kind, json.dumps(aliases), json.dumps(metadata)),
    )


async def update(
    conn: Conn,
    entity_id: str,
    *,
    name: str | None = None,
    kind: str | None = None,
    aliases: list[str] | None = None,
    metadata: dict[str, Any] | None = None,
) -> bool:
    """Set what is given (None: unchanged) and move ``updated_at``; False when there is no
    such entity in the caller's scope."""
    sets: list[str] = []
    params: list[Any] = []
    for column, value in (
        ("name", name),
        ("type", kind),
        ("aliases", None if aliases is None else json.dumps(aliases)),
        ("metadata", None if metadata is None else json.dumps(metadata)),
    ):
        if value is not None:
            sets.append(f"{column} = %s")
            params.append(value)
    sets.append("updated_at = now()")
    cond, scoped = scope.sql_filter("entities")
    cur = await conn.execute(
        f"UPDATE entities SET {', '.join(sets)} WHERE id = %s AND {cond}",
        (*params, entity_id, *scoped),
    )
    return cur.rowcount > 0


async def delete(conn: Conn, entity_id: str) -> bool:
    cond, scoped = scope.sql_filter("entities")
    cur = await conn.execute(f"DELETE FROM entities WHERE id = %s AND {cond}", (entity_id, *scoped))
    return cur.rowcount > 0


async def get(conn: Conn, entity_id: str) -> Row | None:
    cond, scoped = scope.sql_filter("e")
    cur = await conn.execute(f"{_SELECT} WHERE e.id = %s AND {cond}", (entity_id, *scoped))
    return await cur.fetchone()


async def replace_tags(conn: Conn, entity_id: str, tags: list[str]) -> None:
    await conn.execute("DELETE FROM entity_tags WHERE entity_id = %s", (entity_id,))
    if tags:
        async with conn.cursor() as cur:
            await cur.executemany(
                "INSERT INTO entity_tags (entity_id, tag) VALUES (%s, %s)",
                [(entity_id, tag) for tag in tags],
            )
