"""Bulk import: many memories per call, with one embedding call, one nearest-neighbour call and
one transaction per batch (executemany inserts, one outbox event per memory); the next batches
are embedded while one is written."""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from exocortex.core.domain.vectors import Vector
from exocortex.core.errors import ExoError, InvalidArgument
from exocortex.core.ids import new_ids
from exocortex.core.logging import get_logger
from exocortex.core.repositories import bulk, memories
from exocortex.core.repositories import tokens as token_repository
from exocortex.ingest import events, metrics
from exocortex.ingest.store import folds, repository, tokens
from exocortex.ingest.store.config import WriteConfig
from exocortex.ingest.store.model import MemoryInput, Row, StoreResult
from exocortex.ingest.store.prepare import Prepared, prepare
from exocortex.ingest.store.repository import UniqueClash
from exocortex.ingest.store.rows import build_rows
from exocortex.ingest.store.service import StoreService, hides_a_correction

log = get_logger(__name__)
BATCH_SIZE = 128
# A batch of long texts on a busy CPU can take a while; a store keeps the short default.
EMBED_TIMEOUT_SECONDS = 180.0
MAX_ITEMS = 10_000
# Batches embedded ahead of the one being written. Two, so the model always has the next call
# waiting: between one batch's embedding and the next sit the packing and transfer of its
# vectors and token vectors, which left the model half idle with one.
AHEAD_BATCHES = 2


@dataclass
class ItemResult:
    index: int
    dedup_action: str = "failed"
    id: str = ""
    error: str = ""
    field: str = ""
    # What failed it, for a caller that answers with the error itself (markdown ingest).
    cause: ExoError | None = None

    def fail(self, exc: ExoError, field: str) -> None:
        self.error, self.field, self.cause = exc.message, field, exc


@dataclass
class _Embedded:
    """A batch after its first stage: what is left to write, and with what."""

    todo: dict[int, Prepared]  # by index in the request
    existing: dict[int, Row] = field(default_factory=dict)  # exact duplicates of stored ones
    vectors: dict[int, list[Any]] = field(default_factory=dict)
    tokens: dict[int, bytes] = field(default_factory=dict)


class BulkImporter:
    """Imports a request's memories batch by batch, in two stages: first (prepare, the look-up
    of exact duplicates, one embedding call) and then the writes (semantic dedup, one
    transaction). The first stages of the next ``AHEAD_BATCHES`` batches run while this one
    writes, so the model is not left idle while Postgres and the index are busy; the writes
    stay in the request's order, one batch after another."""

    def __init__(self, ingest: StoreService, batch_size: int = BATCH_SIZE) -> None:
        self._ingest = ingest
        self._batch = batch_size

    async def run(self, items: list[MemoryInput]) -> list[ItemResult]:
        if not items:
            raise InvalidArgument("memories must not be empty", field="memories")
        if len(items) > MAX_ITEMS:
            raise InvalidArgument(f"at most {MAX_ITEMS} memories per call", field="memories")
        config = await self._ingest.config()
        results = [ItemResult(i) for i in range(len(items))]
        # The first of each text in the whole request, and the later ones that point at it:
        # a repeat is never embedded, even when the batch its first is in is still writing.
        first_of: dict[tuple[str, str, str], int] = {}
        dup_of: dict[int, int] = {}
        repeats: dict[int, Prepared] = {}

        def first_stage(start: int) -> asyncio.Task[_Embedded]:
            batch = items[start : start + self._batch]
            return asyncio.create_task(
                self._embed_stage(batch, start, config, results, first_of, dup_of, repeats)
            )

        starts = iter(range(0, len(items), self._batch))
        ahead: deque[asyncio.Task[_Embedded]] = deque()

        def top_up() -> None:
            while len(ahead) < AHEAD_BATCHES and (start := next(starts, None)) is not None:
                ahead.append(first_stage(start))

        top_up()
        try:
            while ahead:
                embedded = await ahead.popleft()
                top_up()
                await self._write_stage(embedded, config, results)
        finally:
            # A batch failed to write: those after it are not written either.
            for task in ahead:
                task.cancel()
            await asyncio.gather(*ahead, return_exceptions=True)
        for i, first in dup_of.items():
            results[i].dedup_action = "skipped" if results[first].id else "failed"
            results[i].id = results[first].id
            results[i].error = results[first].error
            results[i].cause = results[first].cause
        await self._fold_repeats(repeats, results)
        for r in results:
            metrics.IMPORT_ITEMS.labels(r.dedup_action).inc()
        return results

    async def _embed_stage(
        self,
        items: list[MemoryInput],
        offset: int,
        config: WriteConfig,
        results: list[ItemResult],
        first_of: dict[tuple[str, str, str], int],
        dup_of: dict[int, int],
        repeats: dict[int, Prepared],
    ) -> _Embedded:
        """Prepare the batch, find its exact duplicates (within the request and stored) and
        embed the rest. Reads only: nothing is written before the write stage."""
        todo: dict[int, Prepared] = {}
        for n, item in enumerate(items):
            i = offset + n
            try:
                p = prepare(
                    item,
                    config,
                    max_chars=self._ingest.max_content_chars,
                    default_attribution=self._ingest.default_attribution,
                )
            except ExoError as exc:
                results[i].fail(exc, f"memories.{i}.{exc.field}")
                continue
            key = (p.namespace, p.content_type, p.digest)
            if key in first_of:
                dup_of[i] = first_of[key]
                repeats[i] = p
            else:
                first_of[key] = i
                todo[i] = p
        embedded = _Embedded(todo)

        # Exact duplicates of stored memories, in one query.
        if config.hash_dedup and todo:
            existing = await self._existing_by_hash(list(todo.values()))
            for i, p in list(todo.items()):
                row = existing.get((p.namespace, p.content_type, p.digest))
                if row is not None:
                    embedded.existing[i] = row

        ordered = [(i, p) for i, p in todo.items() if i not in embedded.existing]
        if ordered:
            texts = [t for _, p in ordered for t in p.embed_texts()]
            # One embedding call for the batch; if the model is away the import fails here
            # (this batch was not written; those before it were).
            # The token vectors come from the same run (see store/tokens.py).
            vectors, token_vectors = await tokens.embed_many(
                self._ingest.embedder,
                texts,
                keep=config.keep_tokens,
                deadline_seconds=EMBED_TIMEOUT_SECONDS,
                # Behind any single store's text waiting: a store during an import is not
                # queued behind the import's batches.
                bulk=True,
            )
            cursor = 0
            for i, p in ordered:
                n = len(p.embed_texts())
                embedded.vectors[i] = vectors[cursor : cursor + n]
                if token_vectors is not None and n == 1 and not p.chunks:
                    embedded.tokens[i] = token_vectors[cursor]
                cursor += n
        return embedded

    async def _write_stage(
        self, embedded: _Embedded, config: WriteConfig, results: list[ItemResult]
    ) -> None:
        todo = embedded.todo
        for i, row in embedded.existing.items():
            await self._single(i, todo.pop(i), config, results, row)
        if todo:
            await self._semantic(todo, embedded.vectors, config, results)
        if todo:
            await self._insert(todo, embedded.vectors, embedded.tokens, config, results)

    async def _fold_repeats(self, repeats: dict[int, Prepared], results: list[ItemResult]) -> None:
        """What a repeated text brings beyond its first occurrence (tags, metadata, a higher
        importance) is merged into the memory that one became, as for a repeat of a stored
        memory: one transaction a memory, none when the repeats add nothing. A merge that
        fails leaves the repeat `skipped` (its text is stored) and is logged."""
        groups: dict[str, list[Prepared]] = {}
        for i, p in repeats.items():
            if results[i].id:
                groups.setdefault(results[i].id, []).append(p)
        if not groups:
            return
        async with self._ingest.pool.connection() as conn:
            rows = await memories.get_many(conn, list(groups))
        for memory_id, prepared in groups.items():
            row = rows.get(memory_id)
            if row is None or not row["is_active"]:
                continue
            try:
                await folds.fold_group(
                    self._ingest.pool,
                    row,
                    [folds.Duplicate(p, None) for p in prepared],
                    model=self._ingest.embedder.fingerprint,
                    dim=self._ingest.embedder.dimensions,
                    max_variants=0,
                )
            except ExoError as exc:
                log.warning(
                    "an import's repeated text could not be merged into its memory",
                    memory_id=memory_id,
                    error=exc.message,
                )

    async def _existing_by_hash(self, items: list[Prepared]) -> dict[tuple[str, str, str], Row]:
        async with self._ingest.pool.connection() as conn:
            return await repository.active_roots_by_hash(
                conn, [(p.namespace, p.content_type, p.digest) for p in items]
            )

    async def _semantic(
        self,
        todo: dict[int, Prepared],
        by_item: dict[int, list[Any]],
        config: WriteConfig,
        results: list[ItemResult],
    ) -> None:
        # One nearest-neighbour call per group of items that share the filter (namespace,
        # type, tags); imports usually share all three.
        groups: dict[tuple[str, str, tuple[str, ...]], list[int]] = {}
        for i, p in todo.items():
            if p.semantic_dedup_eligible(config):
                groups.setdefault((p.namespace, p.content_type, tuple(p.given_tags)), []).append(i)
        matches: dict[int, tuple[str, float]] = {}
        for indices in groups.values():
            first = todo[indices[0]]
            try:
                found = await self._ingest.retrieval.nearest(
                    [by_item[i][0] for i in indices],
                    namespace=first.namespace,
                    limit=3,
                    min_similarity=config.similarity_threshold,
                    content_type=first.content_type,
                    tags=first.given_tags,
                    roots_only=True,
                )
            except ExoError as exc:
                log.warning("semantic dedup skipped for an import batch", error=exc.message)
                metrics.DEDUP_LOOKUP_FAILURES.inc()
                continue
            for i, hits in zip(indices, found, strict=True):
                if hits:
                    matches[i] = (hits[0].memory_id, round(hits[0].similarity, 4))
        if not matches:
            return
        async with self._ingest.pool.connection() as conn:
            rows = await memories.get_many(conn, [m for m, _ in matches.values()])
        of_memory: dict[str, list[int]] = {}
        for i, (memory_id, similarity) in matches.items():
            row = rows.get(memory_id)
            # The index may lag behind Postgres: trust only what is active now. A correction
            # of its match is imported as a memory of its own, as a single store does.
            if (
                row is not None
                and row["is_active"]
                and row["parent_id"] is None
                and not hides_a_correction((row, similarity), todo[i], config)
            ):
                of_memory.setdefault(memory_id, []).append(i)
        for memory_id, indices in of_memory.items():
            if config.skip_insert_on_match:
                await self._fold(rows[memory_id], indices, todo, by_item, config, results)
                continue
            for i in indices:
                similarity = matches[i][1]
                await self._single(
                    i, todo.pop(i), config, results, rows[memory_id], similarity, by_item[i]
                )

    async def _fold(
        self,
        existing: Row,
        indices: list[int],
        todo: dict[int, Prepared],
        by_item: dict[int, list[Any]],
        config: WriteConfig,
        results: list[ItemResult],
    ) -> None:
        """The near duplicates ``indices`` of one memory, folded into it together (one new
        version, see ``folds``); one that finds no room is stored on its own."""
        duplicates = [
            folds.Duplicate(todo.pop(i), by_item[i][0] if config.keep_variants else None)
            for i in indices
        ]
        try:
            existing, folded = await folds.fold_group(
                self._ingest.pool,
                existing,
                duplicates,
                model=self._ingest.embedder.fingerprint,
                dim=self._ingest.embedder.dimensions,
                max_variants=config.max_variants,
            )
        except ExoError as exc:
            for i in indices:
                results[i].fail(exc, exc.field)
            return
        for i, d, kept in zip(indices, duplicates, folded, strict=True):
            if kept:
                results[i].dedup_action, results[i].id = "skipped", existing["id"]
                continue
            try:
                # No room for its wording: it is stored on its own (already embedded).
                created = await self._ingest.create(d.prepared, by_item[i])
            except ExoError as exc:
                results[i].fail(exc, exc.field)
                continue
            results[i].dedup_action, results[i].id = created.dedup_action, created.memory.id
        log.info(
            "import folded near duplicates into an existing memory",
            memory_id=existing["id"],
            folded=sum(folded),
        )

    async def _single(
        self,
        i: int,
        p: Prepared,
        config: WriteConfig,
        results: list[ItemResult],
        existing: Row,
        similarity: float = 1.0,
        vectors: list[Vector] | None = None,
    ) -> None:
        """A duplicate (``vectors`` given for a semantic one): the skip path, or (skip mode off)
        the full single-store path."""
        try:
            if config.skip_insert_on_match:
                folded = await self._ingest.fold(
                    existing,
                    p,
                    similarity=similarity,
                    reason="import",
                    variant=vectors[0] if vectors and config.keep_variants else None,
                    max_variants=config.max_variants,
                )
                if folded is None:
                    # No room for its wording: it is stored on its own (already embedded).
                    assert vectors is not None  # only keeping a variant can find no room
                    folded = await self._ingest.create(p, vectors)
                outcome: StoreResult = folded
            else:
                outcome = await self._ingest.store_prepared(p, config)
        except ExoError as exc:
            results[i].fail(exc, exc.field)
            return
        results[i].dedup_action = outcome.dedup_action
        results[i].id = outcome.memory.id

    async def _insert(
        self,
        todo: dict[int, Prepared],
        by_item: dict[int, list[Any]],
        kept: dict[int, bytes],
        config: WriteConfig,
        results: list[ItemResult],
    ) -> None:
        fingerprint = self._ingest.embedder.fingerprint
        dim = self._ingest.embedder.dimensions
        ids = iter(new_ids(len(todo)))  # in item order: the rows share one created_at
        rows_by_item = {
            i: build_rows(p, by_item[i], model=fingerprint, dim=dim, memory_id=next(ids))
            for i, p in todo.items()
        }
        all_rows = [r for rows in rows_by_item.values() for r in rows]
        evts = [
            (
                events.SUBJECTS["stored"],
                events.payload(
                    rows[0].id, 1, rows[0].namespace, "stored", [r.id for r in rows[1:]]
                ),
                events.headers(),
            )
            for rows in rows_by_item.values()
        ]
        # The token vectors go in with their memories (see store/tokens.py).
        token_rows = [(rows_by_item[i][0].id, kept[i]) for i in rows_by_item if i in kept]
        try:
            async with repository.transaction(self._ingest.pool) as conn:
                await bulk.insert_memories(conn, all_rows)
                await bulk.enqueue_events(conn, evts)
                await token_repository.insert_many(
                    conn, token_rows, model=fingerprint, dimensions=dim
                )
        except UniqueClash as exc:
            if not exc.same_content:
                # Not a duplicate text (an id clash would be a bug): fail the batch, whose
                # transaction wrote nothing, rather than dedup its items against each other.
                raise
            # A concurrent writer stored one of these meanwhile: fall back to one at a time,
            # where each store resolves its own race.
            log.info("bulk insert raced with another writer; storing one by one")
            for i, p in todo.items():
                try:
                    outcome = await self._ingest.store_prepared(p, config)
                except ExoError as exc:
                    results[i].fail(exc, exc.field)
                    continue
                results[i].dedup_action, results[i].id = outcome.dedup_action, outcome.memory.id
            return
        for i, rows in rows_by_item.items():
            results[i].dedup_action, results[i].id = "created", rows[0].id
