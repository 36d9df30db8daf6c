"""Real engines behind the index contract: embedded ones always; servers at the URL a run gives,
else in containers of the compose images where a Docker engine is reachable."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ulid import ULID

from exocortex.indexes.base import IndexDocument, KeywordIndex, Vector, VectorIndex
from exocortex.testing.containers import Server

DIM = 384
BASE_TIME = datetime(2025, 1, 1, tzinfo=UTC)


def unit_vectors(n: int, seed: int = 7) -> np.ndarray[Any, np.dtype[np.float32]]:
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    out: np.ndarray[Any, np.dtype[np.float32]] = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out


DocFactory = Callable[..., IndexDocument]


@pytest.fixture
def make_doc() -> DocFactory:
    """Builds an IndexDocument with a fresh ULID and sensible defaults; kwargs override."""

    def build(**overrides: Any) -> IndexDocument:
        doc = IndexDocument(
            memory_id=str(ULID()),
            version=1,
            namespace="default",
            content_type="note",
            source="api",
            tags=(),
            created_at=BASE_TIME,
            importance=0.5,
            is_metadata=False,
        )
        return replace(doc, **overrides)

    return build


@pytest.fixture
def vectors() -> Callable[[int], list[Vector]]:
    def take(n: int) -> list[Vector]:
        return list(unit_vectors(n))

    return take


def days(n: int) -> datetime:
    return BASE_TIME + timedelta(days=n)


@pytest.fixture(params=["qdrant-edge", "qdrant-local", "qdrant-server"])
async def vector_index(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[VectorIndex]:
    kind: str = request.param
    index: VectorIndex
    if kind == "qdrant-edge":
        from exocortex.indexes.qdrant_edge_index import QdrantEdgeVectorIndex

        index = QdrantEdgeVectorIndex(tmp_path / "qdrant", DIM)
    else:
        from exocortex.indexes.qdrant_server_index import QdrantServerVectorIndex

        collection = f"test_{ULID()}".lower()
        if kind == "qdrant-local":
            index = QdrantServerVectorIndex(None, None, collection, DIM, location=":memory:")
        else:
            # EXO_TEST_QDRANT_URL, else the compose image in a container, else a skip.
            server: Server = request.getfixturevalue("qdrant_server")
            index = QdrantServerVectorIndex(server.url, server.api_key, collection, DIM)
    try:
        yield index
    finally:
        await index.close()


@pytest.fixture(params=["tantivy", "tantivy-shared-commits", "meilisearch"])
async def keyword_index(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[KeywordIndex]:
    kind: str = request.param
    index: KeywordIndex
    if kind == "tantivy":
        from exocortex.indexes.tantivy_index import TantivyKeywordIndex

        index = TantivyKeywordIndex(tmp_path / "tantivy")
    elif kind == "tantivy-shared-commits":
        # As the retrieval service runs the embedded engine (the contract flushes explicitly).
        from exocortex.indexes.shared_commits import SharedCommits
        from exocortex.indexes.tantivy_index import TantivyKeywordIndex

        index = SharedCommits(TantivyKeywordIndex(tmp_path / "tantivy"), delay=0.5)
    else:
        # EXO_TEST_MEILI_URL, else the compose image in a container, else a skip.
        server: Server = request.getfixturevalue("meilisearch_server")
        from exocortex.indexes.meilisearch_index import MeilisearchKeywordIndex

        index = MeilisearchKeywordIndex(server.url, server.api_key, f"test_{ULID()}")
    try:
        yield index
    finally:
        await index.close()
