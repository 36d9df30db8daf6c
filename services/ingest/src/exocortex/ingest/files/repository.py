"""The SQL of markdown ingest: the sections a document already has in the store."""

from __future__ import annotations

from exocortex.core.db.pool import DictConnection
from exocortex.ingest.store.model import Row


async def active_sections(conn: DictConnection, namespace: str, source_uri: str) -> list[Row]:
    """The id and content hash of each active memory stored from the document."""
    cur = await conn.execute(
        "SELECT id, content_hash FROM memories WHERE namespace = %s AND source_uri = %s "
        "AND is_active AND parent_id IS NULL",
        (namespace, source_uri),
    )
    return await cur.fetchall()
