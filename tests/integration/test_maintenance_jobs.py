"""The job framework on the real stack: the job list, runs with their `job_runs` rows, reports
and metrics, clear 4xx answers, and the advisory lock that keeps two maintenance processes from
running the same job at once (by hand and on a schedule)."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import UTC, datetime
from typing import Any

import grpc
import httpx
import psycopg
import pytest
from prometheus_client.parser import text_string_to_metric_families

from exocortex.core.rpc.client import open_channel
from exocortex.core.runtime.ports import free_port
from exocortex.core.runtime.stack import Stack
from exocortex.proto.v1 import maintenance_pb2, maintenance_pb2_grpc
from exocortex.testing.processes import listening_process
from exocortex.testing.rest import store
from exocortex.testing.stack import scheduled_maintenance

JOBS = {"consolidation", "auto-consolidation", "contradictions", "retrieval-regression"}


async def _job_runs_total(stack: Stack, job: str, status: str) -> float:
    port = stack.config.metrics_ports["maintenance"]
    async with httpx.AsyncClient(timeout=5.0) as c:
        text = (await c.get(f"http://127.0.0.1:{port}/metrics")).text
    for family in text_string_to_metric_families(text):
        if family.name == "exo_job_runs":
            for sample in family.samples:
                if sample.name.endswith("_total") and sample.labels == {
                    "job": job,
                    "status": status,
                }:
                    return sample.value
    return 0.0


@asynccontextmanager
async def _table_locked(stack: Stack, table: str) -> AsyncIterator[None]:
    """Holds an exclusive lock on ``table``: a job reading it waits, so it is still running."""
    conn = await psycopg.AsyncConnection.connect(stack.database_url)
    try:
        async with conn.transaction():
            await conn.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
            yield
    finally:
        await conn.close()


async def _process_started(stack: Stack) -> float:
    """When the stack's maintenance process started (Unix seconds, from its metrics)."""
    port = stack.config.metrics_ports["maintenance"]
    async with httpx.AsyncClient(timeout=5.0) as c:
        text = (await c.get(f"http://127.0.0.1:{port}/metrics")).text
    for family in text_string_to_metric_families(text):
        if family.name == "process_start_time_seconds":
            return float(family.samples[0].value)
    raise AssertionError("the maintenance metrics have no process_start_time_seconds")


async def test_jobs_are_listed_with_their_schedules(api: httpx.AsyncClient) -> None:
    reply = await api.get("/api/maintenance/jobs")
    assert reply.status_code == 200, reply.text
    jobs = {j["name"]: j for j in reply.json()["jobs"]}
    assert set(jobs) >= JOBS
    assert jobs["consolidation"]["schedule"] == "0 2 * * *"
    assert jobs["consolidation"]["scope"] == "namespace"
    assert jobs["retrieval-regression"]["scope"] == "global"
    assert jobs["consolidation"]["next_run_at"] is not None


async def test_the_session_stack_runs_no_job_by_itself(exo_stack: Stack, stack_db: Any) -> None:
    """The harness switches the schedules off, start-up pass included: a test run that
    crosses 02:00 UTC must not have its rows consolidated or archived under it."""
    if scheduled_maintenance() != "false":
        pytest.skip("this run asked for the maintenance schedules (EXO_MAINTENANCE_SCHEDULER)")
    # Past the start-up pass's delay (10 s by default) of a maintenance process that may just
    # have started: only what is left of it is waited for (usually nothing).
    alive = time.time() - await _process_started(exo_stack)
    await asyncio.sleep(max(0.0, 12 - alive))
    rows = await (
        await stack_db.execute(
            "SELECT job, trigger FROM job_runs WHERE trigger = 'startup' "
            "OR (trigger = 'schedule' AND job <> 'retrieval-regression')"
        )
    ).fetchall()
    assert rows == [], rows


async def test_a_run_is_recorded_reported_and_counted(
    api: httpx.AsyncClient, exo_stack: Stack, stack_db: Any, namespace: str
) -> None:
    before = await _job_runs_total(exo_stack, "contradictions", "succeeded")
    reply = await api.post(
        "/api/maintenance/jobs/contradictions/run",
        json={"dry_run": True, "namespace": namespace, "params": {"neighbours": 5}},
    )
    assert reply.status_code == 200, reply.text
    run = reply.json()
    assert run["status"] == "succeeded"
    assert run["report"]["dry_run"] is True
    assert run["report"]["namespaces"] == [namespace]
    assert run["params"]["neighbours"] == 5

    row = await (
        await stack_db.execute("SELECT * FROM job_runs WHERE id = %s", (run["id"],))
    ).fetchone()
    assert row["job"] == "contradictions"
    assert row["status"] == "succeeded"
    assert row["dry_run"] is True
    assert row["namespace"] == namespace
    assert row["finished_at"] is not None
    # The report times the job itself: a number within the run's recorded span (rounded to ms).
    seconds = row["report"]["seconds"]
    span = (row["finished_at"] - row["started_at"]).total_seconds()
    assert isinstance(seconds, int | float), row["report"]
    assert 0 <= seconds <= span + 0.002, (seconds, span)

    polled = await api.get(run["poll"])
    assert polled.status_code == 200
    assert polled.json()["id"] == run["id"]
    listed = await api.get("/api/maintenance/jobs/runs", params={"job": "contradictions"})
    assert run["id"] in [r["id"] for r in listed.json()["runs"]]
    assert await _job_runs_total(exo_stack, "contradictions", "succeeded") == before + 1


@pytest.mark.parametrize(
    ("path", "body", "status", "field"),
    [
        ("/api/maintenance/jobs/no-such-job/run", {}, 404, "name"),
        ("/api/maintenance/jobs/consolidation/run", {"params": {"typo": 1}}, 400, "params.typo"),
        (
            "/api/maintenance/jobs/consolidation/run",
            {"params": {"min_similarity": 7}},
            400,
            "params.min_similarity",
        ),
    ],
)
async def test_bad_runs_are_refused_with_what_to_fix(
    api: httpx.AsyncClient, path: str, body: dict[str, Any], status: int, field: str
) -> None:
    reply = await api.post(path, json={"namespace": "t-none", **body})
    assert reply.status_code == status, reply.text
    assert reply.json()["field"] == field


async def test_a_run_still_going_answers_202_and_can_be_polled(
    api: httpx.AsyncClient, exo_stack: Stack, namespace: str
) -> None:
    # The job's first read waits behind a lock taken here, so it is still running at 0 s.
    async with _table_locked(exo_stack, "contradictions"):
        reply = await api.post(
            "/api/maintenance/jobs/contradictions/run",
            json={"namespace": namespace, "wait_seconds": 0},
        )
        assert reply.status_code == 202, reply.text
        run = reply.json()
        assert run["status"] == "running"
        assert reply.headers["location"] == run["poll"]
        again = await api.post(
            "/api/maintenance/jobs/contradictions/run", json={"namespace": namespace}
        )
        assert again.status_code == 409, again.text
        assert f"run {run['id']}" in again.json()["detail"]
    for _ in range(100):
        polled = (await api.get(run["poll"])).json()
        if polled["status"] != "running":
            break
        await asyncio.sleep(0.2)
    assert polled["status"] == "succeeded", polled


def _second_maintenance(stack: Stack, **env: str) -> Iterator[tuple[str, int]]:
    port, metrics = free_port(), free_port()
    full = stack.env() | {
        "EXO_MAINTENANCE_LISTEN": f"127.0.0.1:{port}",
        "EXO_MAINTENANCE_METRICS_PORT": str(metrics),
        **env,
    }
    with listening_process(
        [sys.executable, "-m", "exocortex.maintenance"], full, port, what="a maintenance replica"
    ):
        yield f"127.0.0.1:{port}", metrics


@pytest.fixture
def replica(exo_stack: Stack) -> Iterator[tuple[str, int]]:
    """A second maintenance process on the stack's database, scheduler off."""
    yield from _second_maintenance(exo_stack, EXO_MAINTENANCE_SCHEDULER="false")


async def test_two_processes_never_run_the_same_job_at_once(
    api: httpx.AsyncClient, exo_stack: Stack, replica: tuple[str, int], namespace: str
) -> None:
    channel = open_channel(replica[0])
    stub = maintenance_pb2_grpc.MaintenanceStub(channel)
    try:
        async with _table_locked(exo_stack, "contradictions"):
            first = await api.post(
                "/api/maintenance/jobs/contradictions/run",
                json={"namespace": namespace, "wait_seconds": 0},
            )
            assert first.status_code == 202, first.text
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await stub.RunJob(
                    maintenance_pb2.RunJobRequest(name="contradictions", namespace=namespace),
                    timeout=10,
                )
            assert refused.value.code() == grpc.StatusCode.ALREADY_EXISTS
            assert "already running" in str(refused.value.details())
            # Another job is not held up by it.
            other = await stub.RunJob(
                maintenance_pb2.RunJobRequest(
                    name="consolidation", namespace=namespace, dry_run=True, wait_seconds=30
                ),
                timeout=40,
            )
            assert other.status == "succeeded", other.error
        # Once the first run is done, the replica may run the job.
        for _ in range(100):
            if (await api.get(first.json()["poll"])).json()["status"] != "running":
                break
            await asyncio.sleep(0.2)
        done = await stub.RunJob(
            maintenance_pb2.RunJobRequest(
                name="contradictions", namespace=namespace, dry_run=True, wait_seconds=30
            ),
            timeout=40,
        )
        assert done.status == "succeeded", done.error
    finally:
        await channel.close()


async def test_a_schedule_fires_once_across_replicas(exo_stack: Stack, stack_db: Any) -> None:
    """Two replicas with the same schedule: each fire runs once. A cron expression may carry
    a sixth field, the seconds, so the fires come every few seconds instead of every minute."""
    every = 5
    env = {
        # The session stack runs without schedules; these replicas ask for them.
        "EXO_MAINTENANCE_SCHEDULER": "true",
        "EXO_MAINTENANCE_SCHEDULES": json.dumps({"retrieval-regression": f"* * * * * */{every}"}),
        "EXO_MAINTENANCE_STARTUP_JOBS": "[]",
        "EXO_MAINTENANCE_STARTUP_DELAY_SECONDS": "0",
    }
    started = datetime.now(UTC)
    # Runs by the fire they belong to (a fire's run starts within a second of it).
    query = (
        f"SELECT to_timestamp(floor(extract(epoch FROM started_at) / {every}) * {every}) "
        "AS fire, count(*) AS n, bool_and(status <> 'running') AS finished FROM job_runs "
        "WHERE job = 'retrieval-regression' AND trigger = 'schedule' AND started_at >= %s "
        "GROUP BY 1 ORDER BY 1"
    )
    with (
        _replica_context(exo_stack, env),
        _replica_context(exo_stack, env),
    ):
        # However long the replicas took to start, wait (bounded) until two fires have run to
        # their end: by the second, a duplicate of the first, which both replicas fired at
        # the same instant, would long have started.
        deadline = asyncio.get_running_loop().time() + 120
        rows: list[Any] = []
        while asyncio.get_running_loop().time() < deadline:
            rows = await (await stack_db.execute(query, (started,))).fetchall()
            if sum(r["finished"] for r in rows) >= 2:
                break
            await asyncio.sleep(0.2)
    rows = await (await stack_db.execute(query, (started,))).fetchall()
    assert sum(r["finished"] for r in rows) >= 2, f"the schedule did not fire twice: {rows}"
    assert all(r["n"] == 1 for r in rows), rows


@contextmanager
def _replica_context(stack: Stack, env: dict[str, str]) -> Iterator[tuple[str, int]]:
    yield from _second_maintenance(stack, **env)


async def test_unattended_consolidation_is_a_preview(
    api: httpx.AsyncClient, exo_stack: Stack, stack_db: Any, namespace: str
) -> None:
    """Consolidation started by the schedule or the start-up pass is a dry run: it reports the
    clusters (the health check's backlog) and takes no memory out of search."""
    # Alike (cosine 0.75-0.85 with the newest, the seed) but not so alike that dedup folds them.
    texts = [
        "The export job that runs every night failed on a full disk.",
        "Our nightly export crashed when the disk ran out of space.",
        "Nightly export failed: the disk filled up.",
        "Export job failure overnight: no free disk space.",
    ]
    ids = list(dict.fromkeys([await store(api, namespace, text) for text in texts]))
    assert len(ids) == len(texts), "dedup folded two of the wordings together"
    env = {
        "EXO_MAINTENANCE_SCHEDULER": "true",
        "EXO_MAINTENANCE_STARTUP_JOBS": json.dumps(["consolidation"]),
        "EXO_MAINTENANCE_STARTUP_DELAY_SECONDS": "0",
    }
    started = datetime.now(UTC)
    with _replica_context(exo_stack, env):
        run = None
        # The start-up pass looks at every namespace of the session's store (hundreds by
        # now), and its vector lookups yield to searches: minutes on a slow machine.
        deadline = asyncio.get_running_loop().time() + 300
        while asyncio.get_running_loop().time() < deadline:
            run = await (
                await stack_db.execute(
                    "SELECT dry_run, status, report FROM job_runs WHERE job = 'consolidation' "
                    "AND trigger = 'startup' AND started_at >= %s",
                    (started,),
                )
            ).fetchone()
            if run is not None and run["status"] != "running":
                break
            await asyncio.sleep(0.2)
    assert run is not None, "the start-up pass did not run consolidation"
    assert run["status"] == "succeeded", run
    assert run["dry_run"] is True
    clusters = [c for c in run["report"]["clusters"] if c["namespace"] == namespace]
    assert len(clusters) == 1, run["report"]
    assert len(clusters[0]["memory_ids"]) >= 3
    assert set(clusters[0]["memory_ids"]) <= set(ids)
    for memory_id in ids:
        assert (await api.get(f"/api/memories/{memory_id}")).json()["is_active"] is True
