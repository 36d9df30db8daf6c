"""A memory stored as the child of another (the original's ``parent_id`` on a store): a part of
an existing memory of the same namespace, kept like a chunk. It is found through its parent,
follows it (tags, archive, restore, delete) and is not listed on its own; the parent's version
moves on, so its projection (children included) is refreshed.

The parent must be an active root memory of the caller's namespace: an unknown id, or one of
another namespace, is "not found" (a scoped key learns nothing more), a chunk or variant is
refused (children do not nest), and an archived memory is refused (its children would be
findable while it is not)."""

from __future__ import annotations

from dataclasses import replace

from exocortex.core.domain.vectors import Vector
from exocortex.core.errors import InvalidArgument, NotFound
from exocortex.core.ids import new_id
from exocortex.core.repositories import bulk, memories
from exocortex.ingest import events
from exocortex.ingest.store import repository
from exocortex.ingest.store.model import Row
from exocortex.ingest.store.prepare import Prepared
from exocortex.ingest.store.rows import memory_row

FIELD = "parent_id"


async def insert_child(
    conn: repository.Conn,
    parent_id: str,
    p: Prepared,
    vector: Vector | None,
    *,
    model: str,
    dim: int,
) -> Row:
    """Insert ``p`` as a child of ``parent_id`` (the caller's transaction); the child's row."""
    locked = await repository.lock_content(conn, parent_id)
    parent = await memories.get(conn, parent_id) if locked is not None else None
    if parent is None or parent["namespace"] != p.namespace:
        raise NotFound(f"memory {parent_id} not found in namespace {p.namespace!r}", field=FIELD)
    if parent["parent_id"] is not None:
        raise InvalidArgument(
            f"memory {parent_id} is itself part of memory {parent['parent_id']}: "
            "name that one as parent_id",
            field=FIELD,
        )
    if not parent["is_active"]:
        raise InvalidArgument(
            f"memory {parent_id} is archived: restore it before adding to it", field=FIELD
        )
    child = replace(
        memory_row(p, vector, model=model, dim=dim, memory_id=new_id()),
        parent_id=parent_id,
        # The parent's tags too: the indexes filter a child's hits by them.
        tags=list(dict.fromkeys([*parent["tags"], *p.tags])),
        # Enrichment works on memories; the parent carries this meaning.
        enrichment_status="skipped",
    )
    await bulk.insert_memories(conn, [child])
    await repository.touch(conn, parent_id)
    refreshed = await memories.get(conn, parent_id)
    assert refreshed is not None
    await events.emit(conn, refreshed, "updated", [child.id])
    row = await memories.get(conn, child.id)
    assert row is not None
    return row
