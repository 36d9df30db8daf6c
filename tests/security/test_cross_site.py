"""A page of another web site cannot change data through the user's browser (threat model:
cross-site requests). The gateway here has no API keys, as `exo up` runs it: the Host check
already stops DNS rebinding, and this is the other half, a cross-site form or ``no-cors`` fetch
posted straight at the loopback port. Requests are sent as the browser would send them (its
``Origin`` and ``Sec-Fetch-Site`` headers); programs send neither and keep working."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
import pytest_asyncio

from exocortex.core.runtime.stack import Stack
from exocortex.testing.gateway import serve_gateway

EVIL = "https://evil.example"
LISTED = "https://app.example"


@dataclass(frozen=True)
class Gateway:
    url: str
    client: httpx.AsyncClient

    @property
    def origin(self) -> str:
        return self.url


@pytest_asyncio.fixture
async def keyless(exo_stack: Stack) -> AsyncIterator[Gateway]:
    async with (
        serve_gateway(exo_stack, EXO_API_KEYS="", EXO_CORS_ORIGINS=LISTED) as url,
        httpx.AsyncClient(base_url=url, timeout=60.0) as client,
    ):
        yield Gateway(url, client)


def _assert_refused(reply: httpx.Response, header: str) -> None:
    assert reply.status_code == 403, reply.text
    assert reply.headers["content-type"] == "application/problem+json"
    problem = reply.json()
    assert problem["detail"].startswith("cross-site request refused"), problem
    assert problem["field"] == header
    # The refusal, like every answer, may not be framed either.
    assert reply.headers.get("x-frame-options") == "DENY"


async def _memories(gateway: Gateway, namespace: str) -> list[str]:
    reply = await gateway.client.get("/api/memories/recent", params={"namespace": namespace})
    assert reply.status_code == 200, reply.text
    return [m["content"] for m in reply.json()["results"]]


async def test_a_cross_site_form_post_starts_no_backup_nor_export(keyless: Gateway) -> None:
    before = (await keyless.client.get("/api/backups")).json()["backups"]
    # What a hidden <form enctype="text/plain" method="post"> on another site sends.
    form = {"Origin": EVIL, "Sec-Fetch-Site": "cross-site", "Content-Type": "text/plain"}
    for path in ("/api/backups", "/api/export/obsidian"):
        _assert_refused(await keyless.client.post(path, headers=form), "Origin")
    assert (await keyless.client.get("/api/backups")).json()["backups"] == before


async def test_a_foreign_origin_may_not_store_change_or_delete(
    keyless: Gateway, namespace: str
) -> None:
    stored = await keyless.client.post(
        "/api/memories", json={"content": "kept by the user", "namespace": namespace}
    )
    assert stored.status_code == 201, stored.text
    memory_id = stored.json()["id"]
    foreign = {"Origin": EVIL}
    body = json.dumps({"content": "planted by another site", "namespace": namespace})
    for content_type in ("text/plain", "application/json"):
        reply = await keyless.client.post(
            "/api/memories", content=body, headers={**foreign, "Content-Type": content_type}
        )
        _assert_refused(reply, "Origin")
    _assert_refused(
        await keyless.client.patch(
            f"/api/memories/{memory_id}", json={"content": "changed"}, headers=foreign
        ),
        "Origin",
    )
    _assert_refused(
        await keyless.client.delete(f"/api/memories/{memory_id}", headers=foreign), "Origin"
    )
    # A sandboxed frame or a file: page sends "null": never the gateway's own.
    _assert_refused(
        await keyless.client.post("/api/memories", content=body, headers={"Origin": "null"}),
        "Origin",
    )
    assert await _memories(keyless, namespace) == ["kept by the user"]


async def test_sec_fetch_site_cross_or_same_site_is_refused_without_origin(
    keyless: Gateway, namespace: str
) -> None:
    body = {"content": "planted without an origin", "namespace": namespace}
    for site in ("cross-site", "same-site"):
        reply = await keyless.client.post(
            "/api/memories", json=body, headers={"Sec-Fetch-Site": site}
        )
        _assert_refused(reply, "Sec-Fetch-Site")
    assert await _memories(keyless, namespace) == []


async def test_the_dashboard_listed_origins_and_programs_keep_working(
    keyless: Gateway, namespace: str
) -> None:
    senders = {
        # The dashboard served by this gateway: its own origin.
        "dashboard": {"Origin": keyless.origin, "Sec-Fetch-Site": "same-origin"},
        # A browser that leaves Origin out of a same-origin request, or a typed address.
        "same-origin": {"Sec-Fetch-Site": "same-origin"},
        "typed": {"Sec-Fetch-Site": "none"},
        # An origin listed in EXO_CORS_ORIGINS (cross-site to the browser, allowed here).
        "listed": {"Origin": LISTED, "Sec-Fetch-Site": "cross-site"},
        # The CLI, the MCP adapter, agents, curl: no browser headers at all.
        "program": {},
    }
    # Far apart in meaning, so none is taken for a duplicate of another.
    contents = {
        "dashboard": "The dashboard saved this note about sourdough starters.",
        "same-origin": "Quarterly tax filing is due on the fifteenth of April.",
        "typed": "The bicycle's rear derailleur needs a new cable.",
        "listed": "Kubernetes pods restart when the liveness probe fails.",
        "program": "Grandmother's birthday party is at the lake house.",
    }
    for name, headers in senders.items():
        reply = await keyless.client.post(
            "/api/memories",
            json={"content": contents[name], "namespace": namespace},
            headers=headers,
        )
        assert reply.status_code == 201, (name, reply.text)
    assert sorted(await _memories(keyless, namespace)) == sorted(contents.values())
    preflight = await keyless.client.options(
        "/api/memories",
        headers={"Origin": LISTED, "Access-Control-Request-Method": "POST"},
    )
    assert preflight.status_code == 200, preflight.text
    assert preflight.headers["access-control-allow-origin"] == LISTED


async def test_reads_from_a_foreign_origin_are_answered_but_not_shared(
    keyless: Gateway, namespace: str
) -> None:
    # A cross-site page can make the browser send a GET, but without CORS headers it cannot
    # read the answer; no GET route changes data, so the read is not refused.
    reply = await keyless.client.get(
        "/api/memories/recent",
        params={"namespace": namespace},
        headers={"Origin": EVIL, "Sec-Fetch-Site": "cross-site"},
    )
    assert reply.status_code == 200, reply.text
    assert "access-control-allow-origin" not in reply.headers
    assert reply.headers.get("x-frame-options") == "DENY"
