"""Changing and removing memories: PATCH, archive/restore, hard delete, bulk tag/update.

Every change bumps ``version`` and ``updated_at`` on the memory and its chunks and enqueues one
event in the same transaction. The projector re-reads the rows, so whichever event arrives last,
the index ends at the newest version.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from exocortex.core.domain.tags import normalize_tags
from exocortex.core.errors import Conflict, InvalidArgument, NotFound
from exocortex.core.logging import get_logger
from exocortex.core.records import MemoryRecord
from exocortex.core.repositories import bulk, memories
from exocortex.core.repositories.memories import NewMemory
from exocortex.ingest import events
from exocortex.ingest.store import tokens, validation
from exocortex.ingest.store.config import WriteConfig
from exocortex.ingest.store.model import Row
from exocortex.ingest.store.prepare import ATTRIBUTION, Prepared, chunks_for
from exocortex.ingest.store.repository import UniqueClash, child_ids, delete_children, transaction
from exocortex.ingest.store.rows import build_rows
from exocortex.ingest.store.service import StoreService
from exocortex.ingest.update import repository
from exocortex.ingest.update.model import MemoryChanges
from exocortex.ingest.update.patch import Patch, build_patch

log = get_logger(__name__)

Retag = Callable[[list[str]], list[str]]
# Each attempt re-embeds new text; more than a few means the memory is being rewritten right now.
MAX_ATTEMPTS = 5


def _conflict() -> Conflict:
    return Conflict(
        "another active memory in this namespace has the same content; archive or change it first",
        field="content",
    )


class UpdateService:
    def __init__(self, ingest: StoreService) -> None:
        self._ingest = ingest
        self._pool = ingest.pool

    async def update(self, req: MemoryChanges) -> MemoryRecord:
        """Apply a PATCH. The patch is built from a read and committed only if the row is still
        at that version (checked under ``FOR UPDATE``); otherwise it is rebuilt from the locked
        row, so nothing another writer (a PATCH, enrichment, a dedup merge) committed meanwhile
        is overwritten from a stale copy. New text is embedded outside the transaction, so a
        content change whose row moved on is prepared again, a few times."""
        config = await self._ingest.config()
        for _ in range(MAX_ATTEMPTS):
            async with self._pool.connection() as conn:
                current = await memories.get(conn, req.id)
            if current is None:
                raise NotFound(f"memory {req.id} not found", field="id")
            patch = self._plan(req, current, config)
            if patch is None:
                return MemoryRecord.from_row(current)
            new_rows = await self._rechunk(current, patch, config) if patch.content_changed else []
            written = await self._write(req, current, patch, new_rows, config)
            if written is not None:
                if patch.content_changed:
                    made_from = patch.columns["content"]
                    await tokens.keep(
                        self._pool, self._ingest.embedder, req.id, made_from, patch.tokens
                    )
                return written
            log.info("memory changed while its update was prepared; retrying", memory_id=req.id)
        raise Conflict(
            f"memory {req.id} kept changing while this update was prepared; send it again",
            field="id",
        )

    def _plan(self, req: MemoryChanges, row: Row, config: WriteConfig) -> Patch | None:
        """What ``req`` changes on ``row``; None when what was asked is already so."""
        if row["parent_id"] is not None:
            raise InvalidArgument(
                "this is a chunk of a longer memory; update its parent instead", field="id"
            )
        patch = build_patch(req, row, config, max_chars=self._ingest.max_content_chars)
        if not patch.columns and patch.tags is None:
            if req.content is not None or req.is_active is not None:
                # Same text, same state: nothing to write and no new version, but not an error.
                return None
            raise InvalidArgument("no fields to update were given", field="")
        return patch

    async def _rechunk(self, current: Row, patch: Patch, config: WriteConfig) -> list[NewMemory]:
        """Embed the new text before the transaction, like a store: no half-done update when
        the model is away. Sets the parent's vector columns on ``patch``; returns the chunks."""

        def pick(name: str) -> Any:
            return patch.columns[name] if name in patch.columns else current[name]

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
        vectors, patch.tokens = await tokens.embed(
            self._ingest.embedder,
            prepared.embed_texts(),
            keep=config.keep_tokens and not prepared.chunks,
        )
        built = build_rows(
            prepared,
            vectors,
            model=self._ingest.embedder.fingerprint,
            dim=self._ingest.embedder.dimensions,
            memory_id=current["id"],
        )
        parent = built[0]
        patch.columns.update(
            embedding=parent.embedding,
            embedding_model=parent.embedding_model,
            embedding_dim=parent.embedding_dim,
            enrichment_status="pending",
        )
        return built[1:]

    async def _write(
        self,
        req: MemoryChanges,
        current: Row,
        patch: Patch,
        new_rows: list[NewMemory],
        config: WriteConfig,
    ) -> MemoryRecord | None:
        """Commit ``patch`` if the row is still as read; a patch without new text is rebuilt
        on the locked row instead. None: new text must be prepared again on the newer row."""
        try:
            async with transaction(self._pool) as conn:
                locked = await repository.lock(conn, req.id)
                if int(locked["version"]) != int(current["version"]):
                    rebuilt = self._plan(req, locked, config)
                    if rebuilt is None:
                        return MemoryRecord.from_row(locked)
                    if rebuilt.content_changed:
                        return None  # chunks and vector were built from the older row
                    patch, new_rows, current = rebuilt, [], locked
                removed = await child_ids(conn, req.id) if patch.content_changed else []
                if removed:
                    await delete_children(conn, req.id)
                await repository.bump(conn, req.id, patch.columns)
                if new_rows:
                    await bulk.insert_memories(conn, new_rows)
                if patch.tags is not None:
                    await repository.replace_tags(conn, req.id, patch.tags)
                row = await memories.get(conn, req.id)
                assert row is not None
                change = self._change(current, row, patch)
                await events.emit(conn, row, change, [*removed, *(r.id for r in new_rows)])
        except UniqueClash as exc:
            raise _conflict() from exc
        return MemoryRecord.from_row(row)

    def _change(self, before: Row, after: Row, patch: Patch) -> str:
        if before["is_active"] and not after["is_active"]:
            return "archived"
        if not before["is_active"] and after["is_active"]:
            return "restored"
        return "updated"

    async def set_active(self, memory_id: str, active: bool) -> MemoryRecord:
        """Archive (soft) or restore; restoring clears ``superseded_by``."""
        try:
            async with transaction(self._pool) as conn:
                current = await repository.lock(conn, memory_id)
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
                await repository.bump(conn, memory_id, columns)
                row = await memories.get(conn, memory_id)
                assert row is not None
                await events.emit(conn, row, "restored" if active else "archived")
        except UniqueClash as exc:
            raise _conflict() from exc
        return MemoryRecord.from_row(row)

    async def delete(self, memory_id: str) -> int:
        """Hard delete on explicit request. Chunks, tags, links, entity mentions and goal links
        go with it (foreign keys); consolidation sources only lose their reference."""
        async with self._pool.connection() as conn, conn.transaction():
            current = await repository.lock(conn, memory_id)
            if current["parent_id"] is not None:
                raise InvalidArgument(
                    "this is a chunk of a longer memory; delete its parent", field="id"
                )
            chunk_ids = await child_ids(conn, memory_id)
            await repository.delete(conn, memory_id)
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
        retag: Retag | None = None,
        columns: dict[str, Any] | None = None,
    ) -> tuple[int, list[str]]:
        if not ids:
            raise InvalidArgument("ids must not be empty", field="ids")
        if len(ids) > 1000:
            raise InvalidArgument("at most 1000 ids per call", field="ids")
        unique = list(dict.fromkeys(ids))
        try:
            return await self._bulk_apply(unique, retag, columns)
        except UniqueClash as exc:
            raise _conflict() from exc

    async def _bulk_apply(
        self, unique: list[str], retag: Retag | None, columns: dict[str, Any] | None
    ) -> tuple[int, list[str]]:
        async with transaction(self._pool) as conn:
            found = await memories.get_many(conn, unique)
            roots = [i for i in unique if i in found and found[i]["parent_id"] is None]
            for memory_id in roots:
                await repository.lock(conn, memory_id)
                cols = dict(columns or {})
                if cols.get("is_active") is True:
                    cols["superseded_by"] = None
                await repository.bump(conn, memory_id, cols)
                if retag is not None:
                    await repository.replace_tags(conn, memory_id, retag(found[memory_id]["tags"]))
                row = await memories.get(conn, memory_id)
                assert row is not None
                await events.emit(conn, row, self._change(found[memory_id], row, Patch()))
        return len(roots), [i for i in unique if i not in roots]
