"""The original's housekeeping jobs on the real stack: the trash purge (only what a person put in
the trash goes on the `trash.auto_purge_days` clock; what automation archived stays until a
person empties the trash; a memory superseded by an active one is kept), sentinel-report expiry,
importance recalibration (also from `memory_maintenance`), and the retrieval-regression schedule
read from its setting while the scheduler runs."""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from mcp import Client
from mcp.types import CallToolResult

from exocortex.core.runtime.ports import free_port
from exocortex.core.runtime.stack import Stack
from exocortex.testing.processes import listening_process
from exocortex.testing.rest import wait_enriched
from exocortex.testing.settings import ApplySettings
from exocortex.testing.wait import until_async

Db = Any


async def _store(api: httpx.AsyncClient, namespace: str, content: str, **extra: Any) -> str:
    reply = await api.post(
        "/api/memories", json={"content": content, "namespace": namespace, **extra}
    )
    assert reply.status_code == 201, reply.text
    memory_id: str = reply.json()["id"]
    # Jobs act on a memory's version; enrichment's write would otherwise race them (a job
    # that read the version before enrichment's write rightly leaves the memory alone).
    await wait_enriched(api, memory_id)
    return memory_id


async def _run(
    api: httpx.AsyncClient, job: str, namespace: str, *, dry_run: bool = False, **params: Any
) -> dict[str, Any]:
    reply = await api.post(
        f"/api/maintenance/jobs/{job}/run",
        json={"dry_run": dry_run, "params": params, "namespace": namespace, "wait_seconds": 120},
    )
    assert reply.status_code == 200, reply.text
    run: dict[str, Any] = reply.json()
    assert run["status"] == "succeeded", run
    report: dict[str, Any] = run["report"]
    return report


async def _backdate(db: Db, ids: list[str], column: str, days: int) -> None:
    # Only the clock is moved: the rows stay as the product left them.
    await db.execute(
        f"UPDATE memories SET {column} = {column} - make_interval(days => %s) "
        "WHERE id = ANY(%s) OR parent_id = ANY(%s)",
        (days, ids, ids),
    )


async def test_trash_purge_takes_only_what_a_person_trashed(
    api: httpx.AsyncClient, stack_db: Db, namespace: str, change_settings: ApplySettings
) -> None:
    trashed = await _store(api, namespace, "A scratch note I threw away myself.", importance=0.9)
    stale = await _store(api, namespace, "An old unimportant note nobody read.", importance=0.1)
    replaced = await _store(api, namespace, "The deploy target was staging.", importance=0.9)
    successor = await _store(api, namespace, "The deploy target is production.", importance=0.9)
    for memory_id in (trashed, replaced):
        reply = await api.post(f"/api/memories/{memory_id}/archive")
        assert reply.status_code == 200, reply.text
    # Automation archives the unimportant note (stale since "now").
    archived = await _run(api, "archival", namespace, stale_days=0)
    assert archived["archived"] == 1, archived
    # The replaced note points at its active successor (as a resolved contradiction leaves it).
    await stack_db.execute(
        "UPDATE memories SET superseded_by = %s WHERE id = %s", (successor, replaced)
    )
    await _backdate(stack_db, [trashed, stale, replaced], "updated_at", 40)

    preview = await _run(api, "trash-purge", namespace, dry_run=True)
    items = {i["id"]: i for i in preview["items"]}
    assert set(items) == {trashed, stale, replaced}
    assert items[trashed]["archived_by"] == "person"
    assert items[trashed]["purged"] is True
    assert items[stale]["archived_by"] == "automation"
    assert items[stale]["purged"] is False
    assert "automation" in items[stale]["kept_because"]
    assert items[replaced]["purged"] is False
    assert "superseded" in items[replaced]["kept_because"]
    assert preview["purged"] == 1
    assert preview["older_than_days"] == 30  # the setting's default
    assert preview["trash"] == {"person": 1, "automation": 2}
    # The trash as REST lists it says the same of each memory.
    listed = await api.get("/api/memories/archived", params={"namespace": namespace})
    assert listed.status_code == 200, listed.text
    by = {m["id"]: m["archived_by"] for m in listed.json()["results"]}
    assert by == {trashed: "person", stale: "automation", replaced: "automation"}
    # An active memory names no one.
    assert (await api.get(f"/api/memories/{successor}")).json()["archived_by"] is None

    # 0 turns the clock off: nothing is purged.
    await change_settings({"trash.auto_purge_days": "0"})
    off = await _run(api, "trash-purge", namespace)
    assert off["skipped"] == "trash.auto_purge_days is 0"
    assert (await api.get(f"/api/memories/{trashed}")).status_code == 200
    await change_settings({"trash.auto_purge_days": "30"})

    purged = await _run(api, "trash-purge", namespace)
    assert purged["purged"] == 1
    assert purged["changes"] == {"purged": 1}
    assert (await api.get(f"/api/memories/{trashed}")).status_code == 404
    # What automation archived is still there, and restorable.
    assert (await api.get(f"/api/memories/{stale}")).json()["is_active"] is False

    # A person empties the trash: automation's rows go too, the superseded one stays.
    emptied = await _run(api, "trash-purge", namespace, older_than_days=0, include_automation=True)
    assert emptied["purged"] == 1
    assert (await api.get(f"/api/memories/{stale}")).status_code == 404
    assert (await api.get(f"/api/memories/{replaced}")).status_code == 200
    assert (await api.get(f"/api/memories/{successor}")).json()["is_active"] is True


async def test_a_restored_then_retrashed_memory_is_a_persons_again(
    api: httpx.AsyncClient, namespace: str
) -> None:
    memory_id = await _store(api, namespace, "A note automation archives.", importance=0.1)
    assert (await _run(api, "archival", namespace, stale_days=0))["archived"] == 1
    assert (await api.post(f"/api/memories/{memory_id}/restore")).status_code == 200
    patched = await api.patch(f"/api/memories/{memory_id}", json={"is_active": False})
    assert patched.status_code == 200, patched.text
    preview = await _run(api, "trash-purge", namespace, dry_run=True, older_than_days=0)
    assert [(i["id"], i["archived_by"]) for i in preview["items"]] == [(memory_id, "person")]


async def test_old_sentinel_reports_get_an_expiry(
    api: httpx.AsyncClient, stack_db: Db, namespace: str, change_settings: ApplySettings
) -> None:
    report = await _store(
        api, namespace, "Sentinel: 3 checks passed.", source="mcp", tags=["sentinel"]
    )
    important = await _store(
        api,
        namespace,
        "Sentinel: the disk filled up.",
        source="mcp",
        tags=["sentinel"],
        importance=0.9,
    )
    note = await _store(api, namespace, "An ordinary note about metrics.", source="mcp")
    fresh = await _store(
        api, namespace, "Health check: all green.", source="mcp", tags=["health-check"]
    )
    await _backdate(stack_db, [report, important, note], "created_at", 40)

    done = await _run(api, "sentinel-expiry", namespace)
    assert done["ttl_days"] == 30
    assert done["ids"] == [report]
    expires = datetime.fromisoformat(
        (await api.get(f"/api/memories/{report}")).json()["expires_at"]
    )
    assert timedelta(days=6) < expires - datetime.now(UTC) <= timedelta(days=7)
    for other in (important, note, fresh):
        assert (await api.get(f"/api/memories/{other}")).json()["expires_at"] is None
    # A second run finds nothing new (the report has its expiry).
    assert (await _run(api, "sentinel-expiry", namespace))["expiring"] == 0
    # The setting is the clock: 60 days leaves a 40-day-old report alone, 0 turns it off.
    later = await _store(api, namespace, "Metrics: p95 at 40 ms.", source="mcp", tags=["metrics"])
    await _backdate(stack_db, [later], "created_at", 40)
    key = "sentinel.report_ttl_days"
    for ttl, expected in (("60", None), ("0", "sentinel.report_ttl_days is 0")):
        await change_settings({key: ttl})
        report = await _run(api, "sentinel-expiry", namespace)
        assert report["expiring"] == 0, report
        assert report.get("skipped") == expected
    assert (await api.get(f"/api/memories/{later}")).json()["expires_at"] is None
    await change_settings({key: "30"})
    assert (await _run(api, "sentinel-expiry", namespace))["ids"] == [later]


async def test_recalibration_from_memory_maintenance(
    api: httpx.AsyncClient, mcp: Client, namespace: str
) -> None:
    ids = [
        await _store(api, namespace, f"Recalibration note {n}.", importance=value)
        for n, value in enumerate((0.5, 0.52, 0.55))
    ]
    pinned = await _store(api, namespace, "A pinned rule.", importance=1.0)
    reply: CallToolResult = await mcp.call_tool(
        "memory_maintenance", {"namespace": namespace, "run": [], "recalibrate": True}
    )
    assert not reply.is_error, reply.content
    assert reply.structured_content is not None
    runs = reply.structured_content["runs"]
    assert [r["job"] for r in runs] == ["recalibration"]
    assert runs[0]["report"]["recalibrated"] == 3
    assert runs[0]["report"]["after"]["min"] == 0.1
    importances = [(await api.get(f"/api/memories/{i}")).json()["importance"] for i in ids]
    assert importances == [0.1, 0.5, 0.9]
    assert (await api.get(f"/api/memories/{pinned}")).json()["importance"] == 1.0


async def test_the_regression_schedule_follows_its_setting(
    api: httpx.AsyncClient, exo_stack: Stack, stack_db: Db, change_settings: ApplySettings
) -> None:
    key = "retrieval_regression.schedule"
    await change_settings({key: ""})
    port = free_port()
    env = exo_stack.env() | {
        "EXO_MAINTENANCE_LISTEN": f"127.0.0.1:{port}",
        "EXO_MAINTENANCE_METRICS_PORT": str(free_port()),
        "EXO_MAINTENANCE_SCHEDULER": "true",
        "EXO_MAINTENANCE_SCHEDULES": "{}",
        "EXO_MAINTENANCE_STARTUP_JOBS": "[]",
        "EXO_MAINTENANCE_STARTUP_DELAY_SECONDS": "0",
        "EXO_MAINTENANCE_SCHEDULE_REFRESH_SECONDS": "1",
    }
    query = (
        "SELECT count(*) AS n FROM job_runs WHERE job = 'retrieval-regression' "
        "AND trigger = 'schedule' AND started_at >= %s"
    )

    async def scheduled_runs(since: datetime) -> int:
        row = await (await stack_db.execute(query, (since,))).fetchone()
        return int(row["n"])

    with listening_process(
        [sys.executable, "-m", "exocortex.maintenance"], env, port, what="a scheduler"
    ):
        # The setting changes while the scheduler runs: every 3 seconds from now on.
        since = datetime.now(UTC)
        await change_settings({key: "* * * * * */3"})
        await until_async(
            lambda: scheduled_runs(since),
            what="the regression ran on the schedule its setting names",
            seconds=120,
        )
        jobs = (await api.get("/api/maintenance/jobs")).json()["jobs"]
        listed = {j["name"]: j["schedule"] for j in jobs}
        assert listed["retrieval-regression"] == "* * * * * */3"
    bad = await api.patch("/api/settings", json={key: "every morning"})
    assert bad.status_code == 400, bad.text
    assert bad.json()["field"] == key
