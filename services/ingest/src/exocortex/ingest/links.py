"""Links between memories, made or removed by a person or an agent."""

from __future__ import annotations

from typing import Any

from exocortex.core.errors import InvalidArgument, NotFound
from exocortex.core.repositories import links, memories
from exocortex.ingest import validation
from exocortex.ingest.service import Pool
from exocortex.proto.v1 import ingest_pb2

Row = dict[str, Any]


async def create_link(pool: Pool, req: ingest_pb2.CreateLinkRequest) -> Row:
    if req.source_id == req.target_id:
        raise InvalidArgument("a memory cannot link to itself", field="target_id")
    link_type = validation.check_choice(
        req.link_type if req.HasField("link_type") else "related", links.LINK_TYPES, "link_type"
    )
    strength = validation.check_range(
        req.strength if req.HasField("strength") else 0.5, 0.0, 1.0, "strength"
    )
    async with pool.connection() as conn, conn.transaction():
        found = await memories.get_many(conn, [req.source_id, req.target_id])
        for name, memory_id in (("source_id", req.source_id), ("target_id", req.target_id)):
            if memory_id not in found:
                raise NotFound(f"memory {memory_id} not found", field=name)
        return await links.upsert(conn, req.source_id, req.target_id, link_type, strength)


async def delete_link(pool: Pool, req: ingest_pb2.DeleteLinkRequest) -> bool:
    async with pool.connection() as conn, conn.transaction():
        found = await memories.get_many(conn, [req.source_id])
        if req.source_id not in found:
            raise NotFound(f"memory {req.source_id} not found", field="source_id")
        return await links.delete(conn, req.source_id, req.target_id) > 0
