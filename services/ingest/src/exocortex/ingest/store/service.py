"""StoreMemory: strip, normalise, dedup (hash, then semantic over the whole namespace), chunk,
embed, and commit the rows with their event in one transaction. In merge mode a near match
takes the new text instead (``merge``)."""

from __future__ import annotations

import time
from collections.abc import Callable

from exocortex.core.clients.embedding import EmbeddingClient
from exocortex.core.clients.retrieval import Neighbour, RetrievalClient
from exocortex.core.db.pool import Pool, reading
from exocortex.core.domain.contradictions import find_contradiction
from exocortex.core.domain.vectors import Vector
from exocortex.core.errors import ExoError
from exocortex.core.logging import get_logger
from exocortex.core.records import MemoryRecord
from exocortex.core.repositories import bulk, memories
from exocortex.core.repositories.memories import NewMemory
from exocortex.core.settings_cache import SettingsCache
from exocortex.ingest import events, metrics
from exocortex.ingest.store import children, folds, merge, repository, tokens
from exocortex.ingest.store.config import WriteConfig
from exocortex.ingest.store.group import GroupCommitter, KeptTokens
from exocortex.ingest.store.model import MemoryInput, Row, StoreResult
from exocortex.ingest.store.prepare import Prepared, prepare
from exocortex.ingest.store.repository import UniqueClash
from exocortex.ingest.store.rows import build_rows

log = get_logger(__name__)


class StoreService:
    def __init__(
        self,
        pool: Pool,
        embedder: EmbeddingClient,
        retrieval: RetrievalClient,
        settings_cache: SettingsCache,
        *,
        max_content_chars: int,
        default_attribution: dict[str, str] | None = None,
        on_commit: Callable[[], None] | None = None,
    ) -> None:
        """``on_commit`` wakes this process's outbox relay once a new memory is committed."""
        self.pool = pool
        self.embedder = embedder
        self.retrieval = retrieval
        self._settings = settings_cache
        self.max_content_chars = max_content_chars
        self.default_attribution = default_attribution or {}
        # New memories of concurrent stores commit together (see group).
        self.committer = GroupCommitter(pool, on_commit=on_commit)

    async def config(self) -> WriteConfig:
        return WriteConfig.from_settings(await self._settings.get())

    async def store(self, request: MemoryInput) -> StoreResult:
        start = time.perf_counter()
        outcome = "error"
        try:
            config = await self.config()
            prepared = prepare(
                request,
                config,
                max_chars=self.max_content_chars,
                default_attribution=self.default_attribution,
            )
            if request.parent_id:
                result = await self.store_child(prepared, request.parent_id)
            else:
                result = await self.store_prepared(prepared, config)
            outcome = result.dedup_action
            metrics.STORES.labels(result.dedup_action).inc()
            return result
        finally:
            metrics.STORE_DURATION.labels(outcome).observe(time.perf_counter() - start)

    async def store_prepared(self, p: Prepared, config: WriteConfig) -> StoreResult:
        supersede: tuple[str, float] | None = None
        if config.hash_dedup:
            async with reading(self.pool) as conn:
                existing = await memories.find_active_root_by_hash(
                    conn, p.namespace, p.content_type, p.digest
                )
            if existing is not None:
                if config.skip_insert_on_match:
                    return await self.reuse(existing, p, similarity=1.0, reason="hash")
                supersede = (existing["id"], 1.0)

        # Embedding happens before any write: if the model is away the store fails (503) and
        # nothing is half-written. The token vectors come from the same run (see tokens).
        vectors, token_vectors = await tokens.embed(
            self.embedder, p.embed_texts(), keep=config.keep_tokens and not p.chunks
        )

        if supersede is None and p.semantic_dedup_eligible(config):
            match = await self.semantic_match(p, vectors[0], config)
            if match is not None and hides_a_correction(match, p, config):
                # "X is not Y" embeds close to "X is Y": folding it into that memory as a
                # variant (or merging the two) would hide a correction. It becomes a memory
                # of its own, and enrichment records the contradiction for review.
                log.info(
                    "near duplicate contradicts its match: stored on its own",
                    similar_to=match[0]["id"],
                    similarity=match[1],
                )
                match = None
            if match is not None:
                existing, similarity = match
                if similarity < config.similarity_threshold:
                    merged = await self.merge(existing, p, similarity, config)
                    if merged is not None:
                        return merged
                elif config.skip_insert_on_match:
                    folded = await self.fold(
                        existing,
                        p,
                        similarity=similarity,
                        reason="semantic",
                        variant=vectors[0] if config.keep_variants else None,
                        max_variants=config.max_variants,
                    )
                    if folded is not None:
                        return folded
                    # No room to keep this wording with the memory it resembles: it becomes
                    # a memory of its own rather than an acknowledged write nobody can find.
                else:
                    supersede = (existing["id"], similarity)

        created = await self.create(p, vectors, supersede, token_vectors)
        if created.dedup_action == "superseded":
            await tokens.keep(self.pool, self.embedder, created.memory.id, p.content, token_vectors)
        return created

    async def store_child(self, p: Prepared, parent_id: str) -> StoreResult:
        """Store ``p`` as a child of ``parent_id``: never chunked nor deduplicated (a part of
        a memory is not a memory of its own), embedded whole."""
        vectors = await self.embedder.embed([p.content]) if p.embed else []
        async with repository.transaction(self.pool) as conn:
            row = await children.insert_child(
                conn,
                parent_id,
                p,
                vectors[0] if vectors else None,
                model=self.embedder.fingerprint,
                dim=self.embedder.dimensions,
            )
        log.info("memory stored as a child", memory_id=row["id"], parent_id=parent_id)
        return StoreResult(_record(row), "created")

    async def create(
        self,
        p: Prepared,
        vectors: list[Vector],
        supersede: tuple[str, float] | None = None,
        token_vectors: bytes | None = None,
    ) -> StoreResult:
        """Insert ``p`` (already embedded) as a new memory, archiving ``supersede``'s memory in
        the same transaction when given; a new memory's token vectors are written in its own
        transaction (a superseding one's by the caller, after it)."""
        rows = build_rows(p, vectors, model=self.embedder.fingerprint, dim=self.embedder.dimensions)
        kept = (
            KeptTokens(token_vectors, self.embedder.fingerprint, self.embedder.dimensions)
            if token_vectors is not None
            else None
        )
        try:
            if supersede is None:
                row = await self.committer.insert(rows, kept)
            else:
                row = await self._create_superseding(rows, supersede)
        except UniqueClash:
            # A concurrent identical store won the race: the unique index guarantees one row.
            async with reading(self.pool) as conn:
                existing = await memories.find_active_root_by_hash(
                    conn, p.namespace, p.content_type, p.digest
                )
            if existing is None:
                raise
            return await self.reuse(existing, p, similarity=1.0, reason="constraint")
        log.info("memory stored", memory_id=row["id"], namespace=p.namespace, chunks=len(p.chunks))
        if supersede is not None:
            return StoreResult(_record(row), "superseded", supersede[0], supersede[1])
        return StoreResult(_record(row), "created")

    async def _create_superseding(self, rows: list[NewMemory], supersede: tuple[str, float]) -> Row:
        """Insert ``rows`` and archive ``supersede``'s memory in one transaction."""
        async with repository.transaction(self.pool) as conn:
            # Deactivate first: the unique hash index allows one active root.
            await repository.archive_family(conn, supersede[0])
            row = (await bulk.insert_memories(conn, rows, returning=True))[rows[0].id]
            await events.emit(conn, row, "stored", [r.id for r in rows[1:]])
            await repository.set_superseded_by(conn, supersede[0], row["id"])
            old = await memories.get(conn, supersede[0])
            assert old is not None
            await events.emit(conn, old, "archived")
        return row

    async def semantic_match(
        self, p: Prepared, vector: Vector, config: WriteConfig
    ) -> tuple[Row, float] | None:
        """The most similar active root of the same type in the namespace (sharing a tag when
        tags were given), over the whole namespace via the vector index."""
        neighbours = await self.nearest([vector], p, config, limit=3)
        if not neighbours:
            return None
        async with reading(self.pool) as conn:
            rows = await memories.get_many(conn, [n.memory_id for n in neighbours])
        for n in neighbours:
            row = rows.get(n.memory_id)
            # The index may lag behind Postgres: trust only what is active now.
            if row is not None and row["is_active"] and row["parent_id"] is None:
                return row, round(n.similarity, 4)
        return None

    async def merge(
        self, existing: Row, p: Prepared, similarity: float, config: WriteConfig
    ) -> StoreResult | None:
        """Merge mode: append the new text to a near match (None: store it on its own)."""
        if merge.already_merged(existing, p):
            return await self.reuse(existing, p, similarity=similarity, reason="merged-before")
        if len(existing["content"]) + len(merge.SEPARATOR) + len(p.content) > (
            self.max_content_chars
        ):
            return None  # the merged memory would exceed the content limit
        row = await merge.merge_into(self.pool, self.embedder, existing["id"], p, config)
        if row is None:
            return None
        log.info("store merged into a similar memory", memory_id=row["id"], similarity=similarity)
        return StoreResult(_record(row), "merged", row["id"], similarity)

    async def nearest(
        self, vectors: list[Vector], p: Prepared, config: WriteConfig, *, limit: int
    ) -> list[Neighbour]:
        try:
            results = await self.retrieval.nearest(
                vectors,
                namespace=p.namespace,
                limit=limit,
                min_similarity=config.semantic_floor,
                content_type=p.content_type,
                tags=p.given_tags,
                roots_only=True,
            )
        except ExoError as exc:
            # The index is a projection; without it the write still happens (hash dedup and
            # the unique index keep exact duplicates out).
            log.warning(
                "semantic dedup skipped: nearest-neighbour lookup failed", error=exc.message
            )
            metrics.DEDUP_LOOKUP_FAILURES.inc()
            return []
        return results[0] if results else []

    async def reuse(
        self, existing: Row, p: Prepared, *, similarity: float, reason: str
    ) -> StoreResult:
        """The skip path for a text the existing memory already holds (same hash, or already
        merged into it): merge the new tags and metadata and raise importance."""
        result = await self.fold(existing, p, similarity=similarity, reason=reason)
        assert result is not None  # only keeping a variant can find no room
        return result

    async def fold(
        self,
        existing: Row,
        p: Prepared,
        *,
        similarity: float,
        reason: str,
        variant: Vector | None = None,
        max_variants: int = 0,
    ) -> StoreResult | None:
        """The skip path: keep the existing memory, merge the new tags and metadata, raise
        importance, and keep a near duplicate's wording as a variant when ``variant`` (its
        vector) is given. The existing memory's version moves on, so its projection (variants
        and chunks included) is refreshed. None, with nothing changed, when the wording has no
        room among the memory's variants (or the memory was archived meanwhile): the caller
        stores it as a memory of its own."""
        existing, (kept,) = await folds.fold_group(
            self.pool,
            existing,
            [folds.Duplicate(p, variant)],
            model=self.embedder.fingerprint,
            dim=self.embedder.dimensions,
            max_variants=max_variants,
        )
        if not kept:
            return None
        log.info("duplicate store reused existing memory", memory_id=existing["id"], reason=reason)
        return StoreResult(_record(existing), "skipped", existing["id"], similarity)


def hides_a_correction(match: tuple[Row, float], p: Prepared, config: WriteConfig) -> bool:
    """Whether dedup would fold or merge ``p`` into a memory it contradicts. Supersede mode
    (``dedup.skip_insert_on_match`` false) is left alone: there the new text replaces the old,
    which is what a correction should do."""
    existing, similarity = match
    replaces = similarity >= config.similarity_threshold and not config.skip_insert_on_match
    return not replaces and find_contradiction(str(existing["content"]), p.content) is not None


def _record(row: Row) -> MemoryRecord:
    """What a store answers with: the memory as it is now, typed."""
    return MemoryRecord.from_row(row)
