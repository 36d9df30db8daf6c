"""DNS-rebinding defence for a gateway without API keys.

Without keys the gateway trusts whoever reaches its loopback port. A web page the user opens can
point a name it controls at 127.0.0.1 and then read the API from the browser as if it were the
same site: the browser sends that name in ``Host``. Refusing every ``Host`` that is not a loopback
name (``localhost``, ``127.0.0.0/8``, ``[::1]``, any port) closes that door; programs on the
machine and a browser on ``http://127.0.0.1:3210`` are unaffected. Every path is guarded, even
``/health`` and ``/metrics``: a rebinding page could read those too.

With API keys configured the guard is off: the gateway may then be reached under any name, and
a page cannot supply the key.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from exocortex.gateway.auth import is_loopback
from exocortex.gateway.problems import problem

STATUS = 421  # Misdirected Request: this server does not answer for that authority


def host_name(header: str) -> str:
    """The name of a ``Host`` header value, without its port (``[::1]:3210`` → ``::1``)."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    name, sep, port = header.rpartition(":")
    return name if sep and port.isdigit() else header


def _detail(host: str) -> str:
    return (
        f"this gateway has no API keys, so it answers only requests addressed to a loopback "
        f"name (localhost, 127.0.0.1, [::1]), not {host!r}; use http://127.0.0.1:<port>, or set "
        "EXO_API_KEYS to serve other names"
    )


class LoopbackHostMiddleware:
    """Answers 421 to any request whose ``Host`` is missing or not a loopback name."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        raw = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
        if raw and is_loopback(host_name(raw)):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        await problem(STATUS, _detail(raw))(scope, receive, send)
