"""Near duplicates folded into the memory they duplicate (the skip path of dedup), one or many
at a time.

A fold keeps the existing memory: the duplicate's new tags and metadata are merged into it, its
importance only rises, and its wording is kept as a variant (see ``variants``). The memory then
moves to a new version with one ``updated`` event, so its projection (variants and chunks
included) is rebuilt. An import often holds several near duplicates of one memory; folded one at
a time, each would rebuild that projection again (a memory with n variants rewritten n times
over). ``fold_group`` folds them in one transaction with one new version and one event, leaving
the memory as folding them one after the other would.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from exocortex.core.db.pool import DictConnection, Pool
from exocortex.core.domain.vectors import Vector
from exocortex.core.logging import get_logger
from exocortex.core.repositories import memories
from exocortex.ingest import events, metrics
from exocortex.ingest.store import repository, variants
from exocortex.ingest.store.model import Row
from exocortex.ingest.store.prepare import Prepared

log = get_logger(__name__)


@dataclass(frozen=True)
class Duplicate:
    """A near duplicate to fold: its prepared text and, to keep its wording as a variant, its
    vector."""

    prepared: Prepared
    variant: Vector | None = None


@dataclass
class Merge:
    """What a group of folds changes in the memory, gathered in order."""

    tags: list[str]
    metadata: dict[str, Any]
    importance: float
    new_tags: list[str] = field(default_factory=list)
    new_metadata: dict[str, Any] = field(default_factory=dict)
    raised: bool = False
    variant_ids: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, existing: Row) -> Merge:
        return cls(
            list(existing["tags"]), dict(existing["metadata"]), float(existing["importance"])
        )

    def add(self, p: Prepared) -> None:
        for tag in p.tags:
            if tag not in self.tags:
                self.tags.append(tag)
                self.new_tags.append(tag)
        changed = {k: v for k, v in p.metadata.items() if self.metadata.get(k) != v}
        self.metadata.update(changed)
        self.new_metadata.update(changed)
        if p.importance > self.importance:
            self.importance = p.importance
            self.raised = True

    @property
    def changes_anything(self) -> bool:
        return bool(self.new_tags or self.new_metadata or self.raised or self.variant_ids)


async def fold_group(
    pool: Pool,
    existing: Row,
    duplicates: Sequence[Duplicate],
    *,
    model: str,
    dim: int,
    max_variants: int,
) -> tuple[Row, list[bool]]:
    """Fold ``duplicates`` into ``existing`` in one transaction: the memory as it then is, and
    for each duplicate whether it was folded. One that was not found no room for its wording
    (the variants are full, or the memory was archived since the match): nothing of it was
    merged, and the caller must store it as a memory of its own."""
    merge = Merge.of(existing)
    if all(d.variant is None for d in duplicates):
        # No wording to keep, so no variant lock: only what the duplicates add needs writing,
        # and nothing at all (no transaction) when they add nothing.
        for d in duplicates:
            merge.add(d.prepared)
        if merge.changes_anything:
            async with repository.transaction(pool) as conn:
                existing = await merge_into_existing(conn, existing, merge)
        return existing, [True] * len(duplicates)
    folded = [False] * len(duplicates)
    async with repository.transaction(pool) as conn:
        for n, d in enumerate(duplicates):
            if d.variant is not None:
                kept, variant_id = await variants.add_variant(
                    conn,
                    existing,
                    d.prepared,
                    d.variant,
                    tags=merge.tags + [t for t in d.prepared.tags if t not in merge.tags],
                    model=model,
                    dim=dim,
                    limit=max_variants,
                )
                if kept is variants.Kept.NO_ROOM:
                    log.info(
                        "near duplicate stored on its own: no room among the variants",
                        similar_to=existing["id"],
                    )
                    metrics.DEDUP_OVERFLOWS.inc()
                    continue
                if variant_id is not None:
                    merge.variant_ids.append(variant_id)
            merge.add(d.prepared)
            folded[n] = True
        if merge.changes_anything:
            existing = await merge_into_existing(conn, existing, merge)
    return existing, folded


async def merge_into_existing(conn: DictConnection, existing: Row, merge: Merge) -> Row:
    """Write ``merge`` into the memory (the caller's transaction): a new version and one
    ``updated`` event naming the variants added."""
    if merge.new_tags:
        await repository.add_family_tags(conn, existing["id"], merge.new_tags)
    await repository.raise_and_merge_metadata(
        conn, existing["id"], merge.importance, merge.new_metadata
    )
    row = await memories.get(conn, existing["id"])
    assert row is not None
    await events.emit(conn, row, "updated", merge.variant_ids)
    return row
