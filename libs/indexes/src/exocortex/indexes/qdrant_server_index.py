"""Vector index on a Qdrant server collection (or qdrant-client's local mode for `:memory:`).

Writes wait until the server has applied them, so a write that returned is searchable and in the
server's write-ahead log; `flush()` therefore has nothing left to do.

Like the embedded engine, the collection keeps an 8-bit copy of its vectors in RAM for the graph
walk and rescores the best candidates with the full vectors, so the order returned stays exact
(see docs/indexes.md). A collection made without it gets it on first use; the server then
rebuilds its segments in the background.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from qdrant_client import AsyncQdrantClient
from qdrant_client import models as qm

from exocortex.indexes.base import IndexDocument, IndexFilter, IndexHit, Vector
from exocortex.indexes.qdrant_common import (
    HELD_PAGE,
    HIT_FIELDS,
    PAYLOAD_INDEXES,
    VERSION_FIELDS,
    Condition,
    FilterPlan,
    HasIds,
    Match,
    MatchAny,
    Range,
    as_floats,
    payload_of,
    plan_filter,
    point_id,
    split_upsert,
    versions_from,
)

QUANTIZATION = qm.ScalarQuantization(
    scalar=qm.ScalarQuantizationConfig(type=qm.ScalarType.INT8, always_ram=True)
)
SEARCH_PARAMS = qm.SearchParams(
    quantization=qm.QuantizationSearchParams(rescore=True, oversampling=1.0)
)

_SCHEMA_TYPES: dict[str, qm.PayloadSchemaType] = {
    "keyword": qm.PayloadSchemaType.KEYWORD,
    "integer": qm.PayloadSchemaType.INTEGER,
    "float": qm.PayloadSchemaType.FLOAT,
}


def _condition(cond: Condition) -> qm.Condition:
    if isinstance(cond, Match):
        return qm.FieldCondition(key=cond.key, match=qm.MatchValue(value=cond.value))
    if isinstance(cond, MatchAny):
        return qm.FieldCondition(key=cond.key, match=qm.MatchAny(any=list(cond.values)))
    if isinstance(cond, Range):
        return qm.FieldCondition(key=cond.key, range=qm.Range(gte=cond.gte, lt=cond.lt))
    assert isinstance(cond, HasIds)
    return qm.HasIdCondition(has_id=[str(i) for i in cond.ids])


def client_filter(plan: FilterPlan) -> qm.Filter | None:
    if plan.empty:
        return None
    return qm.Filter(
        must=[_condition(c) for c in plan.must] or None,
        must_not=[_condition(c) for c in plan.must_not] or None,
    )


class QdrantServerVectorIndex:
    """`VectorIndex` over one collection of a Qdrant server (cosine distance)."""

    name = "qdrant"

    def __init__(
        self,
        url: str | None,
        api_key: str | None,
        collection: str,
        dim: int,
        location: str | None = None,
    ) -> None:
        # Local mode keeps points in process and ignores payload indexes and quantization (it
        # warns about the indexes).
        self._local = location is not None
        if location is not None:
            self._client = AsyncQdrantClient(location=location)
        else:
            self._client = AsyncQdrantClient(url=url, api_key=api_key)
        self._collection = collection
        self._dim = dim
        self._ready = False
        self._ready_lock = asyncio.Lock()

    async def ensure_collection(self) -> None:
        """Create the collection and its payload indexes when missing (idempotent)."""
        if self._ready:
            return
        async with self._ready_lock:
            if self._ready:
                return
            if not await self._client.collection_exists(self._collection):
                await self._client.create_collection(
                    self._collection,
                    vectors_config=qm.VectorParams(size=self._dim, distance=qm.Distance.COSINE),
                    quantization_config=None if self._local else QUANTIZATION,
                )
            elif not self._local:
                info = await self._client.get_collection(self._collection)
                if info.config.quantization_config is None:
                    await self._client.update_collection(
                        self._collection, quantization_config=QUANTIZATION
                    )
            for field_name, kind in () if self._local else PAYLOAD_INDEXES:
                # Creating an index that exists is a no-op on the server.
                await self._client.create_payload_index(
                    self._collection, field_name, field_schema=_SCHEMA_TYPES[kind], wait=True
                )
            self._ready = True

    async def upsert(self, docs: Sequence[IndexDocument]) -> None:
        await self.ensure_collection()
        keep, drop = split_upsert(docs)
        if keep:
            points = [
                qm.PointStruct(
                    id=str(point_id(d.memory_id)), vector=as_floats(d.vector), payload=payload_of(d)
                )
                for d in keep
            ]
            await self._client.upsert(self._collection, points=points, wait=True)
        if drop:
            await self.delete(drop)

    async def delete(self, memory_ids: Sequence[str]) -> None:
        if not memory_ids:
            return
        await self.ensure_collection()
        selector = qm.PointIdsList(points=[str(point_id(i)) for i in memory_ids])
        await self._client.delete(self._collection, points_selector=selector, wait=True)

    async def search(
        self, vector: Vector, limit: int, flt: IndexFilter, *, write_side: bool = False
    ) -> list[IndexHit]:
        if limit <= 0:
            return []
        await self.ensure_collection()
        response = await self._client.query_points(
            self._collection,
            query=as_floats(vector),
            query_filter=client_filter(plan_filter(flt)),
            limit=limit,
            with_payload=HIT_FIELDS,
            with_vectors=False,
            # Local mode searches exactly and warns about search parameters.
            search_params=None if self._local else SEARCH_PARAMS,
        )
        hits: list[IndexHit] = []
        for p in response.points:
            payload: dict[str, Any] = p.payload or {}
            hits.append(
                IndexHit(
                    memory_id=str(payload["memory_id"]),
                    score=float(p.score),
                    parent_id=payload.get("parent_id"),
                )
            )
        return hits

    async def versions(self, memory_ids: Sequence[str]) -> dict[str, int]:
        if not memory_ids:
            return {}
        await self.ensure_collection()
        records = await self._client.retrieve(
            self._collection,
            ids=[str(point_id(i)) for i in memory_ids],
            with_payload=VERSION_FIELDS,
            with_vectors=False,
        )
        return versions_from(r.payload for r in records)

    async def held(self) -> dict[str, int]:
        await self.ensure_collection()
        out: dict[str, int] = {}
        offset: Any = None
        while True:
            records, offset = await self._client.scroll(
                self._collection,
                offset=offset,
                limit=HELD_PAGE,
                with_payload=VERSION_FIELDS,
                with_vectors=False,
            )
            out.update(versions_from(r.payload for r in records))
            if offset is None:
                return out

    async def count(self) -> int:
        await self.ensure_collection()
        result = await self._client.count(self._collection, exact=True)
        return result.count

    async def flush(self) -> None:
        """Nothing to do: every write already waited for the server to apply it."""

    async def close(self) -> None:
        await self._client.close()
