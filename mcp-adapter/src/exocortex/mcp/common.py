"""What every tool shares: the per-call gateway handle, result building and text rendering."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, cast

from pydantic import BaseModel

from exocortex.api.limits import ID_MAX
from exocortex.mcp.gateway import AUTH_HEADERS, GatewayClient
from exocortex.mcp.models import Hit, Memory
from exocortex.mcp.settings import Attribution, McpSettings
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent

ATTRIBUTION_FIELDS = ("provider", "model_id", "model_name", "agent", "session_id")

# stdio: one user's adapter on their machine; http: a service shared by remote clients.
Transport = Literal["stdio", "http"]


@dataclass(frozen=True)
class AppState:
    settings: McpSettings
    attribution: Attribution
    gateway: GatewayClient
    # Served over HTTP: no key of its own, no reading of this machine's files.
    remote: bool = False


class Api:
    """The gateway, as seen by one tool call. Over HTTP the call carries exactly the key
    headers its client sent (the gateway client has no key of its own to add, so a client's
    ``X-API-Key`` is never shadowed by an adapter's bearer token); over stdio, the adapter's
    configured key."""

    def __init__(self, ctx: Context) -> None:
        self.state = cast(AppState, ctx.request_context.lifespan_context)
        headers = (ctx.headers or {}) if self.state.remote else {}
        self._auth = {k: v for k in AUTH_HEADERS if (v := headers.get(k))}

    async def call(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, Any] | None = None,
    ) -> Any:
        return await self.state.gateway.request(
            method, path, json=json, params=params, auth=self._auth
        )

    def attribution(self, **given: str | None) -> dict[str, str]:
        """Attribution fields for a write: the call's values, else the EXO_DEFAULT_* ones."""
        defaults = self.state.attribution
        out: dict[str, str] = {}
        for name in ATTRIBUTION_FIELDS:
            value = given.get(name) or getattr(defaults, name)
            if value:
                out[name] = value
        if given.get("conversation_id"):
            out["conversation_id"] = str(given["conversation_id"])
        return out


def result(text: str, data: BaseModel) -> CallToolResult:
    """Readable text for the model plus the same facts as structured content for programs."""
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=data.model_dump(mode="json"),
    )


def require_text(value: str, name: str) -> str:
    stripped = value.strip()
    if not stripped:
        raise ToolError(f"`{name}` is empty; give some text")
    return stripped


def given_null(ctx: Context, names: Iterable[str]) -> list[str]:
    """The ``names`` the call gave as an explicit ``null``. A tool's parameters default to
    None, so only the call's own arguments tell "clear this" from "leave it as it is"."""
    params = ctx.request_context.params or {}
    arguments = params.get("arguments") or {}
    return [name for name in names if name in arguments and arguments[name] is None]


def body(**fields: Any) -> dict[str, Any]:
    """A request body without the fields the caller left out."""
    return {k: v for k, v in fields.items() if v is not None}


def memory(raw: dict[str, Any]) -> Memory:
    return Memory.model_validate(raw)


def hit(raw: dict[str, Any], *, score: float | None = None, preview: str | None = None) -> Hit:
    """A REST memory (or compact result) as a result line's data."""
    return Hit(
        id=raw["id"],
        text=preview if preview is not None else raw.get("content") or raw.get("preview", ""),
        score=score,
        tags=raw.get("tags") or [],
        content_type=raw.get("content_type"),
        importance=raw.get("importance"),
        created_at=raw.get("created_at"),
    )


def render_hit(h: Hit, *, full: bool = True) -> str:
    facts = []
    if h.score is not None:
        facts.append(f"score {h.score:.3f}")
    if h.tags:
        facts.append("tags: " + ", ".join(h.tags))
    if h.created_at:
        facts.append(h.created_at[:10])
    if full and h.importance is not None and h.importance != 0.5:
        facts.append(f"importance {h.importance:g}")
    suffix = f" ({' | '.join(facts)})" if facts else ""
    return f"[{h.id}] {h.text}{suffix}"


def render_memory(m: Memory) -> str:
    lines = [f"[{m.id}] {m.content}", "  " + memory_facts(m)]
    if m.metadata:
        lines.append(f"  metadata: {m.metadata}")
    return "\n".join(lines)


def memory_facts(m: Memory) -> str:
    """One line of what is known about a memory besides its content and metadata."""
    facts = [f"type {m.content_type}", f"namespace {m.namespace}"]
    if m.tags:
        facts.append("tags: " + ", ".join(m.tags))
    facts.append(f"importance {m.importance:g}")
    if m.valence:
        facts.append(f"valence {m.valence:g}")
    who = [v for v in (m.provider, m.model_name or m.model_id, m.agent) if v]
    if who:
        facts.append("by " + "/".join(who))
    if m.source_uri:
        facts.append(f"source {m.source_uri}")
    if m.created_at:
        facts.append(f"created {m.created_at}")
    if not m.is_active:
        facts.append(f"ARCHIVED by {m.archived_by}" if m.archived_by else "ARCHIVED")
    if m.superseded_by:
        facts.append(f"superseded by {m.superseded_by}")
    return " | ".join(facts)


def ids_argument(ids: list[str], name: str = "ids") -> list[str]:
    cleaned = [i.strip() for i in ids if i.strip()]
    if not cleaned:
        raise ToolError(f"`{name}` is empty; give at least one memory id")
    return list(dict.fromkeys(cleaned))


def check_id(value: str, name: str = "id") -> str:
    """An id that is safe to put in a URL path."""
    cleaned = value.strip()
    if not cleaned or "/" in cleaned or "?" in cleaned or len(cleaned) > ID_MAX:
        raise ToolError(f"`{name}` is not an id: {value!r}")
    return cleaned


def items(raw: Any, *keys: str) -> list[dict[str, Any]]:
    """The list in a REST reply: a bare list, or the first of ``keys`` present in an object."""
    if isinstance(raw, list):
        return raw
    if isinstance(raw, dict):
        for key in keys:
            if isinstance(raw.get(key), list):
                return cast(list[dict[str, Any]], raw[key])
    return []
