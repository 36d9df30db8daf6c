"""A key limited to namespace ``a`` never reads or writes ``b``: not by naming ``b`` in any
spelling of the request, not by leaving the namespace out or null, and not by following ids
or edges (links, lineage, linked context, entities) that lead into ``b``. The services enforce
the same scope on their own, so a gateway bug alone does not leak (the last tests call them
directly, as a gateway with a bug would)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import grpc
import psycopg
import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from exocortex.core import scope
from exocortex.core.rpc.client import open_channel
from exocortex.core.runtime.stack import Stack
from exocortex.proto.v1 import ingest_pb2, ingest_pb2_grpc, retrieval_pb2, retrieval_pb2_grpc
from exocortex.testing.keyed import Keyed
from exocortex.testing.rest import wait_enriched


def token() -> str:
    return f"zq{uuid.uuid4().hex[:10]}"


async def store(keyed: Keyed, namespace: str, content: str) -> str:
    reply = await keyed.admin.post(
        "/api/memories", json={"content": content, "namespace": namespace}
    )
    assert reply.status_code == 201, reply.text
    memory_id: str = reply.json()["id"]
    return memory_id


async def everything_about(keyed: Keyed, word: str) -> str:
    """What the all-namespaces key finds for ``word``, as text (the search always returns the
    nearest memories; only the word's presence says whether it was stored)."""
    found = await keyed.admin.post("/api/memories/search", json={"query": word, "limit": 100})
    assert found.status_code == 200, found.text
    return found.text


def result_ids(reply: Any) -> set[str]:
    assert reply.status_code == 200, reply.text
    return {r["memory"]["id"] for r in reply.json()["results"]}


async def test_search_without_or_with_null_namespace_keeps_to_the_keys_namespaces(
    keyed: Keyed,
) -> None:
    word = token()
    in_a = await store(keyed, keyed.a, f"The {word} ledger is reconciled every Friday.")
    in_b = await store(keyed, keyed.b, f"The {word} ledger is audited every Monday.")
    for body in ({"query": word}, {"query": word, "namespace": None}):
        for client in (keyed.rw, keyed.ro):
            found = result_ids(await client.post("/api/memories/search", json=body))
            assert in_a in found
            assert in_b not in found
        graph = await keyed.rw.post("/api/memories/context-graph", json=body)
        assert result_ids(graph) == {in_a}
    # The all-namespaces key still sees both.
    assert {in_a, in_b} <= result_ids(
        await keyed.admin.post("/api/memories/search", json={"query": word})
    )
    named = await keyed.rw.post("/api/memories/search", json={"query": word, "namespace": keyed.b})
    assert named.status_code == 403


@pytest.mark.parametrize(
    "content_type",
    ["application/JSON", "Application/Json; charset=utf-8", "application/vnd.api+json", None],
)
async def test_any_spelling_of_a_json_body_is_authorised_as_parsed(
    keyed: Keyed, content_type: str | None
) -> None:
    word = token()
    body = json.dumps({"content": f"Written to b via {word}", "namespace": keyed.b}).encode()
    headers = {"content-type": content_type} if content_type else {}
    # httpx adds no content type to raw bytes, so None really sends none.
    write = await keyed.rw.post("/api/memories", content=body, headers=headers)
    assert write.status_code == 403, write.text
    search = json.dumps({"query": word, "namespace": keyed.b}).encode()
    read = await keyed.ro.post("/api/memories/search", content=search, headers=headers)
    assert read.status_code == 403, read.text
    assert word not in await everything_about(keyed, word)


async def test_a_body_that_is_not_json_to_the_route_is_refused_not_run(keyed: Keyed) -> None:
    word = token()
    body = json.dumps({"content": f"Sneaked into b {word}", "namespace": keyed.b})
    reply = await keyed.rw.post(
        "/api/memories", content=body.encode(), headers={"content-type": "text/plain"}
    )
    assert 400 <= reply.status_code < 500
    assert word not in await everything_about(keyed, word)


async def test_links_and_linked_context_never_lead_into_another_namespace(keyed: Keyed) -> None:
    word = token()
    in_a = await store(keyed, keyed.a, f"Deploy notes {word}: we ship with blue-green releases.")
    in_b = await store(keyed, keyed.b, "Secret b: the payroll export runs on the third.")
    link = await keyed.admin.post(
        f"/api/memories/{in_a}/links", json={"target_id": in_b, "link_type": "related"}
    )
    assert link.status_code == 201, link.text

    links = await keyed.rw.get(f"/api/memories/{in_a}/links")
    assert links.status_code == 200
    assert in_b not in links.text
    assert (await keyed.rw.get(f"/api/memories/{in_b}/links")).status_code == 404
    assert in_b in (await keyed.admin.get(f"/api/memories/{in_a}/links")).text

    searched = await keyed.rw.post(
        "/api/memories/search", json={"query": word, "include_linked": True}
    )
    assert searched.status_code == 200
    assert in_b not in searched.text
    assert "payroll" not in searched.text
    graph = await keyed.rw.post(
        "/api/memories/context-graph", json={"query": word, "namespace": keyed.a}
    )
    assert graph.status_code == 200
    assert in_b not in graph.text
    # The same walk with the all-namespaces key does follow the link: the test can fail.
    admin_graph = await keyed.admin.post(
        "/api/memories/context-graph", json={"query": word, "namespace": keyed.a}
    )
    assert in_b in admin_graph.text


async def test_lineage_never_shows_another_namespace(
    keyed: Keyed, stack_db: psycopg.AsyncConnection[dict[str, Any]]
) -> None:
    in_a = await store(keyed, keyed.a, f"Decision {token()}: keep Postgres 15 for now.")
    in_b = await store(keyed, keyed.b, f"Decision {token()}: move the b team to Postgres 17.")
    await stack_db.execute("UPDATE memories SET superseded_by = %s WHERE id = %s", (in_b, in_a))
    await stack_db.commit()

    def lineage(memory_id: str) -> dict[str, Any]:
        return {"mode": "lineage", "memory_id": memory_id}

    def chain(reply: Any) -> list[str]:
        assert reply.status_code == 200, reply.text
        return [entry["id"] for entry in reply.json()["lineage"]]

    own = await keyed.rw.get("/api/timeline", params=lineage(in_a))
    assert chain(own) == [in_a]
    assert "Postgres 17" not in own.text
    assert chain(await keyed.admin.get("/api/timeline", params=lineage(in_a))) == [in_a, in_b]
    other = await keyed.ro.get("/api/timeline", params=lineage(in_b))
    assert other.status_code == 404


async def test_entity_memories_keep_to_the_keys_namespaces(
    keyed: Keyed, stack_db: psycopg.AsyncConnection[dict[str, Any]]
) -> None:
    in_a = await store(keyed, keyed.a, f"Fastify serves the public API {token()}.")
    in_b = await store(keyed, keyed.b, f"Fastify also runs the b billing service {token()}.")
    created = await keyed.admin.post(
        "/api/entities",
        json={"name": f"Fastify-{token()}", "type": "technology", "namespace": keyed.a},
    )
    assert created.status_code == 201, created.text
    entity_id = created.json()["id"]
    other = await keyed.admin.post(
        "/api/entities",
        json={"name": f"Billing-{token()}", "type": "project", "namespace": keyed.b},
    )
    assert other.status_code == 201, other.text
    for memory_id in (in_a, in_b):  # enrichment replaces a memory's mentions when it finishes
        await wait_enriched(keyed.admin, memory_id)
    for memory_id in (in_a, in_b):
        await stack_db.execute(
            "INSERT INTO memory_entities (memory_id, entity_id, relevance) VALUES (%s, %s, 1.0)",
            (memory_id, entity_id),
        )
    await stack_db.commit()

    mine = await keyed.rw.get(f"/api/entities/{entity_id}/memories")
    assert mine.status_code == 200, mine.text
    assert in_a in mine.text
    assert in_b not in mine.text
    assert in_b in (await keyed.admin.get(f"/api/entities/{entity_id}/memories")).text
    foreign = other.json()["id"]
    assert (await keyed.ro.get(f"/api/entities/{foreign}")).status_code == 404
    assert (await keyed.ro.get(f"/api/entities/{foreign}/memories")).status_code == 404


async def test_reads_and_writes_by_id_in_another_namespace_are_not_found(keyed: Keyed) -> None:
    in_b = await store(keyed, keyed.b, f"Only b may read this {token()}.")
    assert (await keyed.ro.get(f"/api/memories/{in_b}")).status_code == 404
    patched = await keyed.rw.patch(f"/api/memories/{in_b}", json={"importance": 0.9})
    assert patched.status_code == 404
    archived = await keyed.rw.post(f"/api/memories/{in_b}/archive")
    assert archived.status_code == 404
    assert (await keyed.admin.get(f"/api/memories/{in_b}")).json()["is_active"] is True


# The second line of defence: the services themselves, called as a gateway with a bug would
# (its own namespace check skipped, the key's scope still sent).


def scoped(namespaces: set[str]) -> tuple[tuple[str, str], ...]:
    return ((scope.SCOPE_HEADER, scope.encode(frozenset(namespaces))),)


async def test_retrieval_keeps_to_the_callers_scope_on_its_own(
    keyed: Keyed, exo_stack: Stack
) -> None:
    word = token()
    in_a = await store(keyed, keyed.a, f"Service-level check {word} for namespace a.")
    in_b = await store(keyed, keyed.b, f"Service-level check {word} for namespace b.")
    channel = open_channel(f"127.0.0.1:{exo_stack.config.grpc_ports['retrieval']}")
    try:
        stub = retrieval_pb2_grpc.RetrievalStub(channel)
        meta = scoped({keyed.a})
        got = await stub.GetMemories(
            retrieval_pb2.GetMemoriesRequest(ids=[in_a, in_b]), metadata=meta
        )
        assert [m.id for m in got.memories] == [in_a]
        assert list(got.missing_ids) == [in_b]
        found = await stub.Search(retrieval_pb2.SearchRequest(query=word, limit=10), metadata=meta)
        assert {r.memory.id for r in found.results} == {in_a}
        with pytest.raises(grpc.aio.AioRpcError) as denied:
            await stub.Search(
                retrieval_pb2.SearchRequest(query=word, namespace=keyed.b), metadata=meta
            )
        assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
        # Two namespaces, none named: both are searched, nothing else.
        both = await stub.Search(
            retrieval_pb2.SearchRequest(query=word, limit=10),
            metadata=scoped({keyed.a, keyed.b}),
        )
        assert {r.memory.id for r in both.results} == {in_a, in_b}
    finally:
        await channel.close()


async def test_ingest_refuses_a_write_outside_the_callers_scope(
    keyed: Keyed, exo_stack: Stack
) -> None:
    channel = open_channel(f"127.0.0.1:{exo_stack.config.grpc_ports['ingest']}")
    try:
        stub = ingest_pb2_grpc.IngestStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as denied:
            await stub.StoreMemory(
                ingest_pb2.StoreMemoryRequest(content="Not for b " + token(), namespace=keyed.b),
                metadata=scoped({keyed.a}),
            )
        assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
    finally:
        await channel.close()


CHAT_KEYS = ("ai.api_key", "ai.provider", "ai.model", "ai.base_url")


async def test_chat_without_a_namespace_sends_only_the_keys_namespaces_to_the_llm(
    keyed: Keyed, httpserver: HTTPServer
) -> None:
    word = token()
    await store(keyed, keyed.a, f"The {word} bus of team a is NATS JetStream.")
    await store(keyed, keyed.b, f"The {word} bus of team b is Kafka, keep this to b.")
    prompts: list[bytes] = []

    def handler(request: Request) -> Response:
        prompts.append(request.get_data())
        body = {"choices": [{"message": {"content": "NATS [1]"}}]}
        return Response(json.dumps(body), content_type="application/json")

    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(handler)
    settings = {
        "ai.api_key": "sk-test-123456",
        "ai.provider": "openai",
        "ai.base_url": httpserver.url_for("/"),
    }
    assert (await keyed.admin.patch("/api/settings", json=settings)).status_code == 200
    try:
        for namespace in ({}, {"namespace": None}):
            reply = await keyed.rw.post(
                "/api/chat", json={"message": f"Which {word} bus do we use?", **namespace}
            )
            assert reply.status_code == 200, reply.text
        assert len(prompts) == 2
        for prompt in prompts:
            assert b"NATS JetStream" in prompt
            assert b"Kafka" not in prompt
    finally:
        await keyed.admin.patch("/api/settings", json=dict.fromkeys(CHAT_KEYS, ""))
