"""SQL of the regression check: baselines and runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import class_row

from exocortex.core.db.arrays import TextArray

Conn = psycopg.AsyncConnection[dict[str, Any]]


async def baselines(conn: Conn) -> dict[str, list[str]]:
    cur = await conn.execute("SELECT query, top_ids FROM retrieval_regression_baselines")
    return {r["query"]: list(r["top_ids"]) for r in await cur.fetchall()}


async def save_baseline(conn: Conn, query: str, namespace: str, ids: Sequence[str]) -> None:
    await conn.execute(
        """
        INSERT INTO retrieval_regression_baselines (query, namespace, top_ids)
        VALUES (%s, %s, %s)
        ON CONFLICT (query) DO UPDATE SET namespace = EXCLUDED.namespace,
               top_ids = EXCLUDED.top_ids, updated_at = now()
        """,
        (query, namespace, TextArray(ids)),
    )


async def reset_baselines(conn: Conn, queries: Sequence[str] | None) -> int:
    cur = await conn.execute(
        "DELETE FROM retrieval_regression_baselines WHERE %s::text[] IS NULL OR query = ANY(%s)",
        (
            TextArray(queries) if queries is not None else None,
            TextArray(queries) if queries is not None else None,
        ),
    )
    return cur.rowcount


@dataclass(frozen=True, slots=True)
class RunRow:
    run_group_id: str
    query: str | None
    baseline_ids: list[str] | None
    current_ids: list[str] | None
    overlap_at_10: float | None
    avg_rank_shift: float | None
    exact_order: bool | None
    alert: bool | None
    created_at: datetime


async def add_run_rows(conn: Conn, rows: Sequence[RunRow]) -> None:
    async with conn.cursor() as cur:
        await cur.executemany(
            """
            INSERT INTO retrieval_regression_runs (run_group_id, query, baseline_ids, current_ids,
                overlap_at_10, avg_rank_shift, exact_order, alert, created_at)
            VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
            """,
            [
                (
                    r.run_group_id,
                    r.query,
                    TextArray(r.baseline_ids or []),
                    TextArray(r.current_ids or []),
                    r.overlap_at_10,
                    r.avg_rank_shift,
                    r.exact_order,
                    r.alert,
                    r.created_at,
                )
                for r in rows
            ],
        )


async def run_rows(conn: Conn, run_group_id: str) -> list[RunRow]:
    async with conn.cursor(row_factory=class_row(RunRow)) as cur:
        await cur.execute(
            "SELECT run_group_id, query, baseline_ids, current_ids, overlap_at_10, "
            "avg_rank_shift, exact_order, alert, created_at FROM retrieval_regression_runs "
            "WHERE run_group_id = %s ORDER BY id",
            (run_group_id,),
        )
        return await cur.fetchall()


@dataclass(frozen=True, slots=True)
class RunSummary:
    run_id: str
    query_count: int
    alerts: int
    avg_overlap: float | None
    created_at: datetime


async def runs(conn: Conn, limit: int) -> list[RunSummary]:
    async with conn.cursor(row_factory=class_row(RunSummary)) as cur:
        await cur.execute(
            """
            SELECT run_group_id AS run_id, count(*)::int AS query_count,
                   count(*) FILTER (WHERE alert)::int AS alerts,
                   avg(overlap_at_10) AS avg_overlap, min(created_at) AS created_at
              FROM retrieval_regression_runs GROUP BY run_group_id
             ORDER BY min(created_at) DESC, run_group_id DESC LIMIT %s
            """,
            (limit,),
        )
        return await cur.fetchall()


async def latest_run_id(conn: Conn) -> str | None:
    cur = await conn.execute(
        "SELECT run_group_id FROM retrieval_regression_runs ORDER BY id DESC LIMIT 1"
    )
    row = await cur.fetchone()
    return None if row is None else str(row["run_group_id"])
