"""Importance, archival and contradictions on the real stack: what each changes (and what it
must leave alone), with dry runs that change nothing and second runs that change nothing more."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import psycopg
from psycopg.rows import dict_row

from exocortex.core.domain.contradictions import Candidate
from exocortex.core.ids import new_id
from exocortex.core.repositories import contradictions as contradictions_repository
from exocortex.core.runtime.stack import Stack
from exocortex.maintenance.jobs import memory_repository
from exocortex.testing.rest import search, store, wait_all_enriched, wait_enriched
from exocortex.testing.wait import until_async


async def _age(db: Any, memory_id: str, days: int) -> None:
    await db.execute(
        "UPDATE memories SET created_at = now() - make_interval(days => %s) "
        "WHERE id = %s OR parent_id = %s",
        (days, memory_id, memory_id),
    )


async def _importance(api: httpx.AsyncClient, memory_id: str) -> float:
    return float((await api.get(f"/api/memories/{memory_id}")).json()["importance"])


async def test_importance_boosts_decays_spares_pinned_and_does_not_creep(
    api: httpx.AsyncClient, namespace: str, stack_db: Any
) -> None:
    used = await store(api, namespace, "The staging cluster runs on three arm64 nodes.")
    unused = await store(api, namespace, "A note about the office plant watering rota.")
    pinned = await store(
        api, namespace, "Never deploy on Fridays: the on-call rota is thin.", importance=1.0
    )
    central = await store(api, namespace, "Kubernetes upgrades follow the release notes.")
    plain = await store(api, namespace, "The team lunch moved to Thursdays.")
    # Decayed and boosted for the entity in one run: the two cancel out, and are still marked
    # as applied (a second run must not count them again).
    both = await store(api, namespace, "Kubernetes node pools were resized in spring.")
    await wait_all_enriched(api, used, unused, pinned, central, plain, both)
    await stack_db.execute(
        "INSERT INTO memory_usage (memory_id, access_count, last_accessed_at) "
        "VALUES (%s, 6, now())",
        (used,),
    )
    await _age(stack_db, unused, 60)
    await _age(stack_db, pinned, 60)
    await _age(stack_db, both, 60)
    # An entity mentioned by two memories: the namespace's most connected one.
    entity = new_id()
    await stack_db.execute(
        "INSERT INTO entities (id, namespace, name) VALUES (%s, %s, %s)",
        (entity, namespace, f"Kubernetes-{namespace}"),
    )
    await stack_db.execute(
        "INSERT INTO memory_entities (memory_id, entity_id) VALUES (%s, %s), (%s, %s), (%s, %s)",
        (central, entity, used, entity, both, entity),
    )

    body = {"namespace": namespace, "boost_threshold": 5, "decay_age_days": 30}
    preview = (await api.post("/api/importance-adjust", json={**body, "dry_run": True})).json()
    actions = {(d["id"], d["action"]) for d in preview["details"]}
    assert actions == {
        (used, "boost"),
        (unused, "decay"),
        (central, "graph"),
        (used, "graph"),
        (both, "decay"),
        (both, "graph"),
    }
    assert await _importance(api, used) == 0.5  # a dry run changes nothing

    reply = await api.post("/api/importance-adjust", json=body)
    assert reply.status_code == 200, reply.text
    report = reply.json()
    assert (report["boosted"], report["decayed"], report["graph_boosted"]) == (1, 2, 3)
    assert await _importance(api, used) == 0.6  # +0.05 used, +0.05 central entity
    assert await _importance(api, unused) == 0.45
    assert await _importance(api, central) == 0.55
    assert await _importance(api, pinned) == 1.0
    assert await _importance(api, plain) == 0.5
    assert await _importance(api, both) == 0.5  # -0.05 unused, +0.05 central entity
    audit = await (
        await stack_db.execute(
            "SELECT memory_id, detail FROM memory_audit WHERE action = 'importance-adjusted' "
            "AND memory_id = ANY(%s)",
            ([used, unused, central, pinned, plain, both],),
        )
    ).fetchall()
    assert {a["memory_id"] for a in audit} == {used, unused, central}

    again = (await api.post("/api/importance-adjust", json=body)).json()
    assert (again["boosted"], again["decayed"], again["graph_boosted"]) == (0, 0, 0), again
    assert await _importance(api, used) == 0.6
    assert await _importance(api, unused) == 0.45


async def test_archival_archives_stale_abandoned_expired_and_deletes_nothing(
    api: httpx.AsyncClient, namespace: str, stack_db: Any
) -> None:
    stale = await store(
        api, namespace, "Lunch order for the sprint demo: twelve pizzas.", importance=0.2
    )
    abandoned = await store(api, namespace, "The old VPN endpoint was vpn1.example.org.")
    pinned = await store(
        api, namespace, "The root CA private key lives only in the safe.", importance=1.0
    )
    expired = await store(api, namespace, "Temporary door code for the conference week.")
    fresh = await store(api, namespace, "The new VPN uses WireGuard on port 51820.")
    await wait_all_enriched(api, stale, abandoned, pinned, expired, fresh)
    await _age(stack_db, stale, 100)
    await _age(stack_db, abandoned, 400)
    await _age(stack_db, pinned, 400)
    await stack_db.execute(
        "UPDATE memories SET expires_at = now() - interval '1 hour' WHERE id = %s", (expired,)
    )

    preview = await api.get("/api/archive/preview", params={"namespace": namespace})
    assert preview.status_code == 200, preview.text
    reasons = {c["id"]: c["reason"] for c in preview.json()["candidates"]}
    assert reasons == {stale: "stale", abandoned: "abandoned", expired: "expired"}
    assert (await api.get(f"/api/memories/{stale}")).json()["is_active"] is True

    reply = await api.post("/api/archive", json={"namespace": namespace})
    assert reply.status_code == 200, reply.text
    assert reply.json()["archived"] == 3
    for memory_id in (stale, abandoned, expired):
        memory = await api.get(f"/api/memories/{memory_id}")
        assert memory.status_code == 200
        assert memory.json()["is_active"] is False
    for memory_id in (pinned, fresh):
        assert (await api.get(f"/api/memories/{memory_id}")).json()["is_active"] is True
    trash = await api.get("/api/memories/archived", params={"namespace": namespace})
    assert {stale, abandoned, expired} <= {m["id"] for m in trash.json()["results"]}
    found = await search(api, namespace, "VPN endpoint")
    ids = {r["memory"]["id"] if "memory" in r else r["id"] for r in found["results"]}
    assert abandoned not in ids
    assert fresh in ids
    audit = await (
        await stack_db.execute(
            "SELECT memory_id, detail->>'reason' AS reason FROM memory_audit "
            "WHERE action = 'archived' AND memory_id = ANY(%s)",
            ([stale, abandoned, expired],),
        )
    ).fetchall()
    assert {a["memory_id"]: a["reason"] for a in audit} == reasons

    again = (await api.post("/api/archive", json={"namespace": namespace})).json()
    assert again["archived"] == 0

    # Restoring from the trash brings one back, and archival keeps to its rules.
    assert (await api.post(f"/api/memories/{abandoned}/restore")).status_code == 200
    assert (await api.get(f"/api/memories/{abandoned}")).json()["is_active"] is True


async def test_contradictions_detect_list_resolve_and_dismiss(
    api: httpx.AsyncClient, namespace: str, stack_db: Any
) -> None:
    old = await store(api, namespace, "The API timeout is 30 seconds.")
    new = await store(api, namespace, "The API timeout is 60 seconds.")
    a = await store(api, namespace, "We use Redis for the session cache.")
    b = await store(api, namespace, "We do not use Redis for the session cache.")
    # Detection compares the memories as enrichment left them (it also records pairs).
    await wait_all_enriched(api, old, new, a, b)

    detect = await api.post("/api/contradictions/detect", json={"namespace": namespace})
    assert detect.status_code == 200, detect.text
    report = detect.json()
    assert "contradictions" in report, f"the detection run did not finish well: {report}"
    pairs = {frozenset((c["memory_a_id"], c["memory_b_id"])) for c in report["contradictions"]}
    # Enrichment may have recorded a pair already (same table); between them, both are known.
    listed = await api.get("/api/contradictions", params={"namespace": namespace})
    assert listed.status_code == 200
    known = {c["id"]: frozenset((c["memory_a_id"], c["memory_b_id"])) for c in listed.json()}
    assert {frozenset((old, new)), frozenset((a, b))} <= set(known.values()) | pairs
    again = (await api.post("/api/contradictions/detect", json={"namespace": namespace})).json()
    assert again["detected"] == 0

    bad = await api.get("/api/contradictions", params={"status": "open"})
    assert bad.status_code == 400
    assert bad.json()["field"] == "status"

    timeout_id = next(i for i, p in known.items() if p == frozenset((old, new)))
    got = await api.get(f"/api/contradictions/{timeout_id}")
    assert got.status_code == 200
    assert got.json()["status"] == "pending"
    resolved = await api.patch(
        f"/api/contradictions/{timeout_id}", json={"status": "resolved", "keep_id": new}
    )
    assert resolved.status_code == 200, resolved.text
    assert resolved.json()["status"] == "resolved"
    loser = (await api.get(f"/api/memories/{old}")).json()
    assert loser["is_active"] is False
    assert loser["superseded_by"] == new
    assert (await api.get(f"/api/memories/{new}")).json()["is_active"] is True

    redis_id = next(i for i, p in known.items() if p == frozenset((a, b)))
    dismissed = await api.patch(f"/api/contradictions/{redis_id}", json={"status": "dismissed"})
    assert dismissed.json()["status"] == "dismissed"
    assert (await api.get(f"/api/memories/{a}")).json()["is_active"] is True
    assert (await api.get(f"/api/memories/{b}")).json()["is_active"] is True

    pending = await api.get("/api/contradictions", params={"namespace": namespace})
    assert pending.json() == []
    wrong_side = await api.patch(
        f"/api/contradictions/{redis_id}", json={"status": "resolved", "keep_id": new}
    )
    assert wrong_side.status_code == 400
    assert wrong_side.json()["field"] == "keep_id"
    missing = await api.get("/api/contradictions/01JNOSUCHCONTRADICTION0000")
    assert missing.status_code == 404


async def test_a_pair_recorded_by_two_transactions_at_once_is_kept_once(
    api: httpx.AsyncClient, namespace: str, exo_stack: Stack, stack_db: Any
) -> None:
    """Enrichment records a pair inside its (long) transaction while batch detection records
    the same pair, the other way round: the second insert must wait for the first and then
    add nothing, or a pair a person resolves in between comes back as a new pending row."""
    a = await store(api, namespace, "The build cache is kept for 7 days.")
    b = await store(api, namespace, "The build cache is kept for 30 days.")
    assert a != b
    for memory_id in (a, b):  # enrichment's own candidate is in, and nothing else is coming
        await wait_enriched(api, memory_id)
    await stack_db.execute(
        "DELETE FROM contradictions WHERE memory_a_id = ANY(%s) OR memory_b_id = ANY(%s)",
        ([a, b], [a, b]),
    )
    candidate = Candidate(kind="value_change", description="changed value", score=0.9)
    first = await psycopg.AsyncConnection.connect(exo_stack.database_url, row_factory=dict_row)
    second = await psycopg.AsyncConnection.connect(
        exo_stack.database_url, autocommit=True, row_factory=dict_row
    )
    try:
        assert await contradictions_repository.add_candidate(first, a, b, candidate) is not None
        second_pid = second.info.backend_pid
        racing = asyncio.create_task(
            contradictions_repository.add_candidate(second, b, a, candidate)
        )

        async def second_waits_on_a_lock() -> bool:
            if racing.done():
                return True  # did not wait: asserted just below
            blocked = await (
                await stack_db.execute(
                    "SELECT count(*) AS n FROM pg_locks WHERE pid = %s AND NOT granted",
                    (second_pid,),
                )
            ).fetchone()
            return bool(blocked and blocked["n"])

        await until_async(second_waits_on_a_lock, what="the second insert is blocked", seconds=30)
        assert not racing.done(), "the second insert did not wait for the first transaction"
        await first.commit()
        assert await asyncio.wait_for(racing, 10) is None
    finally:
        await first.close()
        await second.close()
    rows = await (
        await stack_db.execute(
            "SELECT count(*) AS n FROM contradictions "
            "WHERE memory_a_id = ANY(%s) AND memory_b_id = ANY(%s)",
            ([a, b], [a, b]),
        )
    ).fetchone()
    assert rows is not None
    assert rows["n"] == 1


async def test_importance_is_not_written_over_a_change_made_after_the_read(
    api: httpx.AsyncClient, namespace: str, stack_db: Any
) -> None:
    """The job computes a new importance from what it read; a user's PATCH between that read
    and the write moves the version, and the stale value must then not land on the row."""
    patched = await store(api, namespace, "The VPN certificate renews every ninety days.")
    untouched = await store(api, namespace, "The wiki moved to the new domain in March.")
    await wait_all_enriched(api, patched, untouched)
    rows = await (
        await stack_db.execute(
            "SELECT id, version FROM memories WHERE id = ANY(%s)", ([patched, untouched],)
        )
    ).fetchall()
    read_at = {r["id"]: int(r["version"]) for r in rows}

    reply = await api.patch(f"/api/memories/{patched}", json={"importance": 0.9})
    assert reply.status_code == 200, reply.text

    written = await memory_repository.set_importance(
        stack_db,
        {patched: 0.3, untouched: 0.3},
        versions=read_at,
        action="importance-adjusted",
        run_id=None,
    )
    assert [c.memory_id for c in written] == [untouched]
    assert written[0].version == read_at[untouched] + 1
    assert await _importance(api, patched) == 0.9  # the user's value stands
    assert await _importance(api, untouched) == 0.3
    audit = await (
        await stack_db.execute(
            "SELECT memory_id FROM memory_audit WHERE action = 'importance-adjusted' "
            "AND memory_id = ANY(%s)",
            ([patched, untouched],),
        )
    ).fetchall()
    assert [a["memory_id"] for a in audit] == [untouched]
