"""RAG chat: the missing-key answer, and the requests sent to each provider, checked against a
local HTTP server standing in for the provider (nothing leaves the machine)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import pytest_asyncio
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

CHAT_KEYS = ("ai.api_key", "ai.provider", "ai.model", "ai.base_url")


@pytest_asyncio.fixture
async def ai_settings(api: httpx.AsyncClient) -> AsyncIterator[None]:
    """Settings are global: clear the AI keys before and after each test."""
    await api.patch("/api/settings", json=dict.fromkeys(CHAT_KEYS, ""))
    yield
    await api.patch("/api/settings", json=dict.fromkeys(CHAT_KEYS, ""))


async def test_without_a_key_the_answer_names_it(
    api: httpx.AsyncClient, namespace: str, ai_settings: None
) -> None:
    reply = await api.post("/api/chat", json={"message": "hello", "namespace": namespace})
    assert reply.status_code == 400
    assert reply.json()["field"] == "ai.api_key"
    assert "ai.api_key" in reply.json()["detail"]


async def test_anthropic_request_carries_context_and_history(
    api: httpx.AsyncClient, namespace: str, ai_settings: None, httpserver: HTTPServer
) -> None:
    await api.post(
        "/api/memories",
        json={"content": "The event bus is NATS JetStream.", "namespace": namespace},
    )
    seen: list[Request] = []

    def handler(request: Request) -> Response:
        seen.append(request)
        body = {"content": [{"type": "text", "text": "NATS JetStream [1]"}]}
        return Response(json.dumps(body), content_type="application/json")

    httpserver.expect_request("/v1/messages", method="POST").respond_with_handler(handler)
    await api.patch(
        "/api/settings",
        json={"ai.api_key": "sk-ant-test-123456", "ai.base_url": httpserver.url_for("/")},
    )
    reply = await api.post(
        "/api/chat",
        json={
            "message": "Which event bus do we use?",
            "namespace": namespace,
            "history": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hey"}],
            "conversation_id": "c-1",
        },
    )
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["response"] == "NATS JetStream [1]"
    assert body["conversation_id"] == "c-1"
    assert body["provider"] == "anthropic"
    assert "NATS JetStream" in body["sources"][0]["preview"]

    sent = seen[0]
    assert sent.headers["x-api-key"] == "sk-ant-test-123456"
    assert sent.headers["anthropic-version"] == "2023-06-01"
    payload = sent.get_json()
    assert payload["max_tokens"] == 1024
    assert "The event bus is NATS JetStream." in payload["system"]
    assert payload["messages"] == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hey"},
        {"role": "user", "content": "Which event bus do we use?"},
    ]

    # Without a namespace, chat retrieves from every namespace, as search does.
    stored = await api.post(
        "/api/memories",
        json={"content": "The vrrplex cache sits in front of the ledger.", "namespace": namespace},
    )
    anywhere = await api.post(
        "/api/chat", json={"message": "Where does the vrrplex cache sit?", "limit": 20}
    )
    assert anywhere.status_code == 200, anywhere.text
    assert stored.json()["id"] in [s["id"] for s in anywhere.json()["sources"]]


async def test_openai_request_and_upstream_errors(
    api: httpx.AsyncClient, namespace: str, ai_settings: None, httpserver: HTTPServer
) -> None:
    seen: list[Request] = []

    def handler(request: Request) -> Response:
        seen.append(request)
        body = {"choices": [{"message": {"role": "assistant", "content": "no idea"}}]}
        return Response(json.dumps(body), content_type="application/json")

    httpserver.expect_oneshot_request("/v1/chat/completions").respond_with_handler(handler)
    await api.patch(
        "/api/settings",
        json={
            "ai.api_key": "sk-openai-test-987654",
            "ai.provider": "openai",
            "ai.model": "gpt-test",
            "ai.base_url": httpserver.url_for("/"),
        },
    )
    reply = await api.post("/api/chat", json={"message": "anything?", "namespace": namespace})
    assert reply.status_code == 200, reply.text
    assert reply.json()["response"] == "no idea"
    assert reply.json()["model"] == "gpt-test"
    sent = seen[0]
    assert sent.headers["authorization"] == "Bearer sk-openai-test-987654"
    payload = sent.get_json()
    assert payload["model"] == "gpt-test"
    assert payload["messages"][0]["role"] == "system"
    assert payload["messages"][-1] == {"role": "user", "content": "anything?"}

    httpserver.expect_oneshot_request("/v1/chat/completions").respond_with_json(
        {"error": {"message": "bad key sk-openai-test-987654"}}, status=401
    )
    rejected = await api.post("/api/chat", json={"message": "again", "namespace": namespace})
    assert rejected.status_code == 502
    assert "ai.api_key" in rejected.json()["detail"]
    assert "sk-openai" not in rejected.text
