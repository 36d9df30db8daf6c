"""SQL of contradictions: candidates to compare, known pairs, recording and reading them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import class_row

from exocortex.core import scope
from exocortex.core.db.arrays import TextArray

Conn = psycopg.AsyncConnection[dict[str, Any]]

PREVIEW_CHARS = 200


@dataclass(frozen=True, slots=True)
class Subject:
    id: str
    content: str
    embedding: bytes


async def subjects(conn: Conn, namespace: str) -> list[Subject]:
    async with conn.cursor(row_factory=class_row(Subject)) as cur:
        await cur.execute(
            """
            SELECT id, content, embedding FROM memories
             WHERE namespace = %s AND is_active AND parent_id IS NULL
               AND embedding IS NOT NULL AND NOT is_metadata
             ORDER BY created_at DESC, id DESC
            """,
            (namespace,),
        )
        return await cur.fetchall()


async def known_pairs(conn: Conn, ids: Sequence[str]) -> set[frozenset[str]]:
    cur = await conn.execute(
        "SELECT memory_a_id, memory_b_id FROM contradictions "
        "WHERE memory_a_id = ANY(%s) OR memory_b_id = ANY(%s)",
        (TextArray(ids), TextArray(ids)),
    )
    return {frozenset((r["memory_a_id"], r["memory_b_id"])) for r in await cur.fetchall()}


@dataclass(frozen=True, slots=True)
class ContradictionRow:
    id: str
    namespace: str
    memory_a_id: str
    memory_b_id: str
    memory_a_preview: str
    memory_b_preview: str
    memory_a_active: bool
    memory_b_active: bool
    description: str
    kind: str | None
    score: float | None
    status: str
    resolution: str | None
    created_at: datetime
    updated_at: datetime


_SELECT = f"""
SELECT c.id, a.namespace, c.memory_a_id, c.memory_b_id,
       left(a.content, {PREVIEW_CHARS}) AS memory_a_preview,
       left(b.content, {PREVIEW_CHARS}) AS memory_b_preview,
       a.is_active AS memory_a_active, b.is_active AS memory_b_active,
       c.description, c.kind, c.score, c.status, c.resolution, c.created_at, c.updated_at
  FROM contradictions c
  JOIN memories a ON a.id = c.memory_a_id
  JOIN memories b ON b.id = c.memory_b_id
"""


async def list_(
    conn: Conn, namespace: str | None, status: str | None, limit: int
) -> list[ContradictionRow]:
    """Newest first: those of ``namespace`` (its ``memory_a`` side; None: every namespace)
    whose two memories both lie within the caller's scope."""
    scoped, scope_params = scope.sql_filter("a", "b")
    async with conn.cursor(row_factory=class_row(ContradictionRow)) as cur:
        await cur.execute(
            _SELECT
            + f"""
             WHERE (%s::text IS NULL OR a.namespace = %s) AND {scoped}
               AND (%s::text IS NULL OR c.status = %s)
             ORDER BY c.created_at DESC, c.id DESC LIMIT %s
            """,
            (namespace, namespace, *scope_params, status, status, limit),
        )
        return await cur.fetchall()


async def get(conn: Conn, contradiction_id: str, *, lock: bool = False) -> ContradictionRow | None:
    """The contradiction, or None also when either of its memories lies outside the caller's
    scope: a pair with one end elsewhere is neither shown nor resolved (resolving archives one
    side)."""
    scoped, scope_params = scope.sql_filter("a", "b")
    async with conn.cursor(row_factory=class_row(ContradictionRow)) as cur:
        await cur.execute(
            _SELECT + f" WHERE c.id = %s AND {scoped}" + (" FOR UPDATE OF c" if lock else ""),
            (contradiction_id, *scope_params),
        )
        return await cur.fetchone()


async def set_status(
    conn: Conn, contradiction_id: str, status: str, resolution: str | None
) -> None:
    await conn.execute(
        "UPDATE contradictions SET status = %s, resolution = coalesce(%s, resolution), "
        "updated_at = now() WHERE id = %s",
        (status, resolution, contradiction_id),
    )
