"""What both Qdrant adapters (embedded Edge shard and server) store and how they filter.

The two engines speak different Python APIs, so the filter is first built here as a small
engine-neutral plan (`FilterPlan`); each adapter only translates the plan's four condition kinds
into its own classes. Payload layout, id mapping and filter semantics therefore live in one place.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from ulid import ULID

from exocortex.indexes.base import IndexDocument, IndexFilter

# Ids that are not ULIDs (never produced by the product, but possible in imports) still get a
# stable point id: a name-based UUID under a fixed namespace.
_FALLBACK_NAMESPACE = uuid.UUID("6f1c1c52-1b0e-4d56-9a43-7d2c2f1e9a10")

PayloadKind = Literal["keyword", "integer", "float"]

# Payload fields that get a payload index (filter fields, plus parent_id for exclusion of chunks).
# is_metadata is stored as 0/1 integer rather than bool: matching a bool payload against False is
# unreliable in the embedded engine and negated bool conditions take a slow path there.
PAYLOAD_INDEXES: tuple[tuple[str, PayloadKind], ...] = (
    ("namespace", "keyword"),
    ("tags", "keyword"),
    ("content_type", "keyword"),
    ("source", "keyword"),
    ("parent_id", "keyword"),
    ("created_at", "float"),
    ("importance", "float"),
    ("is_metadata", "integer"),
)

# Only these payload keys are read back on search; the rest stays on disk.
HIT_FIELDS: list[str] = ["memory_id", "parent_id"]
VERSION_FIELDS: list[str] = ["memory_id", "version"]


def point_id(memory_id: str) -> uuid.UUID:
    """Deterministic point id: a ULID's 128 bits as a UUID, so the mapping is reversible."""
    try:
        return ULID.from_str(memory_id).to_uuid()
    except ValueError:
        return uuid.uuid5(_FALLBACK_NAMESPACE, memory_id)


def epoch_seconds(moment: datetime) -> float:
    """Timestamps are compared as float epoch seconds; naive datetimes are taken as UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def payload_of(doc: IndexDocument) -> dict[str, Any]:
    return {
        "memory_id": doc.memory_id,
        "version": doc.version,
        "namespace": doc.namespace,
        "content_type": doc.content_type,
        "source": doc.source,
        "tags": list(doc.tags),
        "created_at": epoch_seconds(doc.created_at),
        "importance": float(doc.importance),
        "is_metadata": int(doc.is_metadata),
        "parent_id": doc.parent_id,
    }


def as_floats(vector: Any) -> list[float]:
    values: list[float] = vector.astype("float32", copy=False).tolist()
    return values


@dataclass(frozen=True, slots=True)
class Match:
    key: str
    value: str | int


@dataclass(frozen=True, slots=True)
class MatchAny:
    key: str
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Range:
    """Half-open range: `gte <= value < lt` (either side may be open)."""

    key: str
    gte: float | None = None
    lt: float | None = None


@dataclass(frozen=True, slots=True)
class HasIds:
    ids: frozenset[uuid.UUID]


Condition = Match | MatchAny | Range | HasIds


@dataclass(frozen=True, slots=True)
class FilterPlan:
    must: tuple[Condition, ...] = field(default=())
    must_not: tuple[Condition, ...] = field(default=())

    @property
    def empty(self) -> bool:
        return not self.must and not self.must_not


def plan_filter(flt: IndexFilter) -> FilterPlan:
    """IndexFilter → conditions. `created_after` is inclusive, `created_before` exclusive."""
    must: list[Condition] = []
    must_not: list[Condition] = []
    if flt.namespace is not None:
        must.append(Match("namespace", flt.namespace))
    if flt.namespaces_any:
        must.append(MatchAny("namespace", tuple(flt.namespaces_any)))
    if flt.tags_any:
        must.append(MatchAny("tags", tuple(flt.tags_any)))
    if flt.content_type is not None:
        must.append(Match("content_type", flt.content_type))
    if flt.source is not None:
        must.append(Match("source", flt.source))
    if flt.created_after is not None or flt.created_before is not None:
        must.append(
            Range(
                "created_at",
                gte=None if flt.created_after is None else epoch_seconds(flt.created_after),
                lt=None if flt.created_before is None else epoch_seconds(flt.created_before),
            )
        )
    if flt.min_importance is not None:
        must.append(Range("importance", gte=float(flt.min_importance)))
    if flt.exclude_metadata:
        must.append(Match("is_metadata", 0))
    if flt.exclude_ids:
        # Excluding a memory excludes its chunks too, which carry it as parent_id.
        must_not.append(HasIds(frozenset(point_id(i) for i in flt.exclude_ids)))
        must_not.append(MatchAny("parent_id", tuple(flt.exclude_ids)))
    return FilterPlan(tuple(must), tuple(must_not))


# Points read per page when listing everything an index holds (payload of two fields each).
HELD_PAGE = 2_000


def versions_from(records: Iterable[Mapping[str, Any] | None]) -> dict[str, int]:
    out: dict[str, int] = {}
    for payload in records:
        if payload and "memory_id" in payload and "version" in payload:
            out[str(payload["memory_id"])] = int(payload["version"])
    return out


def split_upsert(docs: Sequence[IndexDocument]) -> tuple[list[IndexDocument], list[str]]:
    """Documents with a vector are written; those without one are removed from the index.

    When a batch holds the same id twice the later document wins, as it would applied one by one.
    """
    last = {d.memory_id: d for d in docs}
    keep = [d for d in last.values() if d.vector is not None]
    drop = [d.memory_id for d in last.values() if d.vector is None]
    return keep, drop
