"""Input no route can store or parse safely, rejected before any route sees it: JSON nested
deeper than ``MAX_JSON_DEPTH`` (the parser recurses per level and fails with a server error
near 1,000), NUL characters (Postgres text and jsonb cannot hold them) in the body, query or
path, and the ``NaN``/``Infinity`` tokens Python's parser accepts but JSON, jsonb and every
range check do not. Each answer is a 400 problem naming the field.

The common case costs a few byte searches: the body is only parsed here when one of those
searches finds something suspicious, to name the field at fault."""

from __future__ import annotations

import json
import math
import re
from typing import Any
from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from exocortex.gateway.problems import problem

MAX_JSON_DEPTH = 64

# A JSON string literal, escapes included (unrolled, so long strings match in one pass).
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_INNERMOST = re.compile(rb"\[\]|\{\}")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_NUL_ESCAPE = b"\\u0000"
_NON_FINITE = (b"NaN", b"Infinity")
_FORM_TYPES = (b"multipart/form-data", b"application/x-www-form-urlencoded")


class Rejected(Exception):
    def __init__(self, detail: str, field: str) -> None:
        super().__init__(detail)
        self.detail = detail
        self.field = field


def _too_deep(body: bytes) -> bool:
    """True when brackets outside strings nest deeper than ``MAX_JSON_DEPTH``, or do not
    balance at all (then the body is not JSON and the parser must not be let loose on it)."""
    if body.count(b"[") + body.count(b"{") <= MAX_JSON_DEPTH:
        return False
    skeleton = _STRING.sub(b"", body).translate(None, _NOT_BRACKETS)
    # Each pass removes one level (only the innermost pairs present before it).
    for _ in range(MAX_JSON_DEPTH):
        if not skeleton:
            return False
        reduced = _INNERMOST.sub(b"", skeleton)
        if reduced == skeleton:
            return True
        skeleton = reduced
    return bool(skeleton)


def _bad_value(value: Any, path: list[str]) -> tuple[str, str] | None:
    """The dotted path of the first NUL-bearing string or non-finite number, and why."""
    if isinstance(value, str):
        return (".".join(path), "contains a NUL character") if "\x00" in value else None
    if isinstance(value, float):
        return None if math.isfinite(value) else (".".join(path), "must be a finite number")
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _bad_value(item, [*path, str(index)])
            if found:
                return found
    if isinstance(value, dict):
        for key, item in value.items():
            if "\x00" in key:
                return ".".join([*path, key.replace("\x00", "\\u0000")]), "key has a NUL character"
            found = _bad_value(item, [*path, key])
            if found:
                return found
    return None


def check_json_body(body: bytes) -> None:
    """Raises ``Rejected`` for a body that is too deep, holds a NUL or a non-finite number."""
    if _too_deep(body):
        raise Rejected(
            f"request body is JSON nested deeper than {MAX_JSON_DEPTH} levels (or unbalanced)",
            "body",
        )
    suspicious = _NUL_ESCAPE in body
    if not suspicious and any(token in body for token in _NON_FINITE):
        # Only a token outside every string counts ("NaN" inside a memory's text is fine).
        outside = _STRING.sub(b"", body)
        suspicious = any(token in outside for token in _NON_FINITE)
    if not suspicious:
        return
    try:
        parsed = json.loads(body)
    except ValueError:
        return  # not JSON: the route's own parse answers with "Invalid JSON"
    found = _bad_value(parsed, [])
    if found:
        field, reason = found
        raise Rejected(f"{field or 'body'}: {reason}", field)


def check_query(scope: Scope) -> None:
    if "\x00" in scope.get("path", ""):
        raise Rejected("the path contains a NUL character", "path")
    raw: bytes = scope.get("query_string", b"")
    if b"%00" not in raw and b"\x00" not in raw:
        return
    for key, value in parse_qsl(raw.decode("latin-1"), keep_blank_values=True):
        if "\x00" in key or "\x00" in value:
            raise Rejected(f"{key}: contains a NUL character", key.replace("\x00", "\\u0000"))


class InputGuardMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            check_query(scope)
        except Rejected as exc:
            await problem(400, exc.detail, field=exc.field)(scope, receive, send)
            return
        content_type = dict(scope["headers"]).get(b"content-type", b"").lower()
        if scope["method"] in ("GET", "HEAD", "OPTIONS") or content_type.startswith(_FORM_TYPES):
            await self.app(scope, receive, send)
            return
        # Buffered whole: the body limit (outside this middleware) has already bounded it.
        chunks: list[bytes] = []
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away: nobody to answer
            chunks.append(message.get("body", b""))
            more = bool(message.get("more_body", False))
        body = b"".join(chunks)
        try:
            check_json_body(body)
        except Rejected as exc:
            await problem(400, exc.detail, field=exc.field)(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
