"""Cross-cutting HTTP behaviour: body limits, CORS, error shapes, the dashboard's files."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx

from exocortex.core.runtime.stack import Stack
from exocortex.testing.gateway import serve_gateway


async def test_cors_is_off_by_default(api: httpx.AsyncClient) -> None:
    reply = await api.get("/api/settings", headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in reply.headers


async def test_cors_allows_exact_origins_only(exo_stack: Stack) -> None:
    allowed = "https://app.example"
    async with (
        serve_gateway(exo_stack, EXO_CORS_ORIGINS=f"{allowed}, http://localhost:5173") as url,
        httpx.AsyncClient(base_url=url) as client,
    ):
        ok = await client.get("/api/settings", headers={"Origin": allowed})
        assert ok.headers["access-control-allow-origin"] == allowed
        other = await client.get("/api/settings", headers={"Origin": "https://app.example.evil"})
        assert "access-control-allow-origin" not in other.headers
        preflight = await client.options(
            "/api/goals",
            headers={
                "Origin": allowed,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type",
            },
        )
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == allowed


async def test_body_limit_declared_and_streamed(exo_stack: Stack, namespace: str) -> None:
    async with (
        serve_gateway(exo_stack, EXO_MAX_BODY_BYTES="2000") as url,
        httpx.AsyncClient(base_url=url) as client,
    ):
        big = {"title": "x" * 3000, "namespace": namespace}
        declared = await client.post("/api/goals", json=big)
        assert declared.status_code == 413
        assert declared.headers["content-type"].startswith("application/problem+json")
        assert "2000 bytes" in declared.json()["detail"]

        async def chunks() -> AsyncIterator[bytes]:
            yield b'{"title": "'
            for _ in range(10):
                yield b"y" * 500
            yield b'"}'

        streamed = await client.post(
            "/api/goals", content=chunks(), headers={"content-type": "application/json"}
        )
        assert streamed.status_code == 413
        small = await client.post("/api/goals", json={"title": "ok", "namespace": namespace})
        assert small.status_code == 201


async def test_error_shapes(api: httpx.AsyncClient) -> None:
    invalid = await api.post(
        "/api/goals", content=b"{", headers={"content-type": "application/json"}
    )
    assert invalid.status_code == 400
    assert invalid.json()["detail"] == "Invalid JSON in request body"
    missing = await api.post("/api/goals", json={})
    body = missing.json()
    assert missing.status_code == 400
    assert body["field"] == "title"
    assert body["error"] == body["detail"]
    assert body["status"] == 400
    extra = await api.post("/api/goals", json={"title": "x", "colour": "red"})
    assert extra.status_code == 400
    assert extra.json()["field"] == "colour"
    too_many = await api.get("/api/goals", params={"limit": 100000})
    assert too_many.status_code == 400
    assert too_many.json()["field"] == "limit"
    unknown = await api.get("/api/nothing-here")
    assert unknown.status_code == 404
    assert unknown.headers["content-type"].startswith("application/problem+json")
    wrong_method = await api.put("/api/goals")
    assert wrong_method.status_code == 405


async def test_openapi_declares_auth_and_problems(api: httpx.AsyncClient) -> None:
    doc = (await api.get("/openapi.json")).json()
    assert set(doc["components"]["securitySchemes"]) == {"bearer", "apiKey"}
    goals = doc["paths"]["/api/goals"]["post"]
    assert {"bearer": []} in goals["security"]
    assert "application/problem+json" in goals["responses"]["400"]["content"]
    assert "422" not in goals["responses"]
    assert "/metrics" in doc["paths"]
    assert "security" not in doc["paths"]["/health"]["get"]


async def test_dashboard_files_with_spa_fallback(exo_stack: Stack, tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<html>dashboard</html>")
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "app.js").write_text("console.log(1)")
    async with (
        serve_gateway(exo_stack, EXO_GATEWAY_DASHBOARD_DIR=str(tmp_path)) as url,
        httpx.AsyncClient(base_url=url) as client,
    ):
        assert "dashboard" in (await client.get("/")).text
        assert (await client.get("/assets/app.js")).text == "console.log(1)"
        route = await client.get("/goals/123")
        assert route.status_code == 200
        assert "dashboard" in route.text
        api_miss = await client.get("/api/nothing-here")
        assert api_miss.status_code == 404
        assert api_miss.headers["content-type"].startswith("application/problem+json")
        assert (await client.get("/health")).status_code == 200
