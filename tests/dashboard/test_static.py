"""How the gateway serves the built dashboard: hashed assets cached for good, index.html always
revalidated, client-side routes answered with index.html, and the API's own paths never
shadowed by it."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from exocortex.gateway.static import IMMUTABLE, REVALIDATE, mount_dashboard


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    (tmp_path / "index.html").write_text("<html>the dashboard</html>")
    (tmp_path / "favicon.svg").write_text("<svg/>")
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "index-3f9a1c.js").write_text("console.log(1)")
    # No docs routes of its own: their paths reach the mount, which must refuse them.
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)

    @app.get("/api/ping")
    async def ping() -> dict[str, bool]:
        return {"ok": True}

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    mount_dashboard(app, tmp_path)
    return TestClient(app)


def test_hashed_assets_are_cached_for_a_year(client: TestClient) -> None:
    reply = client.get("/assets/index-3f9a1c.js")
    assert reply.status_code == 200
    assert reply.headers["cache-control"] == IMMUTABLE


def test_index_and_other_files_are_revalidated(client: TestClient) -> None:
    for path in ("/", "/favicon.svg"):
        reply = client.get(path)
        assert reply.status_code == 200, path
        assert reply.headers["cache-control"] == REVALIDATE, path


def test_client_side_routes_get_index_html_uncached(client: TestClient) -> None:
    for path in ("/memory/01ABC", "/graph", "/settings", "/status"):
        reply = client.get(path)
        assert reply.status_code == 200, path
        assert "the dashboard" in reply.text
        assert reply.headers["cache-control"] == REVALIDATE


def test_a_missing_hashed_asset_is_a_404_not_index_html(client: TestClient) -> None:
    reply = client.get("/assets/index-00000.js")
    assert reply.status_code == 404
    assert "the dashboard" not in reply.text


@pytest.mark.parametrize(
    "path", ["/api/nothing-here", "/api", "/metrics", "/docs/x", "/openapi.json", "/redoc"]
)
def test_api_paths_are_never_the_dashboards(client: TestClient, path: str) -> None:
    reply = client.get(path)
    assert reply.status_code == 404
    assert "the dashboard" not in reply.text


def test_api_and_health_routes_still_answer(client: TestClient) -> None:
    assert client.get("/api/ping").json() == {"ok": True}
    assert client.get("/health").json() == {"status": "ok"}
