"""SQL of tag cleanup: usage counts, renaming a tag on memories (their chunks too), the alias
map setting."""

from __future__ import annotations

import json
from typing import Any

import psycopg

from exocortex.core.db.settings_store import load_settings, upsert_settings
from exocortex.maintenance.events import Changed

Conn = psycopg.AsyncConnection[dict[str, Any]]
ALIAS_KEY = "tags.alias_map"


async def counts(conn: Conn, limit: int) -> dict[str, int]:
    cur = await conn.execute(
        """
        SELECT t.tag, count(*)::int AS n FROM memory_tags t
          JOIN memories m ON m.id = t.memory_id
         WHERE m.is_active AND m.parent_id IS NULL
         GROUP BY t.tag ORDER BY n DESC, t.tag LIMIT %s
        """,
        (limit,),
    )
    return {r["tag"]: r["n"] for r in await cur.fetchall()}


async def merge(conn: Conn, from_tag: str, to_tag: str) -> list[Changed]:
    """Every memory tagged ``from_tag`` is tagged ``to_tag`` instead (a row that would repeat
    ``to_tag`` is dropped); returns the roots changed, at their new version."""
    cur = await conn.execute(
        """
        SELECT DISTINCT coalesce(m.parent_id, m.id) AS root FROM memory_tags t
          JOIN memories m ON m.id = t.memory_id WHERE t.tag = %s
        """,
        (from_tag,),
    )
    roots = [r["root"] for r in await cur.fetchall()]
    await conn.execute(
        """
        DELETE FROM memory_tags f WHERE f.tag = %s AND EXISTS
            (SELECT 1 FROM memory_tags t WHERE t.memory_id = f.memory_id AND t.tag = %s)
        """,
        (from_tag, to_tag),
    )
    await conn.execute("UPDATE memory_tags SET tag = %s WHERE tag = %s", (to_tag, from_tag))
    if not roots:
        return []
    cur = await conn.execute(
        """
        UPDATE memories SET updated_at = now(), version = version + 1
         WHERE id = ANY(%s) OR parent_id = ANY(%s)
        RETURNING id, version, namespace, parent_id
        """,
        (roots, roots),
    )
    return [
        Changed(r["id"], int(r["version"]), r["namespace"])
        for r in await cur.fetchall()
        if r["parent_id"] is None
    ]


async def add_alias(conn: Conn, from_tag: str, to_tag: str) -> None:
    settings = await load_settings(conn)
    try:
        aliases = json.loads(settings.get(ALIAS_KEY) or "{}")
    except ValueError:
        aliases = {}
    if not isinstance(aliases, dict):
        aliases = {}
    aliases[from_tag] = to_tag
    # An alias pointing at the merged spelling follows it (no chains).
    aliases = {k: (to_tag if v == from_tag else v) for k, v in aliases.items()}
    await upsert_settings(conn, {ALIAS_KEY: json.dumps(aliases, sort_keys=True)})
