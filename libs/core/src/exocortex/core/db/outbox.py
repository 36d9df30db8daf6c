"""The transactional outbox: domain events written in the same transaction as the change.

A relay reads unpublished rows in id order, publishes each to JetStream with the row id as
`Nats-Msg-Id` (so JetStream de-duplicates a re-publish after a crash), then marks them published.
`pg_notify` wakes the relay immediately instead of waiting for its next poll; the notification is
delivered only if the transaction commits, so the relay never wakes up for a rolled-back event.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import tuple_row
from psycopg.types.json import Jsonb

NOTIFY_CHANNEL = "exo_outbox"


@dataclass(frozen=True, slots=True)
class OutboxRow:
    id: int
    subject: str
    payload: bytes
    headers: dict[str, str]
    created_at: datetime


async def enqueue(
    conn: psycopg.AsyncConnection[Any],
    subject: str,
    payload: bytes,
    headers: dict[str, str] | None = None,
) -> int:
    """Record an event to publish and return its outbox id.

    The caller owns the transaction: the event becomes visible to the relay only when the
    caller's change commits, and disappears with it on rollback.
    """
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute(
            "INSERT INTO outbox (subject, payload, headers) VALUES (%s, %s, %s) RETURNING id",
            (subject, payload, Jsonb(headers or {})),
        )
        row = await cur.fetchone()
        await cur.execute("SELECT pg_notify(%s, '')", (NOTIFY_CHANNEL,))
    assert row is not None
    return int(row[0])


async def fetch_unpublished(conn: psycopg.AsyncConnection[Any], limit: int) -> list[OutboxRow]:
    """Lock and return up to `limit` unpublished events, oldest first.

    Must run inside a transaction that also marks them published: the row locks (SKIP LOCKED)
    let several relays run without publishing the same event twice at the same time.
    """
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute(
            """
            SELECT id, subject, payload, headers, created_at
            FROM outbox
            WHERE published_at IS NULL
            ORDER BY id
            LIMIT %s
            FOR UPDATE SKIP LOCKED
            """,
            (limit,),
        )
        rows = await cur.fetchall()
    return [
        OutboxRow(
            id=int(r[0]),
            subject=str(r[1]),
            payload=bytes(r[2]),
            headers={str(k): str(v) for k, v in (r[3] or {}).items()},
            created_at=r[4],
        )
        for r in rows
    ]


async def mark_published(conn: psycopg.AsyncConnection[Any], ids: Sequence[int]) -> None:
    """Mark events as published (after JetStream acknowledged them)."""
    if not ids:
        return
    await conn.execute(
        "UPDATE outbox SET published_at = now() WHERE id = ANY(%s) AND published_at IS NULL",
        (list(ids),),
    )


async def backlog(conn: psycopg.AsyncConnection[Any]) -> int:
    """Number of events not yet published (a health and metrics signal)."""
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute("SELECT count(*) FROM outbox WHERE published_at IS NULL")
        row = await cur.fetchone()
    return int(row[0]) if row else 0
