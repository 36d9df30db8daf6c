"""Tools that read memories: search, context, get, browse, diff, timeline, entities."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, Literal

from pydantic import Field

from exocortex.api import limits
from exocortex.api.vocabulary import ContentType
from exocortex.mcp.common import (
    Api,
    body,
    check_id,
    hit,
    ids_argument,
    items,
    memory,
    render_hit,
    render_memory,
    require_text,
    result,
)
from exocortex.mcp.gateway import NotFound
from exocortex.mcp.models import (
    DiffOutput,
    EntitiesOutput,
    Entity,
    GetOutput,
    Hit,
    Linked,
    ListOutput,
    Memory,
    SearchOutput,
    TimelineOutput,
)
from exocortex.mcp.tools.writes import Tags
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult

MaxTokens = Annotated[
    int,
    Field(ge=limits.TOKENS_MIN, le=limits.TOKENS_MAX, description="pack results into this budget"),
]
Date = Annotated[str, Field(description="ISO 8601 date or time")]


# The tools' result counts are the original tools' ranges, tighter than what REST accepts: every
# result costs the agent context, and agents' prompts were written against these bounds. min()
# keeps each one within the REST bound it is sent to.
SEARCH_LIMIT_MAX = min(50, limits.SEARCH_LIMIT_MAX)
CONTEXT_LIMIT_MAX = min(30, limits.SEARCH_LIMIT_MAX)
BROWSE_LIMIT_MAX = min(50, limits.RECENT_LIMIT_MAX)
TIMELINE_LIMIT_MAX = min(200, limits.TIMELINE_LIMIT_MAX)

# memory_timeline's default lengths: entries, and episodes per month in hierarchy mode.
TIMELINE_LIMIT = 50
HIERARCHY_EPISODES = 20
# memory_entities: entities listed, and relationships shown for each (the original's 50 and 5).
ENTITIES_SHOWN = 50
RELATIONSHIPS_SHOWN = 5
# Per-memory or per-entity lookups a tool runs at once against the gateway.
LOOKUPS_AT_ONCE = 8


async def search(api: Api, payload: dict[str, Any]) -> SearchOutput:
    """POST /api/memories/search and convert the answer (compact or full)."""
    raw = await api.call("POST", "/api/memories/search", json=payload)
    results = [_search_hit(r) for r in raw.get("results", [])]
    return SearchOutput(
        query=payload["query"],
        count=len(results),
        results=results,
        linked=[_linked(x) for x in raw.get("linked") or []],
        mode=raw.get("mode"),
        degraded=raw.get("degraded") or [],
    )


def search_body(
    query: str, limit: int, compact: bool, max_tokens: int | None, **filters: Any
) -> dict[str, Any]:
    """A search request: packing fetches as many candidates as a tool may show, to fill the
    budget; plain mode (neither compact nor packed) asks for the 1-hop linked section."""
    return body(
        query=query,
        limit=SEARCH_LIMIT_MAX if max_tokens else limit,
        compact=compact or None,
        max_tokens=max_tokens,
        include_linked=(not compact and max_tokens is None) or None,
        **filters,
    )


def render_search(out: SearchOutput, header: str, empty: str, *, full: bool) -> str:
    """Result lines under ``header``, then the linked section; ``empty`` when nothing matched."""
    if not out.results:
        return empty
    lines = [header]
    lines += [render_hit(h, full=full) for h in out.results]
    if out.linked:
        lines.append("--- Linked (1-hop) ---")
        lines += [f"[{x.id}] {x.text} ({x.link_type} ← {x.linked_from})" for x in out.linked]
    if out.degraded:
        lines.append(f"(degraded: {', '.join(out.degraded)} index unavailable)")
    return "\n".join(lines)


async def memory_search(
    ctx: Context,
    query: Annotated[str, Field(min_length=1)],
    expanded_query: Annotated[str, Field(description="your rewording/synonyms")] | None = None,
    limit: Annotated[int, Field(ge=1, le=SEARCH_LIMIT_MAX)] = 10,
    tags: Tags | None = None,
    after: Date | None = None,
    before: Date | None = None,
    content_type: ContentType | None = None,
    min_score: Annotated[float, Field(ge=0)] | None = None,
    include_metadata: bool = False,
    compact: Annotated[bool, Field(description="ids + previews; then memory_get")] = False,
    max_tokens: MaxTokens | None = None,
    namespace: str | None = None,
) -> Annotated[CallToolResult, SearchOutput]:
    """Hybrid search (semantic + keyword). Plain mode adds 1-hop linked memories."""
    payload = search_body(
        require_text(query, "query"),
        limit,
        compact,
        max_tokens,
        tags=tags,
        after=after,
        before=before,
        content_type=content_type,
        min_score=min_score,
        include_metadata=include_metadata or None,
        namespace=namespace,
        expanded_query=(expanded_query or "").strip() or None,
    )
    out = await search(Api(ctx), payload)
    # The original tool's wording: agents written against it look for it.
    facts = [out.mode] if out.mode else []
    if max_tokens:
        facts.append(f"~{packed_tokens(out, full=not compact)} tokens")
    mode = f" ({', '.join(facts)})" if facts else ""
    text = render_search(
        out,
        f"Found {out.count} memories{mode}:",
        "No memories found matching the query.",
        full=not compact,
    )
    return result(text, out)


def packed_tokens(out: SearchOutput, *, full: bool) -> int:
    """The tokens the results take, as the original counted them when packing: a quarter of
    the characters, rounded up."""
    return sum(-(-len(render_hit(h, full=full)) // 4) for h in out.results)


async def memory_context(
    ctx: Context,
    topic: Annotated[str, Field(min_length=1)],
    limit: Annotated[int, Field(ge=1, le=CONTEXT_LIMIT_MAX)] = 15,
    compact: bool = False,
    max_tokens: MaxTokens | None = None,
    namespace: str | None = None,
) -> Annotated[CallToolResult, SearchOutput]:
    """Load what is known about a topic, with linked memories (use at session start)."""
    # The seed's context is a search with the linked section, so it shares search's route.
    payload = search_body(
        require_text(topic, "topic"), limit, compact, max_tokens, namespace=namespace
    )
    out = await search(Api(ctx), payload)
    text = render_search(
        out,
        f'Context for "{out.query}" ({out.count} memories):',
        f'Context for "{out.query}": no memories found.',
        full=not compact,
    )
    return result(text, out)


async def memory_get(
    ctx: Context, ids: Annotated[list[str], Field(min_length=1, max_length=10)]
) -> Annotated[CallToolResult, GetOutput]:
    """Full content of memories by id (e.g. after a compact search)."""
    api = Api(ctx)
    wanted = ids_argument(ids)
    found: list[Memory] = []
    missing: list[str] = []
    replies = await asyncio.gather(
        *(api.call("GET", f"/api/memories/{i}") for i in wanted), return_exceptions=True
    )
    for memory_id, reply in zip(wanted, replies, strict=True):
        if isinstance(reply, NotFound):
            missing.append(memory_id)
        elif isinstance(reply, BaseException):
            raise reply
        else:
            found.append(memory(reply))
    lines = [render_memory(m) for m in found] + [f"[{i}] Not found" for i in missing]
    return result("\n".join(lines), GetOutput(memories=found, missing=missing))


async def memory_browse(
    ctx: Context,
    tags: Tags | None = None,
    content_type: ContentType | None = None,
    after: Date | None = None,
    before: Date | None = None,
    limit: Annotated[int, Field(ge=1, le=BROWSE_LIMIT_MAX)] = 20,
    compact: bool = False,
    namespace: str | None = None,
) -> Annotated[CallToolResult, ListOutput]:
    """List memories by tags/type/date, newest first (no semantic search)."""
    hits = await browse(
        Api(ctx),
        tags=tags,
        content_type=content_type,
        after=after,
        before=before,
        limit=limit,
        namespace=namespace,
    )
    out = ListOutput(count=len(hits), results=hits)
    if not hits:
        return result("No memories match.", out)
    if compact:
        lines = [render_hit(h.model_copy(update={"text": h.text[:200]}), full=False) for h in hits]
    else:
        lines = [render_hit(h) for h in hits]
    return result(f"{len(hits)} memories:\n" + "\n".join(lines), out)


async def browse(api: Api, **filters: Any) -> list[Hit]:
    raw = await api.call("GET", "/api/memories/recent", params=filters)
    return [hit(m) for m in items(raw, "results")]


async def memory_diff(
    ctx: Context,
    since: Date,
    limit: Annotated[int, Field(ge=1, le=limits.DIFF_LIMIT_MAX)] = 50,
    namespace: str | None = None,
) -> Annotated[CallToolResult, DiffOutput]:
    """What was created, updated and archived since a time."""
    since = require_text(since, "since")
    raw = await Api(ctx).call(
        "GET", "/api/memories/diff", params={"since": since, "limit": limit, "namespace": namespace}
    )
    out = DiffOutput(
        since=since,
        created=[hit(m) for m in raw.get("created", [])],
        updated=[hit(m) for m in raw.get("updated", [])],
        archived=[hit(m) for m in raw.get("archived", [])],
    )
    lines = [f"Changes since {since}:"]
    for title, hits in (
        ("Created", out.created),
        ("Updated", out.updated),
        ("Archived", out.archived),
    ):
        lines.append(f"## {title} ({len(hits)})")
        lines += [render_hit(h, full=False) for h in hits]
    return result("\n".join(lines), out)


async def memory_entities(
    ctx: Context,
    tags: Tags | None = None,
    query: Annotated[str | None, Field(description="name or alias contains")] = None,
    type: str | None = None,
    namespace: str | None = None,
) -> Annotated[CallToolResult, EntitiesOutput]:
    """Entities (people, tools, projects…) found in memories, with relationships."""
    api = Api(ctx)
    raw = await api.call(
        "GET",
        "/api/entities",
        params={"tags": tags, "query": query, "type": type, "namespace": namespace},
    )
    entities = [_entity(e) for e in raw.get("results", raw.get("entities", []))]
    if query:
        needle = query.strip().lower()
        entities = [
            e
            for e in entities
            if needle in e.name.lower() or any(needle in a.lower() for a in e.aliases)
        ]
    shown = entities[:ENTITIES_SHOWN]
    await _with_relationships(api, shown)
    out = EntitiesOutput(count=len(entities), entities=shown)
    if not out.entities:
        return result("No entities found.", out)
    lines = [f"{out.count} entities:"]
    for e in out.entities:
        extra = f" aka {', '.join(e.aliases)}" if e.aliases else ""
        count = f" ({e.memory_count} memories)" if e.memory_count is not None else ""
        lines.append(f"- {e.name} [{e.type or 'concept'}]{extra}{count} id {e.id}")
        lines += [
            f"    {r.relationship} → {r.target}" + (f" ({r.context})" if r.context else "")
            for r in e.relationships[:5]
        ]
    return result("\n".join(lines), out)


async def memory_timeline(
    ctx: Context,
    mode: Literal["decisions", "lineage", "evolution", "hierarchy"],
    memory_id: Annotated[str | None, Field(description="lineage")] = None,
    topic: Annotated[str | None, Field(description="evolution")] = None,
    month: Annotated[str | None, Field(description="YYYY-MM (hierarchy)")] = None,
    after: Date | None = None,
    before: Date | None = None,
    limit: Annotated[
        int | None,
        Field(ge=1, le=TIMELINE_LIMIT_MAX, description="50; episodes per month in hierarchy: 20"),
    ] = None,
    tags: Tags | None = None,
    namespace: str | None = None,
) -> Annotated[CallToolResult, TimelineOutput]:
    """Decision history, a memory's lineage, a topic's evolution, or the month hierarchy."""
    api = Api(ctx)
    limit = limit or (HIERARCHY_EPISODES if mode == "hierarchy" else TIMELINE_LIMIT)
    if mode == "hierarchy":
        raw = await api.call(
            "GET",
            "/api/hierarchy",
            params={
                "month": month,
                "after": after,
                "before": before,
                "max_episodes": min(limit, limits.HIERARCHY_EPISODES_MAX),
                "namespace": namespace,
            },
        )
        epochs = raw.get("epochs", [])
        out = TimelineOutput(mode=mode, count=len(epochs), hierarchy=raw)
        lines = [f"{len(epochs)} epochs"]
        for epoch in epochs:
            lines.append(f"# {epoch.get('month', '')} {str(epoch.get('content', ''))[:120]}")
            for theme in epoch.get("themes", []):
                lines.append(f"  - {str(theme.get('content', ''))[:120]}")
        return result("\n".join(lines), out)
    if mode == "lineage":
        raw = await api.call(
            "GET",
            "/api/timeline",
            params={"mode": "lineage", "memory_id": check_id(memory_id or "", "memory_id")},
        )
        chain = [hit(m) for m in items(raw, "lineage")]
        out = TimelineOutput(mode=mode, count=len(chain), memories=chain)
        lines = [f"Lineage of {memory_id} (oldest first):"]
        lines += [render_hit(h, full=False) for h in chain]
        return result("\n".join(lines), out)
    if mode == "evolution":
        topic = require_text(topic or "", "topic")
        found = await search(
            api,
            body(
                query=topic,
                limit=min(limit, SEARCH_LIMIT_MAX),
                after=after,
                before=before,
                namespace=namespace,
            ),
        )
        hits = sorted(found.results, key=lambda h: h.created_at or "")
        out = TimelineOutput(mode=mode, count=len(hits), memories=hits)
        notes = await _links_within(api, [h.id for h in hits])
        lines = [f'Evolution of "{topic}" (oldest first):']
        for h in hits:
            lines.append(render_hit(h))
            lines += [f"    {note}" for note in notes.get(h.id, [])]
        return result("\n".join(lines), out)
    # Decisions, newest first; tags given narrow them further (all must match).
    raw = await api.call(
        "GET",
        "/api/timeline",
        params={
            "mode": "decisions",
            "after": after,
            "before": before,
            "limit": limit,
            "namespace": namespace,
        },
    )
    wanted = {t.strip().lower() for t in tags or []}
    rows = [m for m in items(raw, "decisions") if wanted <= set(m.get("tags") or [])]
    hits = [hit(m) for m in rows]
    out = TimelineOutput(mode=mode, count=len(hits), memories=hits)
    lines = [f"{len(hits)} decisions (newest first):"]
    for h, row in zip(hits, rows, strict=True):
        older = row.get("supersedes") or []
        lines.append(render_hit(h) + (f" supersedes {', '.join(older)}" if older else ""))
    return result("\n".join(lines), out)


async def _with_relationships(api: Api, entities: list[Entity]) -> None:
    """Fill in each entity's relationships (the listing route does not carry them), up to
    ``RELATIONSHIPS_SHOWN`` each, as the original tool showed them."""
    gate = asyncio.Semaphore(LOOKUPS_AT_ONCE)

    async def fill(entity: Entity) -> None:
        async with gate:
            try:
                raw = await api.call("GET", f"/api/entities/{entity.id}/relationships")
            except NotFound:
                return  # deleted meanwhile: listed without relationships
        found = _entity(
            {
                "id": entity.id,
                "name": entity.name,
                "relationships": items(raw, "results", "relationships"),
            }
        )
        entity.relationships = found.relationships[:RELATIONSHIPS_SHOWN]

    await asyncio.gather(*(fill(e) for e in entities if not e.relationships))


async def _links_within(api: Api, ids: list[str]) -> dict[str, list[str]]:
    """Per memory, its links to the other memories of the set: which one superseded which,
    and what else connects them (the original evolution mode's supersession and in-set
    links)."""
    wanted = set(ids)
    gate = asyncio.Semaphore(LOOKUPS_AT_ONCE)

    async def links_of(memory_id: str) -> tuple[str, list[dict[str, Any]]]:
        async with gate:
            try:
                raw = await api.call("GET", f"/api/memories/{memory_id}/links")
            except NotFound:
                return memory_id, []
        return memory_id, items(raw, "links")

    notes: dict[str, list[str]] = {}
    for memory_id, links in await asyncio.gather(*(links_of(i) for i in ids)):
        for link in links:
            other, kind = link.get("memory_id"), link.get("link_type", "related")
            if other not in wanted or other == memory_id:
                continue
            outgoing = link.get("direction") == "outgoing"
            if kind == "supersedes":
                note = f"supersedes {other}" if outgoing else f"superseded by {other}"
            else:
                note = f"{kind} {'→' if outgoing else '←'} {other}"
            notes.setdefault(memory_id, []).append(note)
    return notes


def _search_hit(raw: dict[str, Any]) -> Hit:
    if "memory" not in raw:  # compact shape
        return hit(raw, score=raw.get("score"), preview=raw.get("preview", ""))
    return hit(raw["memory"], score=raw.get("score"))


def _linked(raw: dict[str, Any]) -> Linked:
    m = raw.get("memory", raw)
    return Linked(
        id=m["id"],
        text=m.get("content") or m.get("preview", ""),
        linked_from=raw.get("linked_from", ""),
        link_type=raw.get("link_type", "related"),
        strength=raw.get("strength", raw.get("score", 0.0)),
    )


def _entity(raw: dict[str, Any]) -> Entity:
    rels = [
        {
            "target": (r.get("entity") or {}).get("name") or r.get("target", ""),
            "relationship": r.get("relationship", ""),
            "direction": r.get("direction"),
            "context": r.get("context"),
        }
        for r in raw.get("relationships") or []
    ]
    return Entity.model_validate({**raw, "relationships": rels})


def register(server: MCPServer) -> None:
    for tool in (
        memory_search,
        memory_get,
        memory_context,
        memory_browse,
        memory_diff,
        memory_entities,
        memory_timeline,
    ):
        server.add_tool(tool)
