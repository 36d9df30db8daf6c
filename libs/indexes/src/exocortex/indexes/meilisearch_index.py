"""Keyword index on a Meilisearch server.

Meilisearch applies writes asynchronously as tasks; the adapter remembers the tasks it enqueued
and `flush()` waits for them, which gives read-your-writes to the caller that flushed. Filters are
sent as Meilisearch filter expressions with every value quoted, and the user's text is reduced to
plain words first (quotes and a leading `-` mean phrase and negation to Meilisearch).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from meilisearch_python_sdk import AsyncClient
from meilisearch_python_sdk.models.settings import MeilisearchSettings

from exocortex.indexes._text import ENGLISH_STOPWORDS, query_terms
from exocortex.indexes.base import DEFAULT_KEYWORDS_BOOST, IndexDocument, IndexFilter, IndexHit
from exocortex.indexes.qdrant_common import epoch_seconds

_SETTINGS = MeilisearchSettings(
    searchable_attributes=["keywords", "content"],
    filterable_attributes=[
        "namespace",
        "tags",
        "content_type",
        "source",
        "created_at",
        "is_metadata",
        "importance",
        "memory_id",
        "parent_id",
    ],
    sortable_attributes=["created_at"],
    displayed_attributes=["memory_id", "parent_id", "version"],
    # Same stop list as the query side, so both keyword engines treat "the" alike.
    stop_words=sorted(ENGLISH_STOPWORDS),
)
_TASK_TIMEOUT_MS = 60_000
# Documents read per page when listing everything the index holds.
_HELD_PAGE = 1_000


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _in(field_name: str, values: Sequence[str]) -> str:
    return f"{field_name} IN [{', '.join(_quote(v) for v in values)}]"


def meili_filter(flt: IndexFilter) -> str | None:
    """IndexFilter → filter expression; `created_after` inclusive, `created_before` exclusive."""
    parts: list[str] = []
    if flt.namespace is not None:
        parts.append(f"namespace = {_quote(flt.namespace)}")
    if flt.namespaces_any:
        parts.append(_in("namespace", flt.namespaces_any))
    if flt.tags_any:
        parts.append(_in("tags", flt.tags_any))
    if flt.content_type is not None:
        parts.append(f"content_type = {_quote(flt.content_type)}")
    if flt.source is not None:
        parts.append(f"source = {_quote(flt.source)}")
    if flt.created_after is not None:
        parts.append(f"created_at >= {epoch_seconds(flt.created_after)!r}")
    if flt.created_before is not None:
        parts.append(f"created_at < {epoch_seconds(flt.created_before)!r}")
    if flt.min_importance is not None:
        parts.append(f"importance >= {float(flt.min_importance)!r}")
    if flt.exclude_metadata:
        parts.append("is_metadata = false")
    if flt.exclude_ids:
        parts.append(f"NOT {_in('memory_id', flt.exclude_ids)}")
        parts.append(f"NOT {_in('parent_id', flt.exclude_ids)}")
    return " AND ".join(parts) if parts else None


def _document(doc: IndexDocument) -> dict[str, Any]:
    return {
        "memory_id": doc.memory_id,
        "version": doc.version,
        "namespace": doc.namespace,
        "content_type": doc.content_type,
        "source": doc.source,
        "tags": list(doc.tags),
        "created_at": epoch_seconds(doc.created_at),
        "importance": float(doc.importance),
        "is_metadata": doc.is_metadata,
        "parent_id": doc.parent_id,
        "content": doc.content,
        "keywords": doc.keywords,
    }


class MeilisearchKeywordIndex:
    """`KeywordIndex` over one Meilisearch index (primary key `memory_id`)."""

    name = "meilisearch"

    def __init__(self, url: str, api_key: str | None, index_uid: str) -> None:
        self._client = AsyncClient(url, api_key)
        self._uid = index_uid
        self._index = self._client.index(index_uid)
        self._pending: list[int] = []
        self._ready = False
        self._ready_lock = asyncio.Lock()

    async def ensure_index(self) -> None:
        """Create the index and apply its settings when missing or changed (idempotent)."""
        if self._ready:
            return
        async with self._ready_lock:
            if self._ready:
                return
            self._index = await self._client.get_or_create_index(self._uid, "memory_id")
            task = await self._index.update_settings(_SETTINGS)
            await self._wait([task.task_uid])
            self._ready = True

    async def _wait(self, uids: list[int]) -> None:
        for uid in uids:
            await self._client.wait_for_task(
                uid, timeout_in_ms=_TASK_TIMEOUT_MS, raise_for_status=True
            )

    async def upsert(self, docs: Sequence[IndexDocument]) -> None:
        if not docs:
            return
        await self.ensure_index()
        # Later documents win when an id repeats, as if applied one by one.
        last = {d.memory_id: _document(d) for d in docs}
        task = await self._index.add_documents(list(last.values()), "memory_id")
        self._pending.append(task.task_uid)

    async def delete(self, memory_ids: Sequence[str]) -> None:
        if not memory_ids:
            return
        await self.ensure_index()
        task = await self._index.delete_documents(list(memory_ids))
        self._pending.append(task.task_uid)

    async def search(
        self,
        query: str,
        limit: int,
        flt: IndexFilter,
        *,
        keywords_boost: float = DEFAULT_KEYWORDS_BOOST,
    ) -> list[IndexHit]:
        # Meilisearch weighs attributes by their fixed order, not per query: keywords_boost
        # is not applied here (see KeywordIndex.search).
        terms = query_terms(query)
        # An empty query is a "show everything" search in Meilisearch; here it finds nothing.
        if limit <= 0 or not terms:
            return []
        await self.ensure_index()
        result = await self._index.search(
            " ".join(terms),
            limit=limit,
            filter=meili_filter(flt),
            attributes_to_retrieve=["memory_id", "parent_id"],
            show_ranking_score=True,
        )
        return [
            IndexHit(
                memory_id=str(h["memory_id"]),
                score=float(h.get("_rankingScore", 0.0)),
                parent_id=h.get("parent_id"),
            )
            for h in result.hits
        ]

    async def versions(self, memory_ids: Sequence[str]) -> dict[str, int]:
        if not memory_ids:
            return {}
        await self.ensure_index()
        ids = list(dict.fromkeys(memory_ids))
        info = await self._index.get_documents(
            ids=ids, limit=len(ids), fields=["memory_id", "version"]
        )
        return {str(d["memory_id"]): int(d["version"]) for d in info.results}

    async def held(self) -> dict[str, int]:
        await self.ensure_index()
        out: dict[str, int] = {}
        offset = 0
        while True:
            page = await self._index.get_documents(
                offset=offset, limit=_HELD_PAGE, fields=["memory_id", "version"]
            )
            out.update({str(d["memory_id"]): int(d["version"]) for d in page.results})
            offset += len(page.results)
            if not page.results or offset >= page.total:
                return out

    async def count(self) -> int:
        await self.ensure_index()
        stats = await self._index.get_stats()
        return int(stats.number_of_documents)

    async def flush(self) -> None:
        pending, self._pending = self._pending, []
        await self._wait(pending)

    async def close(self) -> None:
        try:
            await self.flush()
        finally:
            await self._client.aclose()
