"""Security headers on every answer of the gateway, chosen by what the path serves.

The dashboard shows text any writer controls (memory content, entity names, goal titles...)
and keeps the API key in the tab's sessionStorage, where any script running on this origin
could read it. Its Content-Security-Policy runs script only from the gateway's own files,
never inline (no `onerror=` attribute, no `<script>` block, no `javascript:` URL), and lets the
page talk to this origin only, so markup that some bug lets into the page can neither run nor
send the key elsewhere. The escaping in the UI is the first line; this policy is the second.

- dashboard (every path that is not the API's): the strict policy above;
- API answers (JSON, metrics, health, the OpenAPI document): nothing to render or load;
- the interactive docs (`/docs`, `/redoc`): FastAPI's pages load Swagger UI and ReDoc from
  jsDelivr and start them with an inline script, so they get a policy of their own that allows
  exactly that and still only talks to this origin.

Every answer also gets `X-Content-Type-Options: nosniff` (a JSON body or an uploaded text is
never run as script or HTML), `Referrer-Policy: no-referrer` and `X-Frame-Options: DENY` (no
page of the gateway may be framed, against clickjacking the write buttons). A header the route
set itself is kept."""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from exocortex.gateway.static import NOT_DASHBOARD

DOCS_SEGMENTS = frozenset({"docs", "redoc"})
API_SEGMENTS = NOT_DASHBOARD - DOCS_SEGMENTS

DASHBOARD_CSP = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        # React, Recharts and force-graph set style attributes and the graph's tooltip adds a
        # <style> element; styles cannot run script, so inline styles are allowed.
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)

API_CSP = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

# What fastapi.openapi.docs' pages load: Swagger UI (script, CSS, a start-up inline script,
# data: images, the validator badge) and ReDoc (script, Google fonts, a blob: worker).
JSDELIVR = "https://cdn.jsdelivr.net"
DOCS_CSP = "; ".join(
    (
        "default-src 'none'",
        f"script-src 'self' 'unsafe-inline' {JSDELIVR}",
        f"style-src 'self' 'unsafe-inline' {JSDELIVR} https://fonts.googleapis.com",
        "font-src 'self' data: https://fonts.gstatic.com",
        "img-src 'self' data: https://fastapi.tiangolo.com https://validator.swagger.io",
        "connect-src 'self'",
        "worker-src 'self' blob:",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)

COMMON = (
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("X-Frame-Options", "DENY"),
)


def headers_for(path: str) -> tuple[tuple[str, str], ...]:
    """The security headers of an answer to ``path``."""
    segment = path.lstrip("/").split("/", 1)[0]
    if segment in DOCS_SEGMENTS:
        policy = DOCS_CSP
    elif segment in API_SEGMENTS:
        policy = API_CSP
    else:
        policy = DASHBOARD_CSP
    return (("Content-Security-Policy", policy), *COMMON)


class SecurityHeadersMiddleware:
    """Adds :func:`headers_for` to every HTTP answer, errors included."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = headers_for(scope["path"])

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in extra:
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, send_with_headers)
