"""The transactional outbox: domain events written in the same transaction as the change.

A relay marks unpublished rows published in id order, publishes each to JetStream with the row
id as `Nats-Msg-Id` (so JetStream de-duplicates a re-publish after a crash), and commits once
JetStream has acknowledged them; a failure rolls the marks back.
`pg_notify` wakes the relay immediately instead of waiting for its next poll; the notification is
delivered only if the transaction commits, so the relay never wakes up for a rolled-back event.
"""

from __future__ import annotations

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


async def claim_unpublished(conn: psycopg.AsyncConnection[Any], limit: int) -> list[OutboxRow]:
    """Mark up to `limit` unpublished events published and return them, oldest first: one
    statement where a read and then a write took two round trips.

    Must run inside a transaction that commits only once JetStream has acknowledged them, and
    rolls back otherwise (they stay unpublished and are sent again). The row locks (SKIP LOCKED)
    let several relays run without publishing the same event twice at the same time.
    """
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute(
            """
            UPDATE outbox SET published_at = now()
            WHERE id IN (
                SELECT id FROM outbox
                WHERE published_at IS NULL
                ORDER BY id
                LIMIT %s
                FOR UPDATE SKIP LOCKED
            )
            RETURNING id, subject, payload, headers, created_at
            """,
            (limit,),
        )
        rows = await cur.fetchall()
    return sorted(
        (
            OutboxRow(
                id=int(r[0]),
                subject=str(r[1]),
                payload=bytes(r[2]),
                headers={str(k): str(v) for k, v in (r[3] or {}).items()},
                created_at=r[4],
            )
            for r in rows
        ),
        key=lambda row: row.id,
    )


async def backlog(conn: psycopg.AsyncConnection[Any]) -> int:
    """Number of events not yet published (a health and metrics signal)."""
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute("SELECT count(*) FROM outbox WHERE published_at IS NULL")
        row = await cur.fetchone()
    return int(row[0]) if row else 0
