"""A read-only key may ask for previews (dry runs), and nothing more: a preview, or a loop of
them, never holds the lock a real run needs, so it cannot make the nightly run fail with 409;
and every route that starts real work (maintenance jobs, backups, exports) refuses the key."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import psycopg
import pytest

from exocortex.core.db.pool import Pool
from exocortex.core.runtime.stack import Stack
from exocortex.maintenance.jobs import repository
from exocortex.testing.keyed import Keyed
from exocortex.testing.wait import until_async


@asynccontextmanager
async def _memories_locked(stack: Stack) -> AsyncIterator[None]:
    """Holds an exclusive lock on ``memories``: a job reading it waits, so it is still running
    for as long as the block lasts (starting a run reads no memory)."""
    conn = await psycopg.AsyncConnection.connect(stack.database_url)
    try:
        async with conn.transaction():
            await conn.execute("LOCK TABLE memories IN ACCESS EXCLUSIVE MODE")
            yield
    finally:
        await conn.close()


async def _running_preview(admin: httpx.AsyncClient, namespace: str) -> dict[str, Any]:
    async def running() -> dict[str, Any] | None:
        reply = await admin.get("/api/maintenance/jobs/runs", params={"job": "archival"})
        assert reply.status_code == 200, reply.text
        for run in reply.json()["runs"]:
            if run["dry_run"] and run["status"] == "running" and run["namespace"] == namespace:
                return dict(run)
        return None

    found = await until_async(running, what="the preview started")
    assert found is not None
    return found


async def _finished(admin: httpx.AsyncClient, run_id: int) -> dict[str, Any]:
    async def run() -> dict[str, Any]:
        return dict((await admin.get(f"/api/maintenance/jobs/runs/{run_id}")).json())

    return await until_async(
        run, what=f"run {run_id} finished", accept=lambda r: r["status"] != "running"
    )


async def test_a_preview_held_open_does_not_stop_the_real_run(
    keyed: Keyed, exo_stack: Stack
) -> None:
    async with _memories_locked(exo_stack):
        # The decay preview a read-only key may ask for; it waits behind the table lock.
        asked = asyncio.create_task(
            keyed.ro.get("/api/archive/preview", params={"namespace": keyed.a})
        )
        preview = await _running_preview(keyed.admin, keyed.a)
        # Asking again while it runs (a loop) joins that run instead of adding work.
        for _ in range(3):
            again = await keyed.admin.post(
                "/api/maintenance/jobs/archival/run",
                json={"dry_run": True, "namespace": keyed.a, "wait_seconds": 0},
            )
            assert again.status_code == 202, again.text
            assert again.json()["id"] == preview["id"]
        # The real run starts at once: no 409 "already running".
        real = await keyed.rw.post(
            "/api/archive", json={"dry_run": False, "namespace": keyed.a, "wait_seconds": 0}
        )
        assert real.status_code == 202, real.text
        assert real.json()["dry_run"] is False
        # A second real run is still refused while the first goes on.
        second = await keyed.rw.post(
            "/api/archive", json={"dry_run": False, "namespace": keyed.a, "wait_seconds": 0}
        )
        assert second.status_code == 409, second.text
        assert f"run {real.json()['id']}" in second.json()["detail"]
    answered = await asked
    assert answered.status_code in (200, 202), answered.text
    assert (await _finished(keyed.admin, preview["id"]))["status"] == "succeeded"
    assert (await _finished(keyed.admin, real.json()["id"]))["status"] == "succeeded"


async def test_a_real_run_going_on_does_not_stop_a_preview(keyed: Keyed, exo_stack: Stack) -> None:
    async with _memories_locked(exo_stack):
        real = await keyed.rw.post(
            "/api/archive", json={"dry_run": False, "namespace": keyed.a, "wait_seconds": 0}
        )
        assert real.status_code == 202, real.text
        preview = await keyed.admin.post(
            "/api/maintenance/jobs/archival/run",
            json={"dry_run": True, "namespace": keyed.a, "wait_seconds": 0},
        )
        assert preview.status_code == 202, preview.text
    for run in (real.json(), preview.json()):
        assert (await _finished(keyed.admin, run["id"]))["status"] == "succeeded"


# Every route that starts work, with a body that would be valid for a read-write key.
WORK_ROUTES = [
    ("/api/maintenance/jobs/archival/run", {"dry_run": False}),
    ("/api/maintenance/jobs/archival/run", {"dry_run": True}),
    ("/api/maintenance/jobs/consolidation/run", {}),
    ("/api/archive", {"dry_run": False}),
    ("/api/importance-adjust", {"dry_run": False}),
    ("/api/consolidate", {"dry_run": False}),
    ("/api/auto-consolidate", {}),
    ("/api/contradictions/detect", {"dry_run": False}),
    ("/api/reembed", {"dry_run": False}),
    ("/api/maintenance/tags/merge", {"dry_run": False}),
    ("/api/maintenance/reindex", {}),
    ("/api/backups", {}),
    ("/api/backups/exocortex-20260101T000000Z.exobak/verify", {}),
    ("/api/backups/exocortex-20260101T000000Z.exobak/restore", {"dry_run": True}),
    ("/api/export/obsidian", {}),
]


@pytest.mark.parametrize(("path", "body"), WORK_ROUTES)
async def test_a_read_only_key_starts_no_work(
    keyed: Keyed, path: str, body: dict[str, Any]
) -> None:
    needs_namespace = "maintenance/jobs" in path or path in (
        "/api/archive",
        "/api/importance-adjust",
        "/api/consolidate",
        "/api/auto-consolidate",
        "/api/contradictions/detect",
    )
    sent = {**body, "namespace": keyed.a} if needs_namespace else body
    before = (await keyed.admin.get("/api/maintenance/jobs/runs", params={"limit": 1})).json()
    reply = await keyed.ro.post(path, json=sent)
    assert reply.status_code == 403, reply.text
    assert "read-only" in reply.json()["detail"]
    after = (await keyed.admin.get("/api/maintenance/jobs/runs", params={"limit": 1})).json()
    assert after["runs"] == before["runs"]


async def test_the_preview_lock_never_meets_the_job_lock(database_url: str) -> None:
    """The lock contract behind the above, on a real Postgres: a live preview holds a shared
    lock another process's real run does not wait for, and only stops the sweep that marks
    abandoned previews failed."""
    preview = await repository.open_lock_connection(database_url)
    other = await repository.open_lock_connection(database_url)
    try:
        await repository.lock_preview(preview, "archival")
        await repository.lock_preview(other, "archival")  # previews share it
        assert await repository.try_lock(other, "archival")  # a real run starts
        assert not await repository.try_lock_previews(other, "archival")  # a preview is alive
        await repository.unlock(other, "archival")
        await repository.unlock_preview(other, "archival")
        await repository.unlock_preview(preview, "archival")
        assert await repository.try_lock_previews(other, "archival")  # none alive: sweep
        await repository.unlock_previews(other, "archival")
    finally:
        await preview.close()
        await other.close()


async def test_only_a_real_or_another_replicas_run_stands_for_a_scheduled_fire(
    db_pool: Pool,
) -> None:
    async with db_pool.connection() as conn:
        row = await (await conn.execute("SELECT now() AS at")).fetchone()
        assert row is not None
        fire = row["at"]

        async def started(*, dry_run: bool) -> bool:
            return await repository.started_since(
                conn, "archival", fire, dry_run=dry_run, trigger="schedule"
            )

        async def run(*, dry_run: bool, trigger: str) -> None:
            await repository.start_run(
                conn, "archival", dry_run=dry_run, params={}, namespace=None, trigger=trigger
            )

        # Previews someone asked for (a read-only key in a loop) after the fire time.
        await run(dry_run=True, trigger="api")
        assert not await started(dry_run=False)
        assert not await started(dry_run=True)
        # Another replica's scheduled preview stands for a preview fire only.
        await run(dry_run=True, trigger="schedule")
        assert await started(dry_run=True)
        assert not await started(dry_run=False)
        # A real run stands for either.
        await run(dry_run=False, trigger="api")
        assert await started(dry_run=False)
