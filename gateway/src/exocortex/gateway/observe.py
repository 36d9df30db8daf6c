"""Per-request correlation id, count and latency, as a plain ASGI middleware (a
``BaseHTTPMiddleware`` costs a task group and body re-streaming on every request)."""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from exocortex.core.ids import new_id
from exocortex.core.logging import correlation_id
from exocortex.gateway import metrics

HEADER = b"x-correlation-id"


class ObserveMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = next((v for k, v in scope["headers"] if k == HEADER), b"")
        cid = given.decode("latin-1") or new_id()
        token = correlation_id.set(cid)
        start = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", []), (HEADER, cid.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            # The router records the matched route in the scope: its template is the label, so
            # ids, namespaces and query text never become label values; nor does an odd method.
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            method = metrics.method_label(scope["method"])
            metrics.HTTP_REQUESTS.labels(method, route, str(status)).inc()
            metrics.HTTP_DURATION.labels(method, route).observe(time.perf_counter() - start)
            correlation_id.reset(token)
