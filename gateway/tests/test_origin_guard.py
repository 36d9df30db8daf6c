"""The cross-site guard's decision (no server needed): which state-changing requests a browser
sent from another site, and which come from the gateway's own pages or from programs."""

from __future__ import annotations

import pytest

from exocortex.gateway.origin_guard import normalise_origin, refusal

HOST = "127.0.0.1:3210"


def _headers(**values: str) -> dict[str, str]:
    return {"host": HOST, **{k.replace("_", "-"): v for k, v in values.items()}}


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE", "post"])
def test_a_foreign_origin_may_not_change_data(method: str) -> None:
    reason = refusal(method, _headers(origin="https://evil.example"))
    assert reason is not None
    assert "https://evil.example" in reason
    assert "EXO_CORS_ORIGINS" in reason


@pytest.mark.parametrize("method", ["GET", "HEAD", "OPTIONS"])
def test_reads_and_preflights_pass_from_any_origin(method: str) -> None:
    headers = _headers(origin="https://evil.example", sec_fetch_site="cross-site")
    assert refusal(method, headers) is None


@pytest.mark.parametrize(
    ("host", "origin"),
    [
        (HOST, "http://127.0.0.1:3210"),
        (HOST, "HTTP://127.0.0.1:3210/"),
        ("localhost:3210", "http://localhost:3210"),
        ("[::1]:3210", "http://[::1]:3210"),
        ("memory.example", "https://memory.example"),
        ("memory.example:443", "https://memory.example"),
        ("memory.example", "https://memory.example:443"),
        ("Memory.Example:8443", "https://memory.example:8443"),
    ],
)
def test_the_gateways_own_origin_may_change_data(host: str, origin: str) -> None:
    headers = {"host": host, "origin": origin, "sec-fetch-site": "same-origin"}
    assert refusal("POST", headers) is None


@pytest.mark.parametrize(
    ("host", "origin"),
    [
        # Another port of the same host: the same site for the browser, another origin here.
        (HOST, "http://127.0.0.1:5173"),
        (HOST, "http://localhost:3210"),
        (HOST, "http://127.0.0.1"),
        ("memory.example", "http://memory.example:8080"),
        ("memory.example:80", "https://memory.example"),
        (HOST, "http://127.0.0.1:3210.evil.example"),
        (HOST, "null"),
        (HOST, ""),
        (HOST, "file://"),
        (HOST, "http://127.0.0.1:3210/path"),
        (HOST, "http://user@127.0.0.1:3210"),
        (HOST, "http://127.0.0.1:99999"),
        ("", "http://127.0.0.1:3210"),
    ],
)
def test_any_other_origin_is_refused(host: str, origin: str) -> None:
    assert refusal("POST", {"host": host, "origin": origin}) is not None


def test_listed_cors_origins_may_change_data() -> None:
    allowed = ["http://localhost:5173", "https://app.example/"]
    assert refusal("POST", _headers(origin="http://localhost:5173"), allowed) is None
    assert refusal("DELETE", _headers(origin="https://APP.example:443"), allowed) is None
    assert refusal("POST", _headers(origin="https://app.example:8443"), allowed) is not None
    assert refusal("POST", _headers(origin="null"), ["null"]) is not None


@pytest.mark.parametrize("site", ["cross-site", "same-site", "Cross-Site"])
def test_without_origin_a_cross_site_fetch_is_refused(site: str) -> None:
    reason = refusal("POST", _headers(sec_fetch_site=site))
    assert reason is not None
    assert site.lower() in reason


@pytest.mark.parametrize("site", ["same-origin", "none"])
def test_without_origin_a_same_origin_or_user_typed_request_passes(site: str) -> None:
    assert refusal("POST", _headers(sec_fetch_site=site)) is None


@pytest.mark.parametrize("content_type", ["application/json", "text/plain", ""])
def test_programs_sending_neither_header_pass(content_type: str) -> None:
    # The CLI, the MCP adapter, agents and curl send no Origin and no Sec-Fetch-Site.
    assert refusal("POST", _headers(content_type=content_type)) is None
    assert refusal("POST", {}) is None


def test_the_origin_decides_when_both_headers_are_sent() -> None:
    # A listed origin is cross-site for the browser, and still allowed.
    allowed = ["https://app.example"]
    listed = _headers(origin="https://app.example", sec_fetch_site="cross-site")
    assert refusal("POST", listed, allowed) is None
    foreign = _headers(origin="https://evil.example", sec_fetch_site="same-origin")
    assert refusal("POST", foreign) is not None


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("http://127.0.0.1:3210", "http://127.0.0.1:3210"),
        ("https://Memory.Example:443/", "https://memory.example"),
        ("http://[::1]:80", "http://[::1]"),
        ("null", None),
        ("ftp://example.org", None),
        ("https://", None),
    ],
)
def test_origins_are_compared_normalised(raw: str, normal: str | None) -> None:
    assert normalise_origin(raw) == normal
