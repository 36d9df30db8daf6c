"""Changing and removing memories: PATCH, archive/restore, hard delete, bulk tag/update.

Every change bumps ``version`` and ``updated_at`` on the memory and its chunks and enqueues one
event in the same transaction. The projector re-reads the rows, so whichever event arrives last,
the index ends at the newest version.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC
from typing import Any

import psycopg
from psycopg import AsyncConnection
from psycopg.types.json import Jsonb

from exocortex.core.domain.keywords import generate_keywords
from exocortex.core.domain.metadata import infer_is_metadata
from exocortex.core.domain.tags import normalize_tags
from exocortex.core.domain.text import content_hash
from exocortex.core.errors import Conflict, InvalidArgument, NotFound
from exocortex.core.logging import get_logger
from exocortex.core.repositories import bulk, memories
from exocortex.ingest import events, validation
from exocortex.ingest.config import WriteConfig
from exocortex.ingest.prepare import ATTRIBUTION, Prepared, chunks_for, clean_content
from exocortex.ingest.rows import build_rows
from exocortex.ingest.service import IngestService
from exocortex.proto.v1 import ingest_pb2

log = get_logger(__name__)

Row = dict[str, Any]
CLEARABLE = ("expires_at", "source_uri", *ATTRIBUTION)
# Columns a chunk copies from its parent.
_CHUNK_COPIED = (
    "namespace", "content_type", "importance", "valence", "is_active", "is_metadata",
    "expires_at", "source_uri",
)  # fmt: skip


@dataclass
class _Patch:
    columns: dict[str, Any] = field(default_factory=dict)
    tags: list[str] | None = None
    content_changed: bool = False
    # The metadata keys sent (``None`` deletes one), merged again into the row read under the
    # lock: merging into the copy read before it would drop keys a concurrent PATCH just wrote.
    metadata_changes: dict[str, Any] | None = None
    explicit_is_metadata: bool = False


def _merge_metadata(current: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    merged = {**current, **changes}
    return {k: v for k, v in merged.items() if v is not None}


async def _lock(conn: AsyncConnection[Row], memory_id: str) -> Row:
    cur = await conn.execute("SELECT id FROM memories WHERE id = %s FOR UPDATE", (memory_id,))
    if await cur.fetchone() is None:
        raise NotFound(f"memory {memory_id} not found", field="id")
    row = await memories.get(conn, memory_id)
    assert row is not None
    return row


async def _chunk_ids(conn: AsyncConnection[Row], memory_id: str) -> list[str]:
    cur = await conn.execute(
        "SELECT id FROM memories WHERE parent_id = %s ORDER BY chunk_index", (memory_id,)
    )
    return [r["id"] for r in await cur.fetchall()]


async def _bump(conn: AsyncConnection[Row], memory_id: str, columns: dict[str, Any]) -> None:
    """Apply column changes and move the version on, for the memory and (copied columns and
    version) for its chunks, so chunk projections follow their parent."""
    sets = ", ".join(f"{name} = %s" for name in columns)
    values = list(columns.values())
    await conn.execute(
        f"UPDATE memories SET {sets}{', ' if sets else ''}updated_at = now(), "
        "version = version + 1 WHERE id = %s",
        (*values, memory_id),
    )
    copied = {k: v for k, v in columns.items() if k in _CHUNK_COPIED}
    chunk_sets = "".join(f"{name} = %s, " for name in copied)
    await conn.execute(
        f"UPDATE memories SET {chunk_sets}updated_at = now(), version = version + 1 "
        "WHERE parent_id = %s",
        (*copied.values(), memory_id),
    )


async def _replace_tags(conn: AsyncConnection[Row], memory_id: str, tags: list[str]) -> None:
    """The memory's tags, copied to its chunks (chunks are filtered by tag in the indexes)."""
    await conn.execute(
        "DELETE FROM memory_tags WHERE memory_id = %s "
        "OR memory_id IN (SELECT id FROM memories WHERE parent_id = %s)",
        (memory_id, memory_id),
    )
    if tags:
        async with conn.cursor() as cur:
            await cur.executemany(
                "INSERT INTO memory_tags (memory_id, tag) "
                "SELECT id, %s FROM memories WHERE id = %s OR parent_id = %s "
                "ON CONFLICT DO NOTHING",
                [(tag, memory_id, memory_id) for tag in tags],
            )


def _conflict(exc: psycopg.errors.UniqueViolation) -> Conflict:
    return Conflict(
        "another active memory in this namespace has the same content; archive or change it first",
        field="content",
    )


class UpdateService:
    def __init__(self, ingest: IngestService) -> None:
        self._ingest = ingest
        self._pool = ingest.pool

    async def update(self, req: ingest_pb2.UpdateMemoryRequest) -> Row:
        config = await self._ingest.config()
        async with self._pool.connection() as conn:
            current = await memories.get(conn, req.id)
        if current is None:
            raise NotFound(f"memory {req.id} not found", field="id")
        if current["parent_id"] is not None:
            raise InvalidArgument(
                "this is a chunk of a longer memory; update its parent instead", field="id"
            )
        patch = self._patch(req, current, config)
        if not patch.columns and patch.tags is None:
            if req.HasField("content") or req.HasField("is_active"):
                # What was asked is already so (same text, same state): nothing to write and
                # no new version, but not an error either.
                return current
            raise InvalidArgument("no fields to update were given", field="")

        # Re-embed before the transaction, like a store: no half-done update when the model
        # is away.
        new_rows = []

        def pick(name: str) -> Any:
            return patch.columns[name] if name in patch.columns else current[name]

        if patch.content_changed:
            content = patch.columns["content"]
            prepared = Prepared(
                content=content,
                namespace=pick("namespace"),
                content_type=pick("content_type"),
                source=current["source"],
                source_uri=current["source_uri"],
                importance=pick("importance"),
                valence=pick("valence"),
                tags=patch.tags if patch.tags is not None else current["tags"],
                metadata={},
                is_metadata=pick("is_metadata"),
                benchmark=False,
                expires_at=pick("expires_at"),
                attribution={k: pick(k) for k in ATTRIBUTION},
                digest=patch.columns["content_hash"],
                keywords="",
                chunks=chunks_for(content, config),
            )
            vectors = await self._ingest.embedder.embed(prepared.embed_texts())
            built = build_rows(
                prepared,
                vectors,
                model=self._ingest.embedder.fingerprint,
                dim=self._ingest.embedder.dimensions,
                memory_id=current["id"],
            )
            parent, new_rows = built[0], built[1:]
            patch.columns.update(
                embedding=parent.embedding,
                embedding_model=parent.embedding_model,
                embedding_dim=parent.embedding_dim,
                enrichment_status="pending",
            )
        try:
            async with self._pool.connection() as conn, conn.transaction():
                locked = await _lock(conn, req.id)
                if patch.metadata_changes is not None:
                    self._remerge_metadata(patch, locked, config)
                removed = await _chunk_ids(conn, req.id) if patch.content_changed else []
                if removed:
                    await conn.execute("DELETE FROM memories WHERE parent_id = %s", (req.id,))
                await _bump(conn, req.id, patch.columns)
                if new_rows:
                    await bulk.insert_memories(conn, new_rows)
                if patch.tags is not None:
                    await _replace_tags(conn, req.id, patch.tags)
                row = await memories.get(conn, req.id)
                assert row is not None
                change = self._change(current, row, patch)
                await events.emit(conn, row, change, [*removed, *(r.id for r in new_rows)])
        except psycopg.errors.UniqueViolation as exc:
            raise _conflict(exc) from exc
        return row

    def _change(self, before: Row, after: Row, patch: _Patch) -> str:
        if before["is_active"] and not after["is_active"]:
            return "archived"
        if not before["is_active"] and after["is_active"]:
            return "restored"
        return "updated"

    def _patch(
        self, req: ingest_pb2.UpdateMemoryRequest, current: Row, config: WriteConfig
    ) -> _Patch:
        patch = _Patch()
        cols = patch.columns
        for name in req.clear_fields:
            if name not in CLEARABLE:
                raise InvalidArgument(
                    f"only {', '.join(CLEARABLE)} can be cleared", field=name or "clear_fields"
                )
            cols[name] = None
        if req.HasField("content"):
            content = clean_content(req.content, self._ingest.max_content_chars)
            if content != current["content"]:
                cols["content"] = content
                cols["content_hash"] = content_hash(
                    content, normalize_whitespace=config.normalize_whitespace
                )
                patch.content_changed = True
        if req.HasField("content_type"):
            cols["content_type"] = validation.check_choice(
                req.content_type, validation.CONTENT_TYPES, "content_type"
            )
        if req.HasField("tags"):
            validation.check_tags(list(req.tags.values))
            patch.tags = normalize_tags(req.tags.values, config.aliases)
        if req.HasField("importance"):
            cols["importance"] = validation.check_range(req.importance, 0, 1, "importance")
        if req.HasField("valence"):
            cols["valence"] = validation.check_range(req.valence, -1, 1, "valence")
        if req.HasField("expires_at"):
            cols["expires_at"] = req.expires_at.ToDatetime(tzinfo=UTC)
        if req.HasField("source_uri"):
            cols["source_uri"] = validation.optional_text(req.source_uri)
        if req.HasField("namespace"):
            cols["namespace"] = validation.check_namespace(req.namespace)
        for key in ATTRIBUTION:
            if req.attribution.HasField(key):
                cols[key] = validation.optional_text(getattr(req.attribution, key))
        metadata = current["metadata"]
        if req.metadata_patch_json:
            patch.metadata_changes = validation.parse_metadata(req.metadata_patch_json)
            metadata = _merge_metadata(metadata, patch.metadata_changes)
            cols["metadata"] = Jsonb(metadata)
        if req.HasField("is_active") and req.is_active != current["is_active"]:
            cols["is_active"] = req.is_active
            if req.is_active:
                cols["superseded_by"] = None
        if req.HasField("is_metadata"):
            cols["is_metadata"] = req.is_metadata
            patch.explicit_is_metadata = True
        elif patch.tags is not None or req.metadata_patch_json:
            cols["is_metadata"] = infer_is_metadata(
                explicit=None,
                benchmark=False,
                tags=patch.tags if patch.tags is not None else current["tags"],
                metadata=metadata,
                settings=config.raw,
            )
        if patch.content_changed or patch.tags is not None:
            cols["keywords"] = generate_keywords(
                cols["content"] if "content" in cols else current["content"],
                patch.tags if patch.tags is not None else current["tags"],
            )
        return patch

    def _remerge_metadata(self, patch: _Patch, locked: Row, config: WriteConfig) -> None:
        assert patch.metadata_changes is not None
        metadata = _merge_metadata(locked["metadata"], patch.metadata_changes)
        patch.columns["metadata"] = Jsonb(metadata)
        if "is_metadata" in patch.columns and not patch.explicit_is_metadata:
            patch.columns["is_metadata"] = infer_is_metadata(
                explicit=None,
                benchmark=False,
                tags=patch.tags if patch.tags is not None else locked["tags"],
                metadata=metadata,
                settings=config.raw,
            )

    async def set_active(self, memory_id: str, active: bool) -> Row:
        """Archive (soft) or restore; restoring clears ``superseded_by``."""
        try:
            async with self._pool.connection() as conn, conn.transaction():
                current = await _lock(conn, memory_id)
                if current["parent_id"] is not None:
                    raise InvalidArgument(
                        "this is a chunk of a longer memory; archive its parent", field="id"
                    )
                if bool(current["is_active"]) == active:
                    state = "active" if active else "archived"
                    raise Conflict(f"memory {memory_id} is already {state}", field="id")
                columns: dict[str, Any] = {"is_active": active}
                if active:
                    columns["superseded_by"] = None
                await _bump(conn, memory_id, columns)
                row = await memories.get(conn, memory_id)
                assert row is not None
                await events.emit(conn, row, "restored" if active else "archived")
        except psycopg.errors.UniqueViolation as exc:
            raise _conflict(exc) from exc
        return row

    async def delete(self, memory_id: str) -> int:
        """Hard delete on explicit request. Chunks, tags, links, entity mentions and goal links
        go with it (foreign keys); consolidation sources only lose their reference."""
        async with self._pool.connection() as conn, conn.transaction():
            current = await _lock(conn, memory_id)
            if current["parent_id"] is not None:
                raise InvalidArgument(
                    "this is a chunk of a longer memory; delete its parent", field="id"
                )
            chunk_ids = await _chunk_ids(conn, memory_id)
            await conn.execute("DELETE FROM memories WHERE id = %s", (memory_id,))
            gone = {**current, "version": int(current["version"]) + 1}
            await events.emit(conn, gone, "deleted", chunk_ids)
        log.info("memory deleted", memory_id=memory_id, chunks=len(chunk_ids))
        return len(chunk_ids)

    async def bulk_tag(
        self, ids: list[str], add: list[str], remove: list[str]
    ) -> tuple[int, list[str]]:
        config = await self._ingest.config()
        validation.check_tags(add)
        add_tags = normalize_tags(add, config.aliases)
        remove_tags = normalize_tags(remove, config.aliases)
        if not add_tags and not remove_tags:
            raise InvalidArgument("give add_tags or remove_tags", field="add_tags")
        return await self._bulk(
            ids, lambda tags: [t for t in dict.fromkeys([*tags, *add_tags]) if t not in remove_tags]
        )

    async def bulk_update(self, ids: list[str], columns: dict[str, Any]) -> tuple[int, list[str]]:
        if not columns:
            raise InvalidArgument("give importance, valence or is_active", field="importance")
        if "importance" in columns:
            validation.check_range(columns["importance"], 0, 1, "importance")
        if "valence" in columns:
            validation.check_range(columns["valence"], -1, 1, "valence")
        return await self._bulk(ids, None, columns)

    async def _bulk(
        self,
        ids: list[str],
        retag: Any = None,
        columns: dict[str, Any] | None = None,
    ) -> tuple[int, list[str]]:
        if not ids:
            raise InvalidArgument("ids must not be empty", field="ids")
        if len(ids) > 1000:
            raise InvalidArgument("at most 1000 ids per call", field="ids")
        unique = list(dict.fromkeys(ids))
        try:
            return await self._bulk_apply(unique, retag, columns)
        except psycopg.errors.UniqueViolation as exc:
            raise _conflict(exc) from exc

    async def _bulk_apply(
        self, unique: list[str], retag: Any, columns: dict[str, Any] | None
    ) -> tuple[int, list[str]]:
        async with self._pool.connection() as conn, conn.transaction():
            found = await memories.get_many(conn, unique)
            roots = [i for i in unique if i in found and found[i]["parent_id"] is None]
            for memory_id in roots:
                await _lock(conn, memory_id)
                cols = dict(columns or {})
                if cols.get("is_active") is True:
                    cols["superseded_by"] = None
                await _bump(conn, memory_id, cols)
                if retag is not None:
                    await _replace_tags(conn, memory_id, retag(found[memory_id]["tags"]))
                row = await memories.get(conn, memory_id)
                assert row is not None
                await events.emit(conn, row, self._change(found[memory_id], row, _Patch()))
        return len(roots), [i for i in unique if i not in roots]
