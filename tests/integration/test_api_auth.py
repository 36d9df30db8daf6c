"""API keys on a gateway started in-process in front of the session stack's services."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
import pytest_asyncio

from exocortex.core.runtime.stack import Stack
from exocortex.gateway.app import create_app
from exocortex.gateway.auth import KeyFormatError, parse_keys
from exocortex.gateway.settings import GatewaySettings
from exocortex.testing.gateway import gateway_env, serve_gateway

RW = "rw-key-0123456789abcdef"
RO = "ro-key-0123456789abcdef"
SCOPED = "scoped-key-0123456789ab"


@pytest_asyncio.fixture
async def guarded(exo_stack: Stack, namespace: str) -> AsyncIterator[str]:
    keys = f"{RW},{RO}:ro,{SCOPED}:rw:{namespace}|{namespace}-b"
    async with serve_gateway(exo_stack, EXO_API_KEYS=keys) as url:
        yield url


async def test_keys_are_required_and_checked(guarded: str) -> None:
    async with httpx.AsyncClient(base_url=guarded) as client:
        missing = await client.get("/api/settings")
        assert missing.status_code == 401
        assert missing.headers["www-authenticate"] == "Bearer"
        assert missing.headers["content-type"].startswith("application/problem+json")
        wrong = await client.get("/api/settings", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        assert "nope" not in wrong.text
        bearer = await client.get("/api/settings", headers={"Authorization": f"Bearer {RW}"})
        assert bearer.status_code == 200
        header = await client.get("/api/settings", headers={"X-API-Key": RW})
        assert header.status_code == 200
        # Health checks and metrics stay open.
        assert (await client.get("/health")).status_code == 200
        assert (await client.get("/metrics")).status_code == 200


async def test_read_only_key(guarded: str, namespace: str) -> None:
    async with httpx.AsyncClient(base_url=guarded, headers={"X-API-Key": RO}) as client:
        listed = await client.get("/api/goals", params={"namespace": namespace})
        assert listed.status_code == 200
        searched = await client.post(
            "/api/memories/search", json={"query": "anything", "namespace": namespace}
        )
        assert searched.status_code == 200
        write = await client.post("/api/goals", json={"title": "x", "namespace": namespace})
        assert write.status_code == 403
        assert "read-only" in write.json()["detail"]
        settings = await client.patch("/api/settings", json={"x.y": "z"})
        assert settings.status_code == 403


async def test_scoped_key_stays_in_its_namespaces(guarded: str, namespace: str) -> None:
    other = f"{namespace}-other"
    async with httpx.AsyncClient(base_url=guarded, headers={"X-API-Key": RW}) as admin:
        foreign_goal = (
            await admin.post("/api/goals", json={"title": "theirs", "namespace": other})
        ).json()
        foreign_memory = (
            await admin.post("/api/memories", json={"content": "Their secret", "namespace": other})
        ).json()
    async with httpx.AsyncClient(base_url=guarded, headers={"X-API-Key": SCOPED}) as client:
        own = await client.post("/api/goals", json={"title": "mine", "namespace": namespace})
        assert own.status_code == 201
        second = await client.get("/api/goals", params={"namespace": f"{namespace}-b"})
        assert second.status_code == 200

        create_elsewhere = await client.post("/api/goals", json={"title": "x", "namespace": other})
        assert create_elsewhere.status_code == 403
        assert create_elsewhere.json()["field"] == "namespace"
        # Omitting the namespace means "default", which this key does not have.
        default = await client.post("/api/goals", json={"title": "x"})
        assert default.status_code == 403
        listed = await client.get("/api/goals", params={"namespace": other})
        assert listed.status_code == 403
        search = await client.post(
            "/api/memories/search", json={"query": "secret", "namespace": other}
        )
        assert search.status_code == 403
        # A search naming no namespace spans every namespace the key may see, and no other.
        everywhere = await client.post("/api/memories/search", json={"query": "secret"})
        assert everywhere.status_code == 200
        seen = {r["memory"]["namespace"] for r in everywhere.json()["results"]}
        assert seen <= {namespace, f"{namespace}-b"}
        mine = await client.post(
            "/api/memories/search", json={"query": "secret", "namespace": namespace}
        )
        assert mine.status_code == 200
        assert foreign_memory["id"] not in [r["memory"]["id"] for r in mine.json()["results"]]

        # Ids of another namespace look exactly like ids that do not exist.
        for method, path in (
            ("GET", f"/api/goals/{foreign_goal['id']}"),
            ("DELETE", f"/api/goals/{foreign_goal['id']}"),
            ("GET", f"/api/memories/{foreign_memory['id']}"),
        ):
            reply = await client.request(method, path)
            assert reply.status_code == 404, (method, path)
        progress = await client.post(
            f"/api/goals/{foreign_goal['id']}/progress", json={"content": "sneaky"}
        )
        assert progress.status_code == 404

        # Routes spanning every namespace need an all-namespaces key.
        assert (await client.get("/api/export")).status_code == 403
        assert (await client.get("/api/export", params={"namespace": namespace})).status_code == 200
        assert (await client.patch("/api/settings", json={"a.b": "c"})).status_code == 403

    async with httpx.AsyncClient(base_url=guarded, headers={"X-API-Key": RW}) as admin:
        still = await admin.get(f"/api/goals/{foreign_goal['id']}")
        assert still.status_code == 200


def test_key_format() -> None:
    ring = parse_keys(f" {RW} , {RO}:ro , {SCOPED}:rw:a|b ")
    rw, ro, scoped = (ring.find(k) for k in (RW, RO, SCOPED))
    assert rw is not None
    assert rw.can_write
    assert rw.namespaces is None
    assert ro is not None
    assert not ro.can_write
    assert scoped is not None
    assert scoped.namespaces == frozenset({"a", "b"})
    assert ring.find("unknown-key-0123456789") is None
    for bad in ("short", f"{RW}:admin", f"{RW}:rw:", f"{RW}:rw:a:b"):
        with pytest.raises(KeyFormatError) as err:
            parse_keys(bad)
        assert RW not in str(err.value)


def gateway_settings(stack: Stack, **env: str) -> GatewaySettings:
    """Settings as the stack's gateway gets them, with ``env`` (EXO_* names) on top."""
    with pytest.MonkeyPatch.context() as patch:
        for key, value in gateway_env(stack, **env).items():
            if key.startswith("EXO_"):
                patch.setenv(key, value)
        return GatewaySettings()


def test_refuses_a_public_bind_without_keys(exo_stack: Stack) -> None:
    with pytest.raises(KeyFormatError, match="EXO_API_KEYS is required"):
        create_app(gateway_settings(exo_stack, EXO_GATEWAY_HOST="0.0.0.0", EXO_API_KEYS=""))
    # With a key it starts; on loopback keys are optional.
    create_app(gateway_settings(exo_stack, EXO_GATEWAY_HOST="0.0.0.0", EXO_API_KEYS=RW))
    create_app(gateway_settings(exo_stack, EXO_GATEWAY_HOST="127.0.0.1", EXO_API_KEYS=""))
