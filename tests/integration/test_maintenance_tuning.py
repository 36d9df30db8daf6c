"""Jobs that tune the store as a whole: ``weights`` (and its revert), ``retrieval-regression``
baselines (set, update, promote, reset) and the outbox pruning of ``repair``.

``weights`` reads every accessed memory of the store, so it runs in a maintenance process of
its own on a fresh database, where the test's rows are the only ones; the other two are scoped
by the test's own queries and rows and run on the session stack.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import pytest_asyncio
from psycopg.rows import dict_row

from exocortex.core.rpc.client import open_channel
from exocortex.core.runtime.ports import free_port
from exocortex.core.runtime.stack import Stack
from exocortex.proto.v1 import maintenance_pb2, maintenance_pb2_grpc
from exocortex.testing.processes import listening_process
from exocortex.testing.rest import store
from exocortex.testing.settings import ApplySettings

Conn = psycopg.AsyncConnection[dict[str, Any]]
WEIGHTS = ("scoring.recency_weight", "scoring.frequency_weight", "scoring.graph_weight")


@pytest.fixture
def lone_maintenance(
    exo_stack: Stack, database_url: str, nats_url: str, tmp_path: Path
) -> Iterator[str]:
    """A maintenance process on a fresh database (and a NATS of its own), scheduler off; the
    other services' addresses are the session stack's, which the jobs run here do not call."""
    port = free_port()
    env = exo_stack.env() | {
        "EXO_DATABASE_URL": database_url,
        "EXO_NATS_URL": nats_url,
        "EXO_DATA_DIR": str(tmp_path),
        "EXO_MAINTENANCE_LISTEN": f"127.0.0.1:{port}",
        "EXO_MAINTENANCE_METRICS_PORT": str(free_port()),
        "EXO_MAINTENANCE_SCHEDULER": "false",
    }
    with listening_process(
        [sys.executable, "-m", "exocortex.maintenance"], env, port, what="a maintenance process"
    ):
        yield f"127.0.0.1:{port}"


@pytest_asyncio.fixture
async def lone_db(database_url: str) -> AsyncIterator[Conn]:
    conn = await psycopg.AsyncConnection.connect(
        database_url, autocommit=True, row_factory=dict_row
    )
    try:
        yield conn
    finally:
        await conn.close()


async def _run(address: str, job: str, dry_run: bool = False, **params: Any) -> dict[str, Any]:
    channel = open_channel(address)
    try:
        stub = maintenance_pb2_grpc.MaintenanceStub(channel)
        run = await stub.RunJob(
            maintenance_pb2.RunJobRequest(
                name=job, dry_run=dry_run, params_json=json.dumps(params), wait_seconds=60
            ),
            timeout=90,
        )
    finally:
        await channel.close()
    assert run.status == "succeeded", run.error
    report: dict[str, Any] = json.loads(run.report_json)
    report["run_id"] = run.id
    return report


async def _weights(db: Conn) -> dict[str, str]:
    cur = await db.execute("SELECT key, value FROM settings WHERE key = ANY(%s)", (list(WEIGHTS),))
    return {r["key"]: r["value"] for r in await cur.fetchall()}


async def _seed_usage(db: Conn) -> None:
    """Five memories found useful, young and often used; five never found useful, old and
    rarely used; none linked."""
    now = datetime.now(UTC)
    for i in range(10):
        useful = i < 5
        created = now - timedelta(days=1 if useful else 30)
        mid = f"weights-{i}"
        await db.execute(
            "INSERT INTO memories (id, namespace, content, useful_count, created_at, updated_at)"
            " VALUES (%s, 'weights', %s, %s, %s, %s)",
            (mid, f"weights note {i}", 1 if useful else 0, created, created),
        )
        await db.execute(
            "INSERT INTO memory_usage (memory_id, access_count) VALUES (%s, %s)",
            (mid, 10 if useful else 2),
        )


async def test_weights_moves_by_usefulness_and_a_run_can_be_reverted(
    lone_maintenance: str, lone_db: Conn
) -> None:
    defaults = await _weights(lone_db)
    assert defaults == {
        "scoring.recency_weight": "0.20",
        "scoring.frequency_weight": "0.10",
        "scoring.graph_weight": "0.05",
    }
    skipped = await _run(lone_maintenance, "weights")
    assert "needs at least 5" in skipped["skipped"]

    await _seed_usage(lone_db)
    preview = await _run(lone_maintenance, "weights", dry_run=True)
    assert preview["weights"] == {
        "scoring.recency_weight": {"old": 0.2, "new": 0.22},
        "scoring.frequency_weight": {"old": 0.1, "new": 0.12},
    }
    assert await _weights(lone_db) == defaults  # a dry run changes nothing

    moved = await _run(lone_maintenance, "weights")
    assert moved["weights"] == preview["weights"]
    assert moved["changes"] == {"weights": 2}
    after = await _weights(lone_db)
    assert float(after["scoring.recency_weight"]) == pytest.approx(0.22)
    assert float(after["scoring.frequency_weight"]) == pytest.approx(0.12)
    assert after["scoring.graph_weight"] == "0.05"  # no link gap: untouched

    reverted = await _run(lone_maintenance, "weights", revert_run=moved["run_id"])
    assert reverted["reverted_run"] == moved["run_id"]
    back = await _weights(lone_db)
    assert {k: float(v) for k, v in back.items()} == pytest.approx(
        {k: float(v) for k, v in defaults.items()}
    )

    # A run that changed nothing cannot be reverted: the run fails naming the reason.
    channel = open_channel(lone_maintenance)
    try:
        stub = maintenance_pb2_grpc.MaintenanceStub(channel)
        refused = await stub.RunJob(
            maintenance_pb2.RunJobRequest(
                name="weights",
                params_json=json.dumps({"revert_run": preview["run_id"]}),
                wait_seconds=60,
            ),
            timeout=90,
        )
    finally:
        await channel.close()
    assert refused.status == "failed"
    assert "nothing to revert" in refused.error
    assert {k: float(v) for k, v in (await _weights(lone_db)).items()} == pytest.approx(
        {k: float(v) for k, v in defaults.items()}
    )


async def _regression(api: httpx.AsyncClient, **params: Any) -> dict[str, Any]:
    reply = await api.post(
        "/api/maintenance/jobs/retrieval-regression/run",
        json={"params": params, "wait_seconds": 60},
    )
    assert reply.status_code == 200, reply.text
    assert reply.json()["status"] == "succeeded", reply.json()
    report: dict[str, Any] = reply.json()["report"]
    report["id"] = reply.json()["id"]
    return report


async def test_regression_baselines_are_set_updated_promoted_and_reset(
    api: httpx.AsyncClient, namespace: str, change_settings: ApplySettings
) -> None:
    # Drifts here are on purpose: no alert memory in the shared stack's default namespace.
    await change_settings({"retrieval_regression.create_alert_memory": "false"})
    notes = [
        f"The {namespace} lighthouse lamp is serviced every spring.",
        f"The {namespace} lighthouse keeper logs the fog signals.",
        f"The {namespace} lighthouse stairs have 120 steps.",
    ]
    ids = [await store(api, namespace, note) for note in notes]
    golden = {"query": f"{namespace} lighthouse", "namespace": namespace}
    # Three results and a limit of three: losing one is an overlap of 2/3, under 0.8.
    kw = {"queries": [golden], "limit": 3}

    first = await _regression(api, **kw)
    assert first["baselines_set"] == 1  # a query's first run sets its baseline
    assert (first["alerts"], first["results"][0]["overlap_at_10"]) == (0, 1.0)
    assert sorted(first["results"][0]["current_ids"]) == sorted(ids)

    gone = await api.post(f"/api/memories/{ids[0]}/archive")
    assert gone.status_code == 200, gone.text
    drifted = await _regression(api, **kw)
    assert drifted["baselines_set"] == 0
    assert drifted["alerts"] == 1
    assert drifted["alert_memory_id"] is None
    assert ids[0] not in drifted["results"][0]["current_ids"]

    updated = await _regression(api, update_baselines=True, **kw)
    assert updated["baselines_set"] == 1
    assert (await _regression(api, **kw))["alerts"] == 0  # the new baseline holds

    # Back again: a drift, until that run's results are promoted to the baseline.
    restored = await api.post(f"/api/memories/{ids[0]}/restore")
    assert restored.status_code == 200, restored.text
    again = await _regression(api, **kw)
    assert again["alerts"] == 1
    promoted = await _regression(api, promote_run=again["run_id"])
    assert (promoted["promoted_run"], promoted["baselines"]) == (again["run_id"], 1)
    assert (await _regression(api, **kw))["alerts"] == 0

    reset = await _regression(api, reset_baselines=True)
    assert reset["reset_baselines"] >= 1
    assert (await _regression(api, **kw))["baselines_set"] == 1  # set afresh


async def test_repair_prunes_published_outbox_rows_past_their_age(
    api: httpx.AsyncClient, stack_db: Conn, namespace: str
) -> None:
    subject = f"exo.test-outbox.{namespace}"  # consumed by nothing
    ages = {"old": 8, "recent-enough": 6, "new": 0}
    rows: dict[str, int] = {}
    for label, days in ages.items():
        cur = await stack_db.execute(
            "INSERT INTO outbox (subject, payload, created_at, published_at)"
            " VALUES (%s, %s, now() - make_interval(days => %s), now() - make_interval(days => %s))"
            " RETURNING id",
            (subject, label.encode(), days, days),
        )
        row = await cur.fetchone()
        assert row is not None
        rows[label] = row["id"]

    async def left() -> set[str]:
        cur = await stack_db.execute("SELECT payload FROM outbox WHERE subject = %s", (subject,))
        return {bytes(r["payload"]).decode() for r in await cur.fetchall()}

    body = {"params": {"prune_outbox_days": 7}, "wait_seconds": 120}
    dry = await api.post("/api/maintenance/jobs/repair/run", json={**body, "dry_run": True})
    assert dry.status_code == 200, dry.text
    assert dry.json()["report"]["outbox_pruned"] >= 1
    assert await left() == set(ages)  # a dry run deletes nothing

    run = await api.post("/api/maintenance/jobs/repair/run", json=body)
    assert run.status_code == 200, run.text
    assert run.json()["report"]["changes"]["outbox_pruned"] >= 1
    assert await left() == {"recent-enough", "new"}
