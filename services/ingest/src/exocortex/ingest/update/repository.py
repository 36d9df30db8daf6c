"""The SQL of memory updates: lock a memory, move its version (and its chunks') with the columns
that change, replace its tags, delete it, and the namespace lookups of the admin service."""

from __future__ import annotations

from typing import Any

from psycopg.types.json import Jsonb

from exocortex.core.db.pool import DictConnection
from exocortex.core.errors import NotFound
from exocortex.core.repositories import memories
from exocortex.ingest.store.model import Row

Conn = DictConnection

# Columns a chunk copies from its parent.
_CHUNK_COPIED = (
    "namespace", "content_type", "importance", "valence", "is_active", "is_metadata",
    "expires_at", "source_uri",
)  # fmt: skip
# Lookups by id name these tables only (constants, never input).
_NAMESPACED_TABLES = ("memories", "goals", "entities")


async def lock(conn: Conn, memory_id: str) -> Row:
    """Lock the memory's row for the transaction and read it; NotFound when it is gone."""
    cur = await conn.execute("SELECT id FROM memories WHERE id = %s FOR UPDATE", (memory_id,))
    if await cur.fetchone() is None:
        raise NotFound(f"memory {memory_id} not found", field="id")
    row = await memories.get(conn, memory_id)
    assert row is not None
    return row


async def bump(conn: Conn, memory_id: str, columns: dict[str, Any]) -> None:
    """Apply column changes and move the version on, for the memory and (copied columns and
    version) for its chunks, so chunk projections follow their parent."""
    values = [Jsonb(v) if name == "metadata" else v for name, v in columns.items()]
    sets = ", ".join(f"{name} = %s" for name in columns)
    await conn.execute(
        f"UPDATE memories SET {sets}{', ' if sets else ''}updated_at = now(), "
        "version = version + 1 WHERE id = %s",
        (*values, memory_id),
    )
    copied = {k: v for k, v in columns.items() if k in _CHUNK_COPIED}
    chunk_sets = "".join(f"{name} = %s, " for name in copied)
    await conn.execute(
        f"UPDATE memories SET {chunk_sets}updated_at = now(), version = version + 1 "
        "WHERE parent_id = %s",
        (*copied.values(), memory_id),
    )


async def replace_tags(conn: Conn, memory_id: str, tags: list[str]) -> None:
    """The memory's tags, copied to its chunks (chunks are filtered by tag in the indexes)."""
    await conn.execute(
        "DELETE FROM memory_tags WHERE memory_id = %s "
        "OR memory_id IN (SELECT id FROM memories WHERE parent_id = %s)",
        (memory_id, memory_id),
    )
    if tags:
        async with conn.cursor() as cur:
            await cur.executemany(
                "INSERT INTO memory_tags (memory_id, tag) "
                "SELECT id, %s FROM memories WHERE id = %s OR parent_id = %s "
                "ON CONFLICT DO NOTHING",
                [(tag, memory_id, memory_id) for tag in tags],
            )


async def delete(conn: Conn, memory_id: str) -> None:
    """Hard delete; chunks and everything keyed to the memory go with it (foreign keys)."""
    await conn.execute("DELETE FROM memories WHERE id = %s", (memory_id,))


async def namespaces_by_id(conn: Conn, table: str, ids: list[str]) -> dict[str, str]:
    """The namespace of each id that exists in ``table`` (memories, goals or entities)."""
    if table not in _NAMESPACED_TABLES:
        raise ValueError(f"no namespace lookup for table {table}")
    cur = await conn.execute(f"SELECT id, namespace FROM {table} WHERE id = ANY(%s)", (ids,))
    return {r["id"]: r["namespace"] for r in await cur.fetchall()}
