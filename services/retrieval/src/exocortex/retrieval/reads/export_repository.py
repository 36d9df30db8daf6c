"""The backup's queries: every table section in restore order, read with server-side cursors
inside one read-only snapshot, so 100k memories stream in batches and memory stays bounded."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from exocortex.core.db.pool import Pool
from exocortex.core.db.settings_store import load_settings
from exocortex.core.repositories.memories import SELECT_MEMORY, SELECT_MEMORY_WITH_EMBEDDING

# (section, query without the namespace filter, query with it). Ordered so a restore can insert
# in this order without breaking a reference. With a namespace, a row that joins two objects
# (a link, a mention, a relationship, a goal link, a contradiction, a consolidation) is exported
# only when every end is in it: the backup of one namespace holds nothing of another.
_SECTIONS: tuple[tuple[str, str, str], ...] = (
    (
        "memories",
        f"{SELECT_MEMORY} ORDER BY m.created_at, m.id",
        f"{SELECT_MEMORY} WHERE m.namespace = %(ns)s ORDER BY m.created_at, m.id",
    ),
    (
        "memory_links",
        "SELECT l.* FROM memory_links l ORDER BY l.created_at, l.source_id, l.target_id",
        "SELECT l.* FROM memory_links l JOIN memories s ON s.id = l.source_id "
        "JOIN memories t ON t.id = l.target_id WHERE s.namespace = %(ns)s "
        "AND t.namespace = %(ns)s ORDER BY l.created_at, l.source_id, l.target_id",
    ),
    (
        "entities",
        "SELECT e.*, coalesce(array(SELECT t.tag FROM entity_tags t WHERE t.entity_id = e.id "
        "ORDER BY t.tag), '{}'::text[]) AS tags FROM entities e ORDER BY e.created_at, e.id",
        "SELECT e.*, coalesce(array(SELECT t.tag FROM entity_tags t WHERE t.entity_id = e.id "
        "ORDER BY t.tag), '{}'::text[]) AS tags FROM entities e WHERE e.namespace = %(ns)s "
        "ORDER BY e.created_at, e.id",
    ),
    (
        "memory_entities",
        "SELECT me.* FROM memory_entities me ORDER BY me.memory_id, me.entity_id",
        "SELECT me.* FROM memory_entities me JOIN entities e ON e.id = me.entity_id "
        "JOIN memories m ON m.id = me.memory_id WHERE e.namespace = %(ns)s "
        "AND m.namespace = %(ns)s ORDER BY me.memory_id, me.entity_id",
    ),
    (
        "entity_relationships",
        "SELECT r.* FROM entity_relationships r ORDER BY r.created_at, r.id",
        "SELECT r.* FROM entity_relationships r JOIN entities s ON s.id = r.source_entity_id "
        "JOIN entities t ON t.id = r.target_entity_id WHERE s.namespace = %(ns)s "
        "AND t.namespace = %(ns)s AND NOT EXISTS (SELECT 1 FROM memories m "
        "WHERE m.id = r.memory_id AND m.namespace <> %(ns)s) ORDER BY r.created_at, r.id",
    ),
    (
        "goals",
        "SELECT id, namespace, title, description, status, priority, deadline, metadata, "
        "completed_at, created_at, updated_at FROM goals ORDER BY created_at, id",
        "SELECT id, namespace, title, description, status, priority, deadline, metadata, "
        "completed_at, created_at, updated_at FROM goals WHERE namespace = %(ns)s "
        "ORDER BY created_at, id",
    ),
    (
        "goal_milestones",
        "SELECT ms.* FROM goal_milestones ms ORDER BY ms.goal_id, ms.sort_order, ms.id",
        "SELECT ms.* FROM goal_milestones ms JOIN goals g ON g.id = ms.goal_id "
        "WHERE g.namespace = %(ns)s ORDER BY ms.goal_id, ms.sort_order, ms.id",
    ),
    (
        "goal_links",
        "SELECT gl.* FROM goal_links gl ORDER BY gl.goal_id, gl.memory_id",
        "SELECT gl.* FROM goal_links gl JOIN goals g ON g.id = gl.goal_id "
        "JOIN memories m ON m.id = gl.memory_id WHERE g.namespace = %(ns)s "
        "AND m.namespace = %(ns)s ORDER BY gl.goal_id, gl.memory_id",
    ),
    (
        "contradictions",
        "SELECT c.* FROM contradictions c ORDER BY c.created_at, c.id",
        "SELECT c.* FROM contradictions c JOIN memories a ON a.id = c.memory_a_id "
        "JOIN memories b ON b.id = c.memory_b_id WHERE a.namespace = %(ns)s "
        "AND b.namespace = %(ns)s ORDER BY c.created_at, c.id",
    ),
    (
        "consolidations",
        "SELECT c.* FROM consolidations c ORDER BY c.created_at, c.id",
        "SELECT c.* FROM consolidations c JOIN memories m ON m.id = c.summary_id "
        "WHERE m.namespace = %(ns)s AND NOT EXISTS (SELECT 1 FROM memories x "
        "WHERE x.id = ANY(c.source_ids) AND x.namespace <> %(ns)s) "
        "ORDER BY c.created_at, c.id",
    ),
)
SECTIONS = (*(name for name, _, _ in _SECTIONS), "settings")


# The memories section with each row's embedding (bytes), for an export that keeps them.
_MEMORIES_WITH_EMBEDDING = (
    f"{SELECT_MEMORY_WITH_EMBEDDING} ORDER BY m.created_at, m.id",
    f"{SELECT_MEMORY_WITH_EMBEDDING} WHERE m.namespace = %(ns)s ORDER BY m.created_at, m.id",
)


async def stream(
    pool: Pool, namespace: str, batch_size: int, *, embeddings: bool = False
) -> AsyncIterator[tuple[str, list[dict[str, Any]]]]:
    """(section, rows) in section order, every section at least once (maybe empty), then
    ``("settings", [settings])`` read in the same snapshot. Empty ``namespace``: every one."""
    async with pool.connection() as conn, conn.transaction():
        # One snapshot for the whole backup, so sections agree with each other.
        await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        for index, (section, everything, scoped) in enumerate(_SECTIONS):
            if section == "memories" and embeddings:
                everything, scoped = _MEMORIES_WITH_EMBEDDING
            query = scoped if namespace else everything
            sent = False
            async with conn.cursor(name=f"export_{index}") as cur:
                await cur.execute(query, {"ns": namespace} if namespace else None)
                while rows := await cur.fetchmany(batch_size):
                    sent = True
                    yield section, rows
            if not sent:
                yield section, []
        settings = await load_settings(conn)
    yield "settings", [settings]
