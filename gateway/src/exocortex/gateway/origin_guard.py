"""Cross-site request defence: no other web site can change data through the user's browser.

The Host check (see host_guard) stops a page from *reading* a keyless loopback gateway by DNS
rebinding, but a page on any site can still make the browser *send* a request to
``http://127.0.0.1:3210``: a form posting ``text/plain`` or a body-less ``fetch`` in ``no-cors``
mode needs no CORS preflight, and the browser delivers it even though the page never sees the
answer. Without API keys that is enough to start a backup or an export, or to store a memory.
With keys a page has no key to send, but the same rule costs nothing and covers a key kept in
the browser.

So every state-changing request (POST, PUT, PATCH, DELETE) is refused with 403 when the browser
says it comes from elsewhere:

- ``Origin`` present: it must be the gateway's own origin (its ``host:port`` as the browser
  addressed it, the ``Host`` header) or one listed in ``EXO_CORS_ORIGINS``. ``Origin: null``
  (sandboxed frames, ``file:`` pages, redirects across sites) is never allowed.
- ``Origin`` absent (old browsers on a same-origin request, never on a cross-site one):
  ``Sec-Fetch-Site`` must not be ``cross-site`` nor ``same-site``. ``same-site`` is refused too:
  another port of the same host (a local dev server, another local app) is the same *site* for
  the browser but a different origin here, and exactly the page this guard keeps out.
  ``same-origin`` and ``none`` (the user typed the address) pass.
- Neither header: not a browser (the CLI, the MCP adapter, agents, curl, scripts). These pass;
  a browser sends ``Origin`` with every cross-origin POST, PUT, PATCH and DELETE, whatever the
  content type, so refusing "simple" content types without an ``Origin`` would only break
  programs.

Reads (GET, HEAD) pass whatever their origin: a cross-site page can make the browser send them
but cannot read the answer (CORS is off unless origins are listed, and the Host check stops
rebinding), and no GET route changes data. OPTIONS passes so CORS preflights reach the CORS
middleware.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from exocortex.gateway.problems import problem

STATUS = 403
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# Sec-Fetch-Site values a state-changing request may carry without an Origin header.
ALLOWED_FETCH_SITES = frozenset({"same-origin", "none"})
_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalise_origin(origin: str) -> str | None:
    """``scheme://host[:port]`` in lower case with the scheme's default port left out, or None
    when ``origin`` is not an http(s) origin (``null``, garbage, a path)."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    scheme, host = parts.scheme.lower(), (parts.hostname or "")
    if scheme not in _DEFAULT_PORTS or not host or parts.path not in ("", "/"):
        return None
    if parts.query or parts.fragment or parts.username or parts.password:
        return None
    shown = f"[{host}]" if ":" in host else host
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        shown = f"{shown}:{port}"
    return f"{scheme}://{shown}"


def _authorities(origin: str) -> set[str]:
    """The ``Host`` values under which a browser at ``origin`` (normalised) addresses us."""
    scheme, _, authority = origin.partition("://")
    found = {authority}
    if authority.endswith("]") or ":" not in authority:
        found.add(f"{authority}:{_DEFAULT_PORTS[scheme]}")
    return found


def refusal(method: str, headers: Mapping[str, str], allowed: Iterable[str] = ()) -> str | None:
    """Why a request must be refused as cross-site, or None when it may go on.

    ``headers`` maps lower-case names to values; ``allowed`` are the origins listed in
    ``EXO_CORS_ORIGINS``."""
    if method.upper() not in STATE_CHANGING:
        return None
    origin = headers.get("origin")
    if origin is not None:
        normal = normalise_origin(origin)
        if normal is not None:
            if normal in {normalise_origin(o) for o in allowed}:
                return None
            host = headers.get("host", "").strip().lower()
            if host and host in _authorities(normal):
                return None
        return (
            f"cross-site request refused: Origin {origin!r} is neither this gateway's own "
            f"origin (Host {headers.get('host', '')!r}) nor listed in EXO_CORS_ORIGINS; a page "
            "of another site may not change data here"
        )
    site = headers.get("sec-fetch-site", "").strip().lower()
    if site and site not in ALLOWED_FETCH_SITES:
        return (
            f"cross-site request refused: Sec-Fetch-Site is {site!r}; only a page of this "
            "gateway's own origin, or an origin listed in EXO_CORS_ORIGINS, may change data here"
        )
    return None


class OriginGuardMiddleware:
    """Answers 403 (a problem document naming the header) to a state-changing request that a
    browser sent from another site; see :func:`refusal`."""

    def __init__(self, app: ASGIApp, allowed_origins: Iterable[str] = ()) -> None:
        self.app = app
        self.allowed = tuple(allowed_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in STATE_CHANGING:
            await self.app(scope, receive, send)
            return
        headers = {
            name.decode("latin-1").lower(): value.decode("latin-1")
            for name, value in scope["headers"]
        }
        reason = refusal(scope["method"], headers, self.allowed)
        if reason is None:
            await self.app(scope, receive, send)
            return
        field = "Origin" if "origin" in headers else "Sec-Fetch-Site"
        await problem(STATUS, reason, field=field)(scope, receive, send)
