"""An object that joins two memories (a contradiction, a link, a supersession, a consolidation,
an entity relationship stated by a memory, a goal's progress link) is visible and changeable only
with access to both ends. Pairs that span namespaces happen (a memory moved to another
namespace keeps its links and contradictions; an all-namespaces key links across), so each test
makes one directly and shows that a key limited to ``a`` can neither list, read nor act on it,
while the all-namespaces key still can. The services hold the same rule on their own (the last
tests call them directly, as a gateway with a bug would)."""

from __future__ import annotations

import uuid
from typing import Any

import grpc
import psycopg
import pytest
from mcp.types import TextContent

from exocortex.core import scope
from exocortex.core.db.pool import open_pool
from exocortex.core.ids import new_id
from exocortex.core.rpc.client import open_channel
from exocortex.core.runtime.stack import Stack
from exocortex.proto.v1 import ingest_pb2, ingest_pb2_grpc, maintenance_pb2, maintenance_pb2_grpc
from exocortex.retrieval.reads import entity_repository
from exocortex.testing.keyed import Keyed
from exocortex.testing.rest import wait_enriched

from .test_mcp_http import serve_adapter, session

Db = psycopg.AsyncConnection[dict[str, Any]]


def token() -> str:
    return f"zq{uuid.uuid4().hex[:10]}"


async def store(keyed: Keyed, namespace: str, content: str, **fields: Any) -> str:
    reply = await keyed.admin.post(
        "/api/memories", json={"content": content, "namespace": namespace, **fields}
    )
    assert reply.status_code == 201, reply.text
    memory_id: str = reply.json()["id"]
    return memory_id


async def pair(keyed: Keyed) -> tuple[str, str]:
    """A memory in ``a`` and one in ``b`` that have nothing in common (so enrichment joins
    them by nothing of its own)."""
    in_a = await store(keyed, keyed.a, f"Team a ships the mobile app on Thursdays {token()}.")
    in_b = await store(keyed, keyed.b, f"Payroll b: salaries are paid on the 25th {token()}.")
    return in_a, in_b


async def contradiction(db: Db, a: str, b: str) -> str:
    """The contradiction between ``a`` and ``b``: recorded here, or the one enrichment already
    recorded for the pair (one row per unordered pair)."""
    await db.execute(
        "INSERT INTO contradictions (id, memory_a_id, memory_b_id, description, kind, score) "
        "VALUES (%s, %s, %s, 'the two disagree', 'negation', 0.9) ON CONFLICT DO NOTHING",
        (new_id(), a, b),
    )
    cur = await db.execute(
        "SELECT id FROM contradictions WHERE least(memory_a_id, memory_b_id) = least(%s, %s) "
        "AND greatest(memory_a_id, memory_b_id) = greatest(%s, %s)",
        (a, b, a, b),
    )
    row = await cur.fetchone()
    assert row is not None
    contradiction_id: str = row["id"]
    return contradiction_id


async def is_active(keyed: Keyed, memory_id: str) -> bool:
    reply = await keyed.admin.get(f"/api/memories/{memory_id}")
    assert reply.status_code == 200, reply.text
    active: bool = reply.json()["is_active"]
    return active


def listed_ids(reply: Any) -> set[str]:
    assert reply.status_code == 200, reply.text
    return {item["id"] for item in reply.json()}


# Contradictions


async def test_a_contradiction_with_one_end_elsewhere_is_not_listed_read_or_resolved(
    keyed: Keyed, stack_db: Db
) -> None:
    in_a, in_b = await pair(keyed)
    both_ways = [await contradiction(stack_db, in_a, in_b)]
    other_a = await store(keyed, keyed.a, f"Team a tests on staging first {token()}.")
    other_b = await store(keyed, keyed.b, f"Payroll b uses the bank's SFTP drop {token()}.")
    both_ways.append(await contradiction(stack_db, other_b, other_a))  # b's memory first
    for contradiction_id in both_ways:
        for client in (keyed.rw, keyed.ro):
            for params in ({"status": "all"}, {"status": "all", "namespace": keyed.a}):
                assert contradiction_id not in listed_ids(
                    await client.get("/api/contradictions", params=params)
                )
            got = await client.get(f"/api/contradictions/{contradiction_id}")
            assert got.status_code == 404, got.text
        for body in (
            {"status": "resolved", "keep_id": in_a},
            {"status": "resolved", "keep_id": other_a},
            {"status": "resolved"},
            {"status": "dismissed"},
        ):
            changed = await keyed.rw.patch(f"/api/contradictions/{contradiction_id}", json=body)
            assert changed.status_code == 404, changed.text
    # Nothing was archived and nothing changed.
    assert await is_active(keyed, in_b)
    assert await is_active(keyed, other_b)
    cur = await stack_db.execute(
        "SELECT count(*) AS n FROM contradictions WHERE id = ANY(%s) AND status = 'pending'",
        (both_ways,),
    )
    assert (await cur.fetchone() or {})["n"] == 2

    # The all-namespaces key sees and resolves them.
    assert set(both_ways) <= listed_ids(
        await keyed.admin.get("/api/contradictions", params={"status": "all"})
    )
    resolved = await keyed.admin.patch(
        f"/api/contradictions/{both_ways[0]}", json={"status": "resolved", "keep_id": in_a}
    )
    assert resolved.status_code == 200, resolved.text
    assert not await is_active(keyed, in_b)


async def test_keep_id_from_another_namespace_is_not_found(keyed: Keyed, stack_db: Db) -> None:
    in_a = await store(keyed, keyed.a, f"Team a deploys with Helm {token()}.")
    also_a = await store(keyed, keyed.a, f"Team a never deploys with Helm {token()}.")
    _, in_b = await pair(keyed)
    own = await contradiction(stack_db, in_a, also_a)
    assert (await keyed.rw.get(f"/api/contradictions/{own}")).status_code == 200
    refused = await keyed.rw.patch(
        f"/api/contradictions/{own}", json={"status": "resolved", "keep_id": in_b}
    )
    assert refused.status_code == 404, refused.text
    assert refused.json()["field"] == "keep_id"
    # A keep_id of its own namespace works.
    kept = await keyed.rw.patch(
        f"/api/contradictions/{own}", json={"status": "resolved", "keep_id": in_a}
    )
    assert kept.status_code == 200, kept.text
    assert not await is_active(keyed, also_a)


# Links


async def test_a_link_into_another_namespace_cannot_be_deleted_or_listed(keyed: Keyed) -> None:
    in_a, in_b = await pair(keyed)
    made = await keyed.admin.post(
        f"/api/memories/{in_a}/links", json={"target_id": in_b, "link_type": "related"}
    )
    assert made.status_code == 201, made.text
    for source, target in ((in_a, in_b), (in_b, in_a)):
        removed = await keyed.rw.delete(f"/api/memories/{source}/links/{target}")
        assert removed.status_code == 404, removed.text
    assert in_b not in (await keyed.rw.get(f"/api/memories/{in_a}/links")).text
    assert in_b in (await keyed.admin.get(f"/api/memories/{in_a}/links")).text
    # A link cannot be made into b either (the body's target_id is looked up).
    denied = await keyed.rw.post(f"/api/memories/{in_a}/links", json={"target_id": in_b})
    assert denied.status_code == 404, denied.text
    removed = await keyed.admin.delete(f"/api/memories/{in_a}/links/{in_b}")
    assert removed.status_code == 200, removed.text
    assert removed.json()["deleted"] is True


async def test_a_namespace_export_keeps_only_objects_with_both_ends_inside(
    keyed: Keyed, stack_db: Db
) -> None:
    in_a, in_b = await pair(keyed)
    also_a = await store(keyed, keyed.a, f"Team a reviews every release note {token()}.")
    for target in (in_b, also_a):
        made = await keyed.admin.post(f"/api/memories/{in_a}/links", json={"target_id": target})
        assert made.status_code == 201, made.text
    crossing = await contradiction(stack_db, in_a, in_b)
    inside = await contradiction(stack_db, in_a, also_a)
    for client in (keyed.rw, keyed.admin):
        exported = await client.get("/api/export", params={"namespace": keyed.a})
        assert exported.status_code == 200, exported.text
        body = exported.json()
        links = {(r["source_id"], r["target_id"]) for r in body["memory_links"]}
        assert (in_a, also_a) in links
        assert (in_a, in_b) not in links
        ids = {r["id"] for r in body["contradictions"]}
        assert inside in ids
        assert crossing not in ids
        assert in_b not in exported.text


# Supersession, consolidation, relationships, goals


async def test_decisions_do_not_name_what_they_superseded_in_another_namespace(
    keyed: Keyed, stack_db: Db
) -> None:
    decision = await store(
        keyed, keyed.a, f"Decision {token()}: we release weekly.", content_type="decision"
    )
    _, in_b = await pair(keyed)
    await stack_db.execute("UPDATE memories SET superseded_by = %s WHERE id = %s", (decision, in_b))
    params = {"mode": "decisions", "namespace": keyed.a}

    def supersedes(reply: Any) -> list[str]:
        assert reply.status_code == 200, reply.text
        rows = {row["id"]: row for row in reply.json()["decisions"]}
        return list(rows[decision]["supersedes"])

    assert supersedes(await keyed.rw.get("/api/timeline", params=params)) == []
    assert supersedes(await keyed.admin.get("/api/timeline", params=params)) == [in_b]


async def test_a_consolidation_with_a_member_elsewhere_is_not_listed(
    keyed: Keyed, stack_db: Db
) -> None:
    in_a, in_b = await pair(keyed)
    summary = await store(keyed, keyed.a, f"Summary of release habits {token()}.")
    crossing, inside = new_id(), new_id()
    for consolidation_id, members in ((crossing, [in_a, in_b]), (inside, [in_a])):
        await stack_db.execute(
            "INSERT INTO consolidations (id, namespace, summary_id, source_ids, strategy, "
            "memories_merged) VALUES (%s, %s, %s, %s, 'similarity', %s)",
            (consolidation_id, keyed.a, summary, members, len(members)),
        )
    for client in (keyed.rw, keyed.ro):
        seen = listed_ids(await client.get("/api/consolidations", params={"limit": 100}))
        assert inside in seen
        assert crossing not in seen
    everything = listed_ids(
        await keyed.admin.get("/api/consolidations", params={"namespace": keyed.a, "limit": 100})
    )
    assert {inside, crossing} <= everything


async def test_a_relationship_stated_by_a_memory_elsewhere_is_not_shown(
    keyed: Keyed, stack_db: Db
) -> None:
    _, in_b = await pair(keyed)
    ends = []
    for name in (f"Helm-{token()}", f"Argo-{token()}"):
        made = await keyed.admin.post(
            "/api/entities", json={"name": name, "type": "technology", "namespace": keyed.a}
        )
        assert made.status_code == 201, made.text
        ends.append(made.json()["id"])
    secret = f"b-only context {token()}"
    await stack_db.execute(
        "INSERT INTO entity_relationships (id, source_entity_id, target_entity_id, relationship,"
        " confidence, memory_id, context) VALUES (%s, %s, %s, 'uses', 0.9, %s, %s)",
        (new_id(), ends[0], ends[1], in_b, secret),
    )
    mine = await keyed.rw.get(f"/api/entities/{ends[0]}/relationships")
    assert mine.status_code == 200, mine.text
    assert secret not in mine.text
    assert in_b not in mine.text
    assert secret in (await keyed.admin.get(f"/api/entities/{ends[0]}/relationships")).text


async def test_a_goals_progress_does_not_count_or_show_memories_elsewhere(
    keyed: Keyed, stack_db: Db
) -> None:
    made = await keyed.admin.post(
        "/api/goals", json={"title": f"Ship weekly {token()}", "namespace": keyed.a}
    )
    assert made.status_code == 201, made.text
    goal_id = made.json()["id"]
    in_a, in_b = await pair(keyed)
    for memory_id in (in_a, in_b):  # enrichment may link a memory to the goal on its own
        await wait_enriched(keyed.admin, memory_id)
    await stack_db.execute(
        "INSERT INTO goal_links (goal_id, memory_id, relevance, kind) "
        "VALUES (%s, %s, 0.9, 'explicit') ON CONFLICT DO NOTHING",
        (goal_id, in_b),
    )
    cur = await stack_db.execute(
        "SELECT count(*) FILTER (WHERE m.namespace = %s) AS own, count(*) AS every "
        "FROM goal_links l JOIN memories m ON m.id = l.memory_id WHERE l.goal_id = %s",
        (keyed.a, goal_id),
    )
    counts = await cur.fetchone()
    assert counts is not None
    mine = await keyed.rw.get(f"/api/goals/{goal_id}")
    assert mine.status_code == 200, mine.text
    assert mine.json()["progress_count"] == counts["own"]
    assert in_b not in mine.text
    everything = await keyed.admin.get(f"/api/goals/{goal_id}")
    assert everything.json()["progress_count"] == counts["every"] == counts["own"] + 1


async def entity_in(keyed: Keyed, namespace: str, name: str) -> str:
    made = await keyed.admin.post(
        "/api/entities",
        json={"name": f"{name}-{token()}", "type": "technology", "namespace": namespace},
    )
    assert made.status_code == 201, made.text
    entity_id: str = made.json()["id"]
    return entity_id


async def relationship(
    db: Db, source: str, target: str, relationship: str, stated_by: str | None
) -> None:
    await db.execute(
        "INSERT INTO entity_relationships (id, source_entity_id, target_entity_id, relationship,"
        " confidence, memory_id, context) VALUES (%s, %s, %s, %s, 0.9, %s, 'stated there')",
        (new_id(), source, target, relationship, stated_by),
    )


def graph_edges(reply: Any) -> set[tuple[str, str, str]]:
    assert reply.status_code == 200, reply.text
    return {
        (r["source_id"], r["target_id"], r["relationship"]) for r in reply.json()["relationships"]
    }


async def test_the_entity_graph_shows_no_edge_with_an_end_or_its_memory_elsewhere(
    keyed: Keyed, exo_stack: Stack, stack_db: Db
) -> None:
    in_a, in_b = await pair(keyed)
    helm, argo = await entity_in(keyed, keyed.a, "Helm"), await entity_in(keyed, keyed.a, "Argo")
    payroll = await entity_in(keyed, keyed.b, "Payroll")
    inside = (helm, argo, "deploys")
    stated_elsewhere = (helm, argo, "replaces")  # both ends in a, said by b's memory
    crossing = (helm, payroll, "pays")  # one end in b
    await relationship(stack_db, *inside, stated_by=in_a)
    await relationship(stack_db, *stated_elsewhere, stated_by=in_b)
    await relationship(stack_db, *crossing, stated_by=None)
    # Above 1,000 entities the graph is read by another statement: both are asked for.
    for client in (keyed.rw, keyed.ro):
        for params in ({}, {"namespace": keyed.a}, {"limit": 5000}):
            shown = await client.get("/api/entities/graph", params=params)
            assert payroll not in shown.text
            edges = graph_edges(shown)
            assert inside in edges
            assert stated_elsewhere not in edges
            assert crossing not in edges
        analysed = await client.get("/api/entities/graph/analysis", params={"limit": 100})
        assert analysed.status_code == 200, analysed.text
        assert payroll not in analysed.text
    everything = graph_edges(await keyed.admin.get("/api/entities/graph", params={"limit": 5000}))
    assert {inside, stated_elsewhere, crossing} <= everything

    # The SQL holds the rule itself: asked for the edges of both namespaces' entities under
    # a's scope, the statement leaves out those with an end, or a stating memory, in b.
    pool = await open_pool(exo_stack.database_url, max_size=1)
    try:
        entered = scope.caller_scope.set(frozenset({keyed.a}))
        try:
            scoped_edges = await entity_repository.edges(pool, [helm, argo, payroll])
        finally:
            scope.caller_scope.reset(entered)
        every_edge = await entity_repository.edges(pool, [helm, argo, payroll])
    finally:
        await pool.close()
    as_triples = {(e.source_id, e.target_id, e.relationship) for e in scoped_edges}
    assert as_triples == {inside}
    assert {(e.source_id, e.target_id, e.relationship) for e in every_edge} == {
        inside,
        stated_elsewhere,
        crossing,
    }


def hierarchy_linked(reply: Any) -> dict[str, bool]:
    """Each epoch's and theme's ``linked`` flag, by id."""
    assert reply.status_code == 200, reply.text
    linked: dict[str, bool] = {}
    for epoch in reply.json()["epochs"]:
        linked[epoch["id"]] = epoch["linked"]
        for theme in epoch["themes"]:
            linked[theme["id"]] = theme["linked"]
    return linked


async def test_the_hierarchy_counts_no_elaborates_link_with_an_end_elsewhere(
    keyed: Keyed,
) -> None:
    in_a, in_b = await pair(keyed)
    epoch = await store(keyed, keyed.a, f"Epoch: the mobile rewrite {token()}.", tags=["epoch"])
    theme = await store(
        keyed, keyed.a, f"Theme: release trains for mobile {token()}.", tags=["narrative"]
    )
    own_epoch = await store(
        keyed, keyed.a, f"Epoch: the staging cluster {token()}.", tags=["epoch"]
    )
    for source, target in ((epoch, in_b), (in_b, theme), (own_epoch, in_a)):
        made = await keyed.admin.post(
            f"/api/memories/{source}/links", json={"target_id": target, "link_type": "elaborates"}
        )
        assert made.status_code == 201, made.text
    for client in (keyed.rw, keyed.ro):
        for params in ({}, {"namespace": keyed.a}):
            linked = hierarchy_linked(await client.get("/api/hierarchy", params=params))
            assert linked[epoch] is False  # its only link leads into b
            assert linked[theme] is False  # its only link comes from b
            assert linked[own_epoch] is True
    everything = hierarchy_linked(
        await keyed.admin.get("/api/hierarchy", params={"namespace": keyed.a})
    )
    assert everything[epoch] is everything[theme] is everything[own_epoch] is True


# Over MCP: the adapter speaks to the gateway only, so one case shows the path is covered.


async def test_resolving_a_crossing_contradiction_over_mcp_fails(
    keyed: Keyed, stack_db: Db
) -> None:
    in_a, in_b = await pair(keyed)
    contradiction_id = await contradiction(stack_db, in_a, in_b)
    async with (
        serve_adapter(keyed.url) as url,
        session(url, {"Authorization": f"Bearer {keyed.rw_key}"}) as call,
    ):
        listed = await call("memory_contradictions", status="all", namespace=keyed.a)
        assert contradiction_id not in "".join(
            c.text for c in listed.content if isinstance(c, TextContent)
        )
        resolved = await call("memory_contradictions", resolve_id=contradiction_id, keep_id=in_a)
        assert resolved.is_error
    assert await is_active(keyed, in_b)


# The second line of defence: the services themselves, called with the key's scope.


def scoped(namespaces: set[str]) -> tuple[tuple[str, str], ...]:
    return ((scope.SCOPE_HEADER, scope.encode(frozenset(namespaces))),)


async def test_the_services_refuse_a_crossing_object_on_their_own(
    keyed: Keyed, exo_stack: Stack, stack_db: Db
) -> None:
    in_a, in_b = await pair(keyed)
    contradiction_id = await contradiction(stack_db, in_a, in_b)
    made = await keyed.admin.post(f"/api/memories/{in_a}/links", json={"target_id": in_b})
    assert made.status_code == 201, made.text
    meta = scoped({keyed.a})
    maintenance = open_channel(f"127.0.0.1:{exo_stack.config.grpc_ports['maintenance']}")
    ingest = open_channel(f"127.0.0.1:{exo_stack.config.grpc_ports['ingest']}")
    try:
        jobs = maintenance_pb2_grpc.MaintenanceStub(maintenance)
        with pytest.raises(grpc.aio.AioRpcError) as missing:
            await jobs.GetContradiction(
                maintenance_pb2.RecordRef(id=contradiction_id), metadata=meta
            )
        assert missing.value.code() == grpc.StatusCode.NOT_FOUND
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await jobs.UpdateContradiction(
                maintenance_pb2.UpdateContradictionRequest(
                    id=contradiction_id, status="resolved", keep_id=in_a
                ),
                metadata=meta,
            )
        assert refused.value.code() == grpc.StatusCode.NOT_FOUND
        listed = await jobs.ListContradictions(
            maintenance_pb2.ListRecordsRequest(status="all", limit=200), metadata=meta
        )
        assert contradiction_id not in listed.json

        links = ingest_pb2_grpc.IngestStub(ingest)
        with pytest.raises(grpc.aio.AioRpcError) as kept:
            await links.DeleteLink(
                ingest_pb2.DeleteLinkRequest(source_id=in_a, target_id=in_b), metadata=meta
            )
        assert kept.value.code() == grpc.StatusCode.NOT_FOUND
    finally:
        await maintenance.close()
        await ingest.close()
    assert await is_active(keyed, in_b)
    assert in_b in (await keyed.admin.get(f"/api/memories/{in_a}/links")).text
