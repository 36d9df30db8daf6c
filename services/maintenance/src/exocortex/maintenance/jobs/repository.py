"""SQL of the job framework: `job_runs` rows, per-job advisory locks, the audit trail and the
namespaces a job can work over."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from exocortex.core.db.arrays import TextArray

Conn = psycopg.AsyncConnection[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class JobRunRecord:
    id: int
    job: str
    status: str
    dry_run: bool
    params: dict[str, Any]
    report: dict[str, Any] | None
    progress: dict[str, Any]
    error: str | None
    started_at: datetime
    finished_at: datetime | None
    namespace: str | None
    trigger: str


_COLUMNS = (
    "id, job, status, dry_run, params, report, progress, error, started_at, finished_at, "
    "namespace, trigger"
)


def lock_key(job: str) -> str:
    """The advisory-lock name of a job (hashed to a bigint by Postgres)."""
    return f"exocortex.maintenance.job:{job}"


# The connection that holds a job's advisory lock for the whole run: its own, outside the pool,
# so the lock lives exactly as long as the run (and dies with the process).
LockConn = psycopg.AsyncConnection[Any]


async def open_lock_connection(database_url: str) -> LockConn:
    return await psycopg.AsyncConnection.connect(database_url, autocommit=True)


async def try_lock(conn: LockConn, job: str) -> bool:
    """A session-level advisory lock, held by ``conn`` until :func:`unlock` or until the
    connection ends (a crashed process therefore never leaves a job locked)."""
    cur = await conn.execute(
        "SELECT pg_try_advisory_lock(hashtextextended(%s, 0)) AS got", (lock_key(job),)
    )
    row = await cur.fetchone()
    assert row is not None
    return bool(row[0] if isinstance(row, tuple) else row["got"])


async def unlock(conn: LockConn, job: str) -> None:
    await conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (lock_key(job),))


def preview_lock_key(job: str) -> str:
    """The advisory-lock name of a job's dry runs: another name than :func:`lock_key`, so a
    preview never holds, nor waits for, the lock a real run needs."""
    return f"exocortex.maintenance.preview:{job}"


async def lock_preview(conn: LockConn, job: str) -> None:
    """A *shared* lock on the job's preview name, held by ``conn`` for the dry run: any number
    of previews hold it at once. It only says that a preview is alive (see
    :func:`try_lock_previews`); it waits at most for another process's sweep."""
    await conn.execute(
        "SELECT pg_advisory_lock_shared(hashtextextended(%s, 0))", (preview_lock_key(job),)
    )


async def unlock_preview(conn: LockConn, job: str) -> None:
    await conn.execute(
        "SELECT pg_advisory_unlock_shared(hashtextextended(%s, 0))", (preview_lock_key(job),)
    )


async def try_lock_previews(conn: LockConn, job: str) -> bool:
    """The preview name locked exclusively: true only when no preview of ``job`` is alive in any
    process, so every dry run still marked running was abandoned. Release at once with
    :func:`unlock_previews`."""
    cur = await conn.execute(
        "SELECT pg_try_advisory_lock(hashtextextended(%s, 0)) AS got", (preview_lock_key(job),)
    )
    row = await cur.fetchone()
    assert row is not None
    return bool(row[0] if isinstance(row, tuple) else row["got"])


async def unlock_previews(conn: LockConn, job: str) -> None:
    await conn.execute(
        "SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (preview_lock_key(job),)
    )


async def start_run(
    conn: Conn,
    job: str,
    *,
    dry_run: bool,
    params: Mapping[str, Any],
    namespace: str | None,
    trigger: str,
) -> JobRunRecord:
    async with conn.cursor(row_factory=class_row(JobRunRecord)) as cur:
        await cur.execute(
            f"""
            INSERT INTO job_runs (job, started_at, status, dry_run, params, namespace, trigger)
            VALUES (%s, now(), 'running', %s, %s, %s, %s)
            RETURNING {_COLUMNS}
            """,
            (job, dry_run, Jsonb(dict(params)), namespace, trigger),
        )
        row = await cur.fetchone()
    assert row is not None
    return row


async def set_progress(conn: Conn, run_id: int, progress: Mapping[str, Any]) -> None:
    await conn.execute(
        "UPDATE job_runs SET progress = %s WHERE id = %s", (Jsonb(dict(progress)), run_id)
    )


async def finish_run(
    conn: Conn, run_id: int, *, report: Mapping[str, Any] | None, error: str | None
) -> None:
    await conn.execute(
        """
        UPDATE job_runs SET finished_at = now(), status = %s, report = %s, error = %s
         WHERE id = %s
        """,
        (
            "failed" if error is not None else "succeeded",
            Jsonb(dict(report)) if report is not None else None,
            error,
            run_id,
        ),
    )


async def fail_abandoned(conn: Conn, jobs: Sequence[str], *, dry_run: bool = False) -> int:
    """Runs (real ones, or dry runs with ``dry_run``) left 'running' by a process that died:
    their lock is gone with its connection, so a real run is abandoned exactly when its job's
    lock is free, and a dry run when no process holds the job's preview lock. Called with that
    lock held (exclusively)."""
    cur = await conn.execute(
        """
        UPDATE job_runs SET status = 'failed', finished_at = now(),
               error = 'the maintenance process running it stopped before it finished'
         WHERE status = 'running' AND job = ANY(%s) AND dry_run = %s
        """,
        (TextArray(jobs), dry_run),
    )
    return cur.rowcount


async def lock_fire(conn: Conn, job: str) -> None:
    """Until the transaction ends: replicas firing the same schedule check "started since the
    fire time" and record their run one after the other. Previews hold no job lock, so for a
    scheduled preview this is what keeps a fire to one run."""
    await conn.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
        (f"exocortex.maintenance.fire:{job}",),
    )


async def started_since(
    conn: Conn, job: str, since: datetime, *, dry_run: bool, trigger: str
) -> bool:
    """Whether a run that stands for a scheduled fire started at or after ``since``: a real
    run, or, for a fire that is itself a dry run, a dry run with the same trigger (another
    replica's). A preview someone asked for never counts, so asking for previews cannot keep
    the scheduled run from happening."""
    cur = await conn.execute(
        """
        SELECT 1 FROM job_runs
         WHERE job = %s AND started_at >= %s AND (NOT dry_run OR (%s AND trigger = %s))
         LIMIT 1
        """,
        (job, since, dry_run, trigger),
    )
    return await cur.fetchone() is not None


async def get_run(conn: Conn, run_id: int) -> JobRunRecord | None:
    async with conn.cursor(row_factory=class_row(JobRunRecord)) as cur:
        await cur.execute(f"SELECT {_COLUMNS} FROM job_runs WHERE id = %s", (run_id,))
        return await cur.fetchone()


async def running_run(conn: Conn, job: str) -> JobRunRecord | None:
    """The job's real run going on (dry runs hold no job lock, so they are never the one)."""
    async with conn.cursor(row_factory=class_row(JobRunRecord)) as cur:
        await cur.execute(
            f"SELECT {_COLUMNS} FROM job_runs WHERE job = %s AND status = 'running' "
            "AND NOT dry_run ORDER BY id DESC LIMIT 1",
            (job,),
        )
        return await cur.fetchone()


async def list_runs(conn: Conn, job: str | None, limit: int) -> list[JobRunRecord]:
    async with conn.cursor(row_factory=class_row(JobRunRecord)) as cur:
        await cur.execute(
            f"SELECT {_COLUMNS} FROM job_runs WHERE (%s::text IS NULL OR job = %s) "
            "ORDER BY id DESC LIMIT %s",
            (job, job, limit),
        )
        return await cur.fetchall()


@dataclass(frozen=True, slots=True)
class LastRun:
    job: str
    started_at: datetime
    status: str


async def last_runs(conn: Conn) -> dict[str, LastRun]:
    async with conn.cursor(row_factory=class_row(LastRun)) as cur:
        await cur.execute(
            "SELECT DISTINCT ON (job) job, started_at, status FROM job_runs "
            "WHERE NOT dry_run ORDER BY job, started_at DESC"
        )
        return {r.job: r for r in await cur.fetchall()}


async def active_namespaces(conn: Conn, within: Sequence[str] | None) -> list[str]:
    """Namespaces holding active memories (limited to ``within`` when given)."""
    cur = await conn.execute(
        "SELECT DISTINCT namespace FROM memories WHERE is_active "
        "AND (%s::text[] IS NULL OR namespace = ANY(%s)) ORDER BY namespace",
        (
            TextArray(within) if within is not None else None,
            TextArray(within) if within is not None else None,
        ),
    )
    return [r["namespace"] for r in await cur.fetchall()]


async def audit(
    conn: Conn,
    rows: Sequence[tuple[str, str, str, Mapping[str, Any]]],
    run_id: int | None,
) -> None:
    """One audit row per (memory_id, namespace, action, detail) a job changed."""
    if not rows:
        return
    async with conn.cursor() as cur:
        await cur.executemany(
            "INSERT INTO memory_audit (memory_id, namespace, action, job_run_id, detail) "
            "VALUES (%s, %s, %s, %s, %s)",
            [(m, ns, action, run_id, Jsonb(dict(detail))) for m, ns, action, detail in rows],
        )
