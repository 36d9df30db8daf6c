"""The gateway's security headers: the dashboard's strict Content-Security-Policy (no inline
script, this origin only, never framed) on index.html, client-side routes and assets; a
policy that renders nothing on API answers, errors included; a policy of their own for the
interactive docs that still allows everything their pages load; and a dashboard build that
needs no inline script. The browser side is tests/dashboard/test_stored_html.py."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from fastapi.testclient import TestClient

from exocortex.gateway.app import create_app
from exocortex.gateway.settings import GatewaySettings

KEY = "sec-headers-0123456789abcdef"
DIST = Path(__file__).resolve().parents[2] / "dashboard" / "dist"
COMMON = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}


def _policy(header: str) -> dict[str, list[str]]:
    directives: dict[str, list[str]] = {}
    for part in header.split(";"):
        name, *sources = part.split()
        directives[name] = sources
    return directives


def _client(tmp_path: Path, **env: str) -> TestClient:
    (tmp_path / "index.html").write_text("<html>the dashboard</html>")
    (tmp_path / "assets").mkdir(exist_ok=True)
    (tmp_path / "assets" / "index-3f9a1c.js").write_text("console.log(1)")
    settings = GatewaySettings.model_validate(
        {
            "EXO_API_KEYS": f"{KEY}:rw:*",
            "EXO_GATEWAY_HOST": "127.0.0.1",
            "EXO_GATEWAY_DASHBOARD_DIR": str(tmp_path),
        }
        | env
    )
    # Not entered: no lifespan, no backends; nothing here reaches a service.
    return TestClient(create_app(settings))


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    return _client(tmp_path)


@pytest.mark.parametrize("path", ["/", "/graph", "/memory/01ABC", "/assets/index-3f9a1c.js"])
def test_dashboard_answers_carry_the_strict_policy(client: TestClient, path: str) -> None:
    reply = client.get(path)
    assert reply.status_code == 200
    for name, value in COMMON.items():
        assert reply.headers[name] == value, name
    policy = _policy(reply.headers["content-security-policy"])
    assert policy["script-src"] == ["'self'"]
    assert policy["default-src"] == ["'self'"]
    assert policy["connect-src"] == ["'self'"]
    for directive in ("object-src", "base-uri", "frame-ancestors"):
        assert policy[directive] == ["'none'"], directive
    # Nothing but the gateway's own files may run, and no string may become code.
    everything = [s for sources in policy.values() for s in sources]
    assert "'unsafe-eval'" not in everything
    assert not any(s.startswith(("http", "*", "data:", "blob:")) for s in policy["script-src"])


@pytest.mark.parametrize(
    ("path", "status"), [("/openapi.json", 200), ("/api/nothing-here", 404), ("/metrics/x", 404)]
)
def test_api_answers_render_nothing_errors_included(
    client: TestClient, path: str, status: int
) -> None:
    reply = client.get(path)
    assert reply.status_code == status
    for name, value in COMMON.items():
        assert reply.headers[name] == value, name
    policy = _policy(reply.headers["content-security-policy"])
    assert policy["default-src"] == ["'none'"]
    assert policy["frame-ancestors"] == ["'none'"]


def test_a_refused_host_still_carries_the_headers(tmp_path: Path) -> None:
    # Without keys the gateway refuses names other than loopback before anything else runs.
    client = _client(tmp_path, EXO_API_KEYS="")
    reply = client.get("/", headers={"Host": "rebound.example"})
    assert reply.status_code == 421
    assert "content-security-policy" in reply.headers
    assert reply.headers["x-frame-options"] == "DENY"


def _allowed(policy: dict[str, list[str]], directive: str, url: str) -> bool:
    sources = policy.get(directive, policy["default-src"])
    if url.startswith("data:"):
        return "data:" in sources
    parts = urlsplit(url)
    if not parts.scheme:
        return "'self'" in sources
    return f"{parts.scheme}://{parts.netloc}" in sources


@pytest.mark.parametrize("path", ["/docs", "/redoc"])
def test_the_docs_policy_allows_what_the_docs_pages_load(client: TestClient, path: str) -> None:
    reply = client.get(path)
    assert reply.status_code == 200
    assert reply.headers["x-frame-options"] == "DENY"
    policy = _policy(reply.headers["content-security-policy"])
    assert policy["connect-src"] == ["'self'"]
    assert policy["frame-ancestors"] == ["'none'"]
    html = reply.text
    scripts = re.findall(r"<script[^>]*\bsrc=\"([^\"]+)\"", html)
    styles = re.findall(r"<link[^>]*\bhref=\"([^\"]+)\"[^>]*rel=\"stylesheet\"", html)
    styles += re.findall(r"<link[^>]*rel=\"stylesheet\"[^>]*\bhref=\"([^\"]+)\"", html)
    icons = re.findall(r"<link[^>]*rel=\"shortcut icon\"[^>]*\bhref=\"([^\"]+)\"", html)
    assert scripts, "the docs page loads no script: the parsing here is out of date"
    assert styles, "the docs page loads no stylesheet: the parsing here is out of date"
    assert icons, "the docs page names no icon: the parsing here is out of date"
    for url in scripts:
        assert _allowed(policy, "script-src", url), url
    for url in styles:
        assert _allowed(policy, "style-src", url), url
    for url in icons:
        assert _allowed(policy, "img-src", url), url
    if re.search(r"<script>(?!\s*</script>)", html):  # Swagger UI starts from an inline script
        assert "'unsafe-inline'" in policy["script-src"]
    the_openapi_document = client.get("/openapi.json")
    assert the_openapi_document.status_code == 200


def test_the_built_dashboard_needs_no_inline_script() -> None:
    """The policy refuses inline script, so the build must not emit any."""
    index = DIST / "index.html"
    if not index.is_file():
        pytest.skip("dashboard/dist is not built (make dashboard)")
    html = index.read_text()
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", html, flags=re.DOTALL)
    assert scripts, "index.html loads no script: the parsing here is out of date"
    for attributes, body in scripts:
        assert "src=" in attributes, attributes
        assert not body.strip(), body
    assert not re.search(r"\son[a-z]+=", html), "an inline event handler in index.html"
