"""Tools that change memories: store, update, forget, feedback, link, ingest, session digest."""

from __future__ import annotations

import asyncio
import glob
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, Field

from exocortex.api.limits import FEEDBACK_IDS_MAX, INGEST_FILES_MAX, TAG_CHARS_MAX, TAGS_MAX
from exocortex.api.vocabulary import ContentType, LinkType
from exocortex.mcp.common import (
    Api,
    body,
    check_id,
    given_null,
    ids_argument,
    memory,
    memory_facts,
    require_text,
    result,
)
from exocortex.mcp.gateway import NotFound
from exocortex.mcp.models import (
    DigestOutput,
    FeedbackOutput,
    ForgetOutput,
    IngestOutput,
    LinkOutput,
    Memory,
    MemoryOutput,
    StoreResult,
)
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult

Unit = Annotated[float, Field(ge=0, le=1)]
Valence = Annotated[float, Field(ge=-1, le=1)]
Tags = Annotated[list[Annotated[str, Field(max_length=TAG_CHARS_MAX)]], Field(max_length=TAGS_MAX)]
# Files an agent may hand to memory_ingest in one call (a glob can match far more): what one
# REST ingest accepts.
MAX_INGEST_FILES = INGEST_FILES_MAX
MAX_FILE_BYTES = 5 * 1024 * 1024
# The attribution fields a session digest records.
DIGEST_WHO = ("agent", "session_id", "model_id", "provider")
# How much of a memory the update and delete replies quote (the original tool's length).
PREVIEW_CHARS = 80
# memory_update fields an explicit null clears (the original's nullable fields).
CLEARABLE = (
    "source_uri",
    "provider",
    "model_id",
    "model_name",
    "agent",
    "session_id",
    "conversation_id",
    "expires_at",
)


async def memory_store(
    ctx: Context,
    content: Annotated[str, Field(min_length=1)],
    tags: Tags | None = None,
    importance: Unit | None = None,
    valence: Valence | None = None,
    content_type: ContentType = "text",
    namespace: str | None = None,
    metadata: dict[str, Any] | None = None,
    is_metadata: bool | None = None,
    benchmark: Annotated[
        bool, Field(description="test or benchmark data: stored as a metadata memory")
    ] = False,
    expires_at: Annotated[str | None, Field(description="ISO 8601")] = None,
    provider: str | None = None,
    model_id: str | None = None,
    model_name: str | None = None,
    agent: str | None = None,
    session_id: str | None = None,
    conversation_id: str | None = None,
) -> Annotated[CallToolResult, StoreResult]:
    """Store a memory (note, decision, fact). Returns its id; duplicates are merged."""
    api = Api(ctx)
    payload = body(
        content=require_text(content, "content"),
        tags=tags,
        importance=importance,
        valence=valence,
        content_type=content_type,
        namespace=namespace,
        metadata=metadata,
        is_metadata=is_metadata,
        benchmark=benchmark or None,
        expires_at=expires_at,
        source="mcp",
    )
    payload.update(
        api.attribution(
            provider=provider,
            model_id=model_id,
            model_name=model_name,
            agent=agent,
            session_id=session_id,
            conversation_id=conversation_id,
        )
    )
    raw = await api.call("POST", "/api/memories", json=payload)
    out = StoreResult.model_validate(raw)
    return result(render_store(out), out)


def render_store(out: StoreResult) -> str:
    """The original "Stored memory (id: … | …)" for every outcome; a duplicate or a merge says
    which memory it went to in the details."""
    details = [f"id: {out.id}"]
    if out.dedup_action == "skipped":
        # The original's words after "duplicate" ("dedup reused <id> — N% similar"): agents'
        # prompts look for them.
        share = out.dedup_similarity if out.dedup_similarity is not None else 1.0
        matched = out.superseded_id or out.id
        details.append(f"duplicate: dedup reused {matched} — {share:.0%} similar")
    elif out.dedup_action == "superseded":
        details.append(f"supersedes older {out.superseded_id or 'memory'}")
    elif out.dedup_action == "merged":
        similarity = out.dedup_similarity
        similar = f", {similarity:.0%} similar" if similarity is not None else ""
        details.append(f"merged into a similar memory{similar}; the new text was appended")
    if out.tags:
        details.append(f"tags: {', '.join(out.tags)}")
    if not out.indexed:
        details.append("searchable in a moment")
    return f"Stored memory ({' | '.join(details)})"


async def memory_update(
    ctx: Context,
    id: str,
    content: str | None = None,
    tags: Annotated[Tags | None, Field(description="replaces all tags")] = None,
    importance: Unit | None = None,
    valence: Valence | None = None,
    content_type: ContentType | None = None,
    metadata: Annotated[
        dict[str, Any] | None, Field(description="merged; a null value deletes a key")
    ] = None,
    is_metadata: bool | None = None,
    expires_at: Annotated[str | None, Field(description="ISO 8601; empty or null clears")] = None,
    namespace: str | None = None,
    source_uri: Annotated[str | None, Field(description="null clears")] = None,
    provider: str | None = None,
    model_id: str | None = None,
    model_name: str | None = None,
    agent: str | None = None,
    session_id: str | None = None,
    conversation_id: str | None = None,
) -> Annotated[CallToolResult, MemoryOutput]:
    """Change fields of a memory; fields left out stay as they are, an explicit null clears
    source_uri, expires_at and the attribution fields."""
    patch = body(
        content=require_text(content, "content") if content is not None else None,
        tags=tags,
        importance=importance,
        valence=valence,
        content_type=content_type,
        metadata=metadata,
        is_metadata=is_metadata,
        namespace=namespace,
        source_uri=source_uri,
        provider=provider,
        model_id=model_id,
        model_name=model_name,
        agent=agent,
        session_id=session_id,
        conversation_id=conversation_id,
    )
    if expires_at is not None:
        patch["expires_at"] = expires_at or None
    # An explicit null clears the field, as in the original (a field left out stays).
    for name in given_null(ctx, CLEARABLE):
        patch[name] = None
    if not patch:
        raise ToolError("No update fields provided: give at least one field besides `id`.")
    memory_id = check_id(id)
    try:
        raw = await Api(ctx).call("PATCH", f"/api/memories/{memory_id}", json=patch)
    except NotFound as exc:
        raise NotFound(not_found(memory_id)) from exc
    updated = memory(raw)
    return result(render_update(updated), MemoryOutput(memory=updated))


def render_update(m: Memory) -> str:
    """The original `Updated memory <id>: "<preview>" (…)`, with all the facts we know in the
    parentheses; the full content follows when the preview cut it."""
    lines = [f'Updated memory {m.id}: "{m.content[:PREVIEW_CHARS]}" ({memory_facts(m)})']
    if len(m.content) > PREVIEW_CHARS:
        lines.append(f"  content: {m.content}")
    if m.metadata:
        lines.append(f"  metadata: {m.metadata}")
    return "\n".join(lines)


def not_found(memory_id: str) -> str:
    # The original tool's sentence for an unknown id (the gateway answers the same for another
    # namespace's memory, so a scoped key learns nothing more here either).
    return f"Memory {memory_id} not found."


async def memory_forget(
    ctx: Context,
    id: str,
    archive: Annotated[bool, Field(description="archive (restorable) instead of delete")] = False,
) -> Annotated[CallToolResult, ForgetOutput]:
    """Delete a memory for good, or archive it."""
    api = Api(ctx)
    memory_id = check_id(id)
    path = f"/api/memories/{memory_id}"
    try:
        if archive:
            await api.call("POST", f"{path}/archive")
            return result(f"Archived memory {memory_id}", ForgetOutput(id=memory_id, deleted=False))
        # DELETE answers with the id only; the reply quotes what was deleted, as the original did.
        doomed = memory(await api.call("GET", path))
        await api.call("DELETE", path)
    except NotFound as exc:
        raise NotFound(not_found(memory_id)) from exc
    text = f'Deleted memory {memory_id}: "{doomed.content[:PREVIEW_CHARS]}"'
    return result(text, ForgetOutput(id=memory_id, deleted=True))


async def memory_feedback(
    ctx: Context, ids: Annotated[list[str], Field(min_length=1, max_length=FEEDBACK_IDS_MAX)]
) -> Annotated[CallToolResult, FeedbackOutput]:
    """Mark memories as useful; improves their future ranking."""
    raw = await Api(ctx).call("POST", "/api/memories/feedback", json={"ids": ids_argument(ids)})
    out = FeedbackOutput(
        recorded=raw.get("recorded_ids", raw.get("recorded", [])),
        missing=raw.get("missing_ids", raw.get("missing", [])),
    )
    text = f"Recorded usefulness signal for {len(out.recorded)} memories."
    if out.missing:
        text += f" Unknown ids (not counted): {', '.join(out.missing)}"
    return result(text, out)


async def memory_link(
    ctx: Context,
    source_id: str,
    target_id: str,
    link_type: LinkType = "related",
    strength: Unit = 0.5,
    remove: bool = False,
) -> Annotated[CallToolResult, LinkOutput]:
    """Link two memories (or remove the link); linked memories come back together."""
    api = Api(ctx)
    source, target = check_id(source_id, "source_id"), check_id(target_id, "target_id")
    if source == target:
        raise ToolError("`source_id` and `target_id` are the same memory; link two different ones")
    if remove:
        await api.call("DELETE", f"/api/memories/{source}/links/{target}")
        out = LinkOutput(source_id=source, target_id=target, link_type=link_type, removed=True)
        return result(f"Removed link {source} → {target}", out)
    raw = await api.call(
        "POST",
        f"/api/memories/{source}/links",
        json={"target_id": target, "link_type": link_type, "strength": strength},
    )
    out = LinkOutput(
        source_id=source,
        target_id=target,
        link_type=(raw or {}).get("link_type", link_type),
        strength=(raw or {}).get("strength", strength),
        removed=False,
    )
    return result(f"Linked {source} → {target} ({out.link_type}, {out.strength:g})", out)


class Document(BaseModel):
    """A document sent by content: what a remote client gives instead of a path."""

    name: str = Field(min_length=1, max_length=4096, description="names it (its source uri)")
    content: str = Field(min_length=1, description="the markdown text")


# Over HTTP the adapter is not on the user's machine: its files are not the user's.
REMOTE_NO_PATHS = (
    "this Exocortex MCP server is remote and does not read files from its own machine; "
    "send the text instead: {instead}"
)


async def memory_ingest(
    ctx: Context,
    path: Annotated[
        str | list[str] | None,
        Field(description="markdown file(s) on this machine; globs allowed (local server only)"),
    ] = None,
    files: Annotated[
        list[Document] | None, Field(description="documents sent by content: {name, content}")
    ] = None,
    tags: Tags | None = None,
    importance: Unit | None = None,
    content_type: ContentType = "note",
    namespace: str | None = None,
) -> Annotated[CallToolResult, IngestOutput]:
    """Index markdown files by `##` section; re-ingesting a file replaces its memories."""
    api = Api(ctx)
    documents = [(d.name, d.content) for d in files or []]
    if path:
        if api.state.remote:
            raise ToolError(REMOTE_NO_PATHS.format(instead="`files: [{name, content}]`"))
        documents += await asyncio.to_thread(
            _read_markdown, [path] if isinstance(path, str) else path
        )
    if not documents:
        raise ToolError("give `files` ({name, content}) or a local `path`")
    if len(documents) > MAX_INGEST_FILES:
        raise ToolError(f"{len(documents)} files; ingest at most {MAX_INGEST_FILES} per call")
    raw = await api.call(
        "POST",
        "/api/memories/ingest",
        json=body(
            files=[{"name": name, "content": text} for name, text in documents],
            tags=tags,
            importance=importance,
            content_type=content_type,
            namespace=namespace,
        ),
    )
    out = IngestOutput.model_validate(raw)
    lines = [
        f"Ingested {out.stored} memories from {len(out.files)} file(s) (replaced {out.replaced})"
    ]
    lines += [
        f"- {f.name}: {f.stored} stored, {f.sections} sections, {f.unchanged} unchanged"
        for f in out.files
    ]
    return result("\n".join(lines), out)


async def memory_digest_session(
    ctx: Context,
    transcript_path: Annotated[
        str | None, Field(description="session transcript (JSONL) on this machine (local server)")
    ] = None,
    transcript: Annotated[str | None, Field(description="the transcript's JSONL text")] = None,
    tags: Tags | None = None,
    project: str | None = None,
    namespace: str | None = None,
    session_id: str | None = None,
) -> Annotated[CallToolResult, DigestOutput]:
    """Digest a coding-session transcript into one stored session summary."""
    api = Api(ctx)
    if transcript_path:
        if api.state.remote:
            raise ToolError(REMOTE_NO_PATHS.format(instead="`transcript` (the JSONL text)"))
        if transcript:
            raise ToolError("give `transcript` or `transcript_path`, not both")
        transcript = await asyncio.to_thread(_read_file, transcript_path)
    if not transcript:
        raise ToolError("give the transcript's text as `transcript`, or a local `transcript_path`")
    raw = await api.call(
        "POST",
        "/api/memories/digest-session",
        json=body(
            transcript=transcript,
            tags=tags,
            project=project,
            namespace=namespace,
            **{k: v for k, v in api.attribution(session_id=session_id).items() if k in DIGEST_WHO},
        ),
    )
    stored = raw.get("memory") or {}
    out = DigestOutput(
        id=stored.get("id") or raw.get("id"),
        project=raw.get("project"),
        actions=raw.get("actions", 0),
        files_changed=raw.get("files_changed", 0),
        commands=raw.get("commands", 0),
        dedup_action=stored.get("dedup_action"),
    )
    if out.id is None:
        return result("Nothing worth a summary in that transcript; nothing stored", out)
    text = (
        f"Stored session summary {out.id} (project: {out.project or 'unknown'}; "
        f"{out.files_changed} files changed, {out.commands} commands, {out.actions} actions)"
    )
    return result(text, out)


def _read_file(where: str | Path) -> str:
    path = Path(where).expanduser() if isinstance(where, str) else where
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise ToolError(f"{path} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB")
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError as exc:
        raise ToolError(f"no such file: {path}") from exc
    except IsADirectoryError as exc:
        raise ToolError(
            f"{path} is a directory; give a file or a glob such as {path}/*.md"
        ) from exc
    except OSError as exc:
        raise ToolError(f"cannot read {path}: {exc.strerror}") from exc


def _read_markdown(patterns: list[str]) -> list[tuple[str, str]]:
    """Expand globs on this machine (the files live with the agent, not the server)."""
    paths: list[Path] = []
    for pattern in patterns:
        expanded = str(Path(pattern.strip()).expanduser())
        matches = sorted(glob.glob(expanded)) if glob.has_magic(expanded) else [expanded]
        if not matches:
            raise ToolError(f"no file matches {pattern!r}")
        paths += [Path(m).resolve() for m in matches]
    unique = list(dict.fromkeys(paths))
    if not unique:
        raise ToolError("`path` is empty; give a markdown file or a glob")
    if len(unique) > MAX_INGEST_FILES:
        raise ToolError(f"{len(unique)} files match; ingest at most {MAX_INGEST_FILES} per call")
    return [(str(p), _read_file(p)) for p in unique]


def register(server: MCPServer) -> None:
    for tool in (
        memory_store,
        memory_update,
        memory_forget,
        memory_feedback,
        memory_link,
        memory_ingest,
        memory_digest_session,
    ):
        server.add_tool(tool)
