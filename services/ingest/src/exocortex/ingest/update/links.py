"""Links between memories, made or removed by a person or an agent."""

from __future__ import annotations

from exocortex.core.db.pool import Pool
from exocortex.core.errors import InvalidArgument, NotFound
from exocortex.core.repositories import links, memories
from exocortex.ingest.store import validation
from exocortex.ingest.store.model import Row


async def create_link(
    pool: Pool,
    source_id: str,
    target_id: str,
    *,
    link_type: str | None = None,
    strength: float | None = None,
) -> Row:
    """Link two memories (or change an existing link's type and strength)."""
    if source_id == target_id:
        raise InvalidArgument("a memory cannot link to itself", field="target_id")
    kind = validation.check_choice(
        link_type if link_type is not None else "related", links.LINK_TYPES, "link_type"
    )
    weight = validation.check_range(strength if strength is not None else 0.5, 0.0, 1.0, "strength")
    async with pool.connection() as conn, conn.transaction():
        found = await memories.get_many(conn, [source_id, target_id])
        for name, memory_id in (("source_id", source_id), ("target_id", target_id)):
            if memory_id not in found:
                raise NotFound(f"memory {memory_id} not found", field=name)
        return await links.upsert(conn, source_id, target_id, kind, weight)


async def delete_link(pool: Pool, source_id: str, target_id: str) -> bool:
    """Remove the link between two memories, whichever way it points. Both must exist within
    the caller's scope, as for making one: an end in another namespace reads as missing."""
    async with pool.connection() as conn, conn.transaction():
        found = await memories.get_many(conn, [source_id, target_id])
        for name, memory_id in (("source_id", source_id), ("target_id", target_id)):
            if memory_id not in found:
                raise NotFound(f"memory {memory_id} not found", field=name)
        return await links.delete(conn, source_id, target_id) > 0
