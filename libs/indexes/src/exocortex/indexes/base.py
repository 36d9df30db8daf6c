"""The two projection interfaces the retrieval service writes to and searches.

Postgres is the source of truth; these indexes are projections that can be dropped and rebuilt.
Adapters: Qdrant Edge (embedded) or Qdrant server for vectors; tantivy (embedded) or Meilisearch
for keywords. Fusion and boosts happen in the retrieval service, never in an engine, so ranking is
identical whichever adapters run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class IndexDocument:
    """One active memory row (or chunk row) as the projections see it."""

    memory_id: str
    version: int
    namespace: str
    content_type: str
    source: str
    tags: tuple[str, ...]
    created_at: datetime
    importance: float
    is_metadata: bool
    # Chunk rows point at the memory they belong to; search collapses them onto it.
    parent_id: str | None = None
    # Keyword side.
    content: str = ""
    keywords: str = ""
    # Vector side; None when the row has no embedding (e.g. a chunked parent).
    vector: Vector | None = None


@dataclass(frozen=True, slots=True)
class IndexFilter:
    """Filters both index kinds apply natively (pre-filtering, not post-filtering)."""

    namespace: str | None = None
    # Any of these namespaces (a caller limited to several); empty: no such condition. Used
    # with `namespace` unset.
    namespaces_any: tuple[str, ...] = ()
    tags_any: tuple[str, ...] = ()
    content_type: str | None = None
    source: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    min_importance: float | None = None
    exclude_metadata: bool = False
    exclude_ids: tuple[str, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class IndexHit:
    memory_id: str
    score: float
    parent_id: str | None = None


def best_first(hits: Sequence[IndexHit]) -> list[IndexHit]:
    """Hits by score, best first, equal scores in memory id order.

    Engines order equal scores by where a document sits in their files (segment, offset), and
    that changes when an index is rebuilt, merged or written in another order. Ranks feed the
    fusion, so without a fixed tie order the same data could rank differently after a reindex."""
    return sorted(hits, key=lambda hit: (-hit.score, hit.memory_id))


class VectorIndex(Protocol):
    """Nearest-neighbour search over memory embeddings."""

    name: str

    async def upsert(self, docs: Sequence[IndexDocument]) -> None:
        """Insert or replace documents that carry a vector; documents without one are removed.
        Once it returns, the write is searchable and survives a crash of this process."""

    async def delete(self, memory_ids: Sequence[str]) -> None: ...

    async def search(
        self, vector: Vector, limit: int, flt: IndexFilter, *, write_side: bool = False
    ) -> list[IndexHit]:
        """Highest cosine similarity first; score is the cosine similarity. ``write_side``: a
        look-up for the write path (dedup, relations), not someone's search: an embedded engine
        may build its graph meanwhile rather than keep scanning what it has not indexed."""

    async def versions(self, memory_ids: Sequence[str]) -> dict[str, int]:
        """Projected version of each id that is present."""

    async def held(self) -> dict[str, int]:
        """Every id the index holds (memories, chunks and variants) with its projected version,
        as a search would see them now. Read in pages, giving the event loop and searches a
        turn between them; a write landing meanwhile may or may not be in the answer. The
        reconciler compares it with Postgres to find what a lost write left missing, stale or
        behind."""

    async def count(self) -> int: ...

    async def flush(self) -> None:
        """Write everything to disk, so it also survives the machine losing power."""

    async def close(self) -> None: ...


# The weight of a keywords match against a content match, as the original's BM25 column weight.
DEFAULT_KEYWORDS_BOOST = 2.0


class KeywordIndex(Protocol):
    """BM25 keyword search over memory content and keywords."""

    name: str

    async def upsert(self, docs: Sequence[IndexDocument]) -> None: ...

    async def delete(self, memory_ids: Sequence[str]) -> None: ...

    async def search(
        self,
        query: str,
        limit: int,
        flt: IndexFilter,
        *,
        keywords_boost: float = DEFAULT_KEYWORDS_BOOST,
    ) -> list[IndexHit]:
        """Best BM25 match first; score is the engine's relevance score (higher is better).
        A match in a memory's keywords weighs ``keywords_boost`` times one in its content
        (`scoring.keyword_boost`) where the engine weighs fields per query (tantivy does;
        Meilisearch ranks by its fixed attribute order instead)."""

    async def versions(self, memory_ids: Sequence[str]) -> dict[str, int]: ...

    async def held(self) -> dict[str, int]:
        """Every id the index holds with its projected version, as `VectorIndex.held`: what
        a search sees, so writes not yet flushed are not in it."""

    async def count(self) -> int: ...

    async def flush(self) -> None:
        """Commit pending writes and make them visible to search."""

    async def close(self) -> None: ...
