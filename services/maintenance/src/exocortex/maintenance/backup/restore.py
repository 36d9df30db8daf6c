"""Restores a backup exactly: every row with its id, version and timestamps, section by section
in export order, one transaction per batch. Idempotent: a row already there is skipped (or
reported as a conflict when it differs), so restoring the same backup twice changes nothing.
A dry run does the same work inside transactions that are rolled back, and embeds nothing.

A memory that had an embedding gets the one the export carries when the current model made it
(same fingerprint), else it is embedded again by the embedding service (one call per batch),
before its stored event is written, so the indexes pick it up as after any store.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any, Literal

from exocortex.core.backup_format.document import lines
from exocortex.core.clients.embedding import EmbeddingClient
from exocortex.core.domain.context import context_text
from exocortex.core.domain.vectors import to_bytes
from exocortex.core.repositories import context as contexts
from exocortex.maintenance.backup import restore_repository as sql
from exocortex.maintenance.backup.events import stored_event
from exocortex.maintenance.backup.obsidian_repository import Pool
from exocortex.maintenance.backup.validation import (
    CONTENT_MAX_DEFAULT,
    Model,
    check_items,
    restorable_settings,
)

BATCH = 500
MAX_ITEM_RESULTS = 100
Outcome = Literal["created", "skipped", "conflict", "updated"]


@dataclass
class SectionResult:
    created: int = 0
    skipped: int = 0
    conflict: int = 0
    updated: int = 0

    def add(self, outcome: Outcome, n: int = 1) -> None:
        setattr(self, outcome, getattr(self, outcome) + n)


@dataclass(frozen=True, slots=True)
class ItemResult:
    section: str
    key: str
    outcome: Outcome
    reason: str


@dataclass
class RestoreReport:
    dry_run: bool
    sections: dict[str, SectionResult] = field(default_factory=dict)
    # Items not created (conflicts first), at most MAX_ITEM_RESULTS.
    items: list[ItemResult] = field(default_factory=list)

    def merge(self, other: RestoreReport) -> None:
        for name, counts in other.sections.items():
            mine = self.sections.setdefault(name, SectionResult())
            for outcome in ("created", "skipped", "conflict", "updated"):
                mine.add(outcome, getattr(counts, outcome))
        room = MAX_ITEM_RESULTS - len(self.items)
        self.items.extend(other.items[: max(room, 0)])

    def note(self, item: ItemResult) -> None:
        self.sections.setdefault(item.section, SectionResult()).add(item.outcome)
        if item.outcome != "created" and len(self.items) < MAX_ITEM_RESULTS:
            self.items.append(item)


def items_of(chunks: Iterable[bytes]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(section, item) from a decrypted backup document, in file order."""
    for raw in lines(chunks):
        value = json.loads(raw)
        if "section" in value and "item" in value:
            yield value["section"], value["item"]


def item_key(section: str, item: dict[str, Any]) -> str:
    if section == "memory_links":
        return f"{item['source_id']}→{item['target_id']}"
    if section == "memory_entities":
        return f"{item['memory_id']}→{item['entity_id']}"
    if section == "goal_links":
        return f"{item['goal_id']}→{item['memory_id']}"
    return str(item.get("id", ""))


# What a memory item needs before it reaches the database (its other fields are checked by the
# columns they go into).
_MEMORY_SHAPE: dict[str, tuple[type, str]] = {
    "id": (str, "a string"),
    "namespace": (str, "a string"),
    "content": (str, "a string"),
    "version": (int, "a whole number"),
}


def malformed(section: str, item: dict[str, Any]) -> str | None:
    """Why an item cannot be restored as it is, or None: a missing key or a key of the wrong
    type (an edited or damaged export document), reported for that item alone."""
    if section == "settings":
        return None  # one mapping of keys to values, checked by the settings upsert
    try:
        key = item_key(section, item)
    except (KeyError, TypeError):
        return "its key fields are missing"
    if not key:
        return "it has no id"
    if section == "memories":
        for name, (kind, label) in _MEMORY_SHAPE.items():
            value = item.get(name)
            if not isinstance(value, kind) or isinstance(value, bool):
                return f"{name} is missing or not {label}"
    return None


def _batches(
    items: Iterable[tuple[str, dict[str, Any]]],
) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    for section, group in groupby(items, key=lambda pair: pair[0]):
        batch: list[dict[str, Any]] = []
        for _, item in group:
            batch.append(item)
            if len(batch) == BATCH:
                yield section, batch
                batch = []
        if batch:
            yield section, batch


class _Rollback(Exception):
    """Ends a dry run's transaction without keeping its writes."""


class Restorer:
    def __init__(
        self,
        pool: Pool,
        embedding: EmbeddingClient,
        *,
        embed: bool = True,
        max_content_chars: int = CONTENT_MAX_DEFAULT,
    ) -> None:
        """``embed=False`` restores memories without their embeddings (a deep verify's scratch
        database is searched by nothing)."""
        self._pool = pool
        self._embedding = embedding
        self._embed = embed
        self._max_content_chars = max_content_chars

    async def check(self, items: Iterable[tuple[str, Any]]) -> dict[str, int]:
        """Every item held to the rules of its live write (see validation.py), before anything
        is written: the first bad one is a 400 naming ``section.index.field``. Runs off the
        event loop (``items`` may decrypt a backup as it goes)."""
        model = None
        if self._embed:
            if not self._embedding.fingerprint:
                await self._embedding.model_info()
            model = Model(self._embedding.fingerprint, self._embedding.dimensions)
        return await asyncio.to_thread(
            check_items, items, model=model, max_content_chars=self._max_content_chars
        )

    async def _embedded(self, conn: sql.Conn, batch: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The batch with each new row's embedding (``vector``, ``embedding_dim``, and the
        fingerprint of the model that made it); rows already present are left as they are."""
        wanted = [m for m in batch if m.get("embedding_model")]
        new = await sql.absent(conn, [m["id"] for m in wanted]) if wanted else set()
        todo = [m for m in wanted if m["id"] in new]
        if not todo:
            return batch
        ids, vectors, model = await self._vectors(todo)
        by_id = dict(zip(ids, vectors, strict=True))
        out = []
        for m in batch:
            vector = by_id.get(m["id"])
            if vector is not None:
                m = {
                    **m,
                    "vector": "\\x" + vector.hex(),
                    "embedding_dim": len(vector) // 4,
                    "embedding_model": model,
                }
            out.append(m)
        return out

    async def _vectors(self, rows: list[dict[str, Any]]) -> tuple[list[str], list[bytes], str]:
        """Each row's embedding: the one carried by the export (base64, float32) when it was
        made by the model running now (same fingerprint), else computed again."""
        if not self._embedding.fingerprint:
            await self._embedding.model_info()
        current = self._embedding.fingerprint
        reused = {
            m["id"]: base64.b64decode(m["embedding"])
            for m in rows
            if m.get("embedding") and m.get("embedding_model") == current
        }
        todo = [m for m in rows if m["id"] not in reused]
        if todo:
            fresh = await self._embedding.embed(
                [m["content"] for m in todo], deadline_seconds=300.0, bulk=True
            )
            reused.update((m["id"], to_bytes(v)) for m, v in zip(todo, fresh, strict=True))
        ids = [m["id"] for m in rows]
        return ids, [reused[i] for i in ids], self._embedding.fingerprint or current

    async def restore(
        self, items: Iterable[tuple[str, dict[str, Any]]], *, dry_run: bool
    ) -> RestoreReport:
        report = RestoreReport(dry_run=dry_run)
        lineage: list[dict[str, Any]] = []
        restored: list[str] = []
        for section, batch in _batches(self._well_formed(items, report)):
            try:
                await self._batch(section, batch, report, lineage, dry_run, restored)
            except sql.RowRejected:
                # One bad item must not fail its neighbours: each is tried alone.
                for item in batch:
                    try:
                        await self._batch(section, [item], report, lineage, dry_run, restored)
                    except sql.RowRejected as err:
                        reason = f"rejected: {str(err).splitlines()[0][:200]}"
                        key = item_key(section, item)
                        report.note(ItemResult(section, key, "conflict", reason))
        if lineage and not dry_run:
            async with self._pool.connection() as conn, conn.transaction():
                for start in range(0, len(lineage), BATCH):
                    await sql.set_lineage(conn, lineage[start : start + BATCH])
        if restored and self._embed and not dry_run:
            await self._contexts(restored)
        return report

    async def _contexts(self, ids: list[str]) -> None:
        """Contextual vectors for the restored memories, made again as enrichment makes them
        (the export does not carry them; their neighbours are all in place only now)."""
        async with self._pool.connection() as conn:
            made, gap = await contexts.settings(conn)
            if not made:
                return
            rows = await sql.context_candidates(conn, ids)
            texts: dict[str, str] = {}
            for memory_id, content, created_at in rows:
                previous = await contexts.previous_content(conn, memory_id, created_at, gap)
                text = context_text(previous, content) if previous else None
                if text is not None:
                    texts[memory_id] = text
        items = list(texts.items())
        for start in range(0, len(items), BATCH):
            part = items[start : start + BATCH]
            vectors = await self._embedding.embed(
                [t for _, t in part], deadline_seconds=300.0, bulk=True
            )
            async with self._pool.connection() as conn, conn.transaction():
                for (memory_id, _), vector in zip(part, vectors, strict=True):
                    await contexts.save(conn, memory_id, to_bytes(vector))

    @staticmethod
    def _well_formed(
        items: Iterable[tuple[str, dict[str, Any]]], report: RestoreReport
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        for section, item in items:
            reason = malformed(section, item)
            if reason is None:
                yield section, item
                continue
            key = str(item.get("id") or "") if isinstance(item, dict) else ""
            report.note(ItemResult(section, key, "conflict", f"rejected: {reason}"))

    async def _batch(
        self,
        section: str,
        batch: list[dict[str, Any]],
        report: RestoreReport,
        lineage: list[dict[str, Any]],
        dry_run: bool,
        restored: list[str],
    ) -> None:
        """One batch in one transaction (rolled back on a dry run). What it reports is kept only
        when the transaction ends well, so a batch retried item by item is not counted twice."""
        done = RestoreReport(dry_run=dry_run)
        links: list[dict[str, Any]] = []
        created_ids: list[str] = []
        try:
            async with self._pool.connection() as conn, conn.transaction():
                if section == "memories":
                    created_ids = await self._memories(conn, batch, done, links, dry_run)
                elif section == "settings":
                    for settings in batch:
                        # Through the settings schema; ai.* and unknown keys are reported.
                        values, skipped = restorable_settings(settings)
                        for skip in skipped:
                            done.note(ItemResult(section, skip.key, "skipped", skip.reason))
                        outcomes = await sql.upsert_settings(conn, values) if values else {}
                        for key, outcome in outcomes.items():
                            done.note(ItemResult(section, key, outcome, ""))  # type: ignore[arg-type]
                elif section in sql.SECTION_SQL:
                    created = await sql.insert_section(conn, section, batch)
                    for item in batch:
                        key = item_key(section, item)
                        if key in created:
                            done.note(ItemResult(section, key, "created", ""))
                        else:
                            reason = "already present, or a row it refers to is missing"
                            done.note(ItemResult(section, key, "skipped", reason))
                if dry_run:
                    raise _Rollback
        except _Rollback:
            pass
        report.merge(done)
        lineage.extend(links)
        if not dry_run:
            restored.extend(created_ids)

    async def _memories(
        self,
        conn: sql.Conn,
        batch: list[dict[str, Any]],
        report: RestoreReport,
        lineage: list[dict[str, Any]],
        dry_run: bool,
    ) -> list[str]:
        """Restore a batch of memories; returns the ids it created."""
        if self._embed and not dry_run:
            batch = await self._embedded(conn, batch)
        created = await sql.insert_memories(conn, batch, roots=True)
        created |= await sql.insert_memories(conn, batch, roots=False)
        missing = [m["id"] for m in batch if m["id"] not in created]
        # Already here with a summary or newer version to point at: filled if still empty.
        present: list[dict[str, Any]] = []
        existing = await sql.existing_memories(conn, missing) if missing else {}
        for m in batch:
            if m["id"] in created:
                report.note(ItemResult("memories", m["id"], "created", ""))
                continue
            row = existing.get(m["id"])
            if row is not None and row["version"] == m["version"]:
                report.note(ItemResult("memories", m["id"], "skipped", "already present"))
                if m.get("consolidated_into") or m.get("superseded_by"):
                    present.append(m)
            elif row is not None:
                reason = f"present at version {row['version']}, the backup has {m['version']}"
                report.note(ItemResult("memories", m["id"], "conflict", reason))
            else:
                reason = (
                    "its parent is missing"
                    if m.get("parent_id")
                    else "an active memory with the same content exists under another id"
                )
                report.note(ItemResult("memories", m["id"], "conflict", reason))
        lineage.extend(
            {"id": m["id"], "ci": m.get("consolidated_into"), "sb": m.get("superseded_by")}
            for m in present
        )
        if not created:
            return []
        rows = [m for m in batch if m["id"] in created]
        await sql.add_tags_and_usage(conn, rows, created)
        lineage.extend(
            {"id": m["id"], "ci": m.get("consolidated_into"), "sb": m.get("superseded_by")}
            for m in rows
            if m.get("consolidated_into") or m.get("superseded_by")
        )
        if dry_run:
            return []
        # A chunk restored in a later batch (or request) than its memory is indexed with it:
        # its memory is announced again, and the projector reads a memory with its chunks.
        parents = {m["parent_id"] for m in rows if m.get("parent_id")}
        await sql.announce(conn, sorted(created | parents), stored_event)
        return sorted(created)
