"""If one side of hybrid search is unavailable, search answers from the other and names the
missing side in `degraded`. Real Postgres, real model, real index engines; the unavailable side
is a real client whose server does not answer."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from ulid import ULID

from exocortex.core.clients.embedding import EmbeddingClient
from exocortex.core.db.pool import open_pool
from exocortex.core.rpc.client import open_channel
from exocortex.core.settings_cache import SettingsCache
from exocortex.indexes.base import IndexDocument
from exocortex.indexes.meilisearch_index import MeilisearchKeywordIndex
from exocortex.indexes.qdrant_edge_index import QdrantEdgeVectorIndex
from exocortex.indexes.qdrant_server_index import QdrantServerVectorIndex
from exocortex.indexes.tantivy_index import TantivyKeywordIndex
from exocortex.retrieval.search.query import SearchQuery
from exocortex.retrieval.search.service import SearchService
from exocortex.testing.indexes import index_document

pytestmark = pytest.mark.integration

NAMESPACE = "degraded"
DIM = 384  # the model's
TEXTS = [
    "The nightly backup job copies the database to cold storage at two.",
    "Lunch order for Friday: two pizzas and a salad.",
    "The staging cluster runs three nodes behind one load balancer.",
]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port  # nothing listens on it once the socket is closed


@pytest.fixture
def embedder(embedding_client: EmbeddingClient) -> EmbeddingClient:
    return embedding_client


async def _stored(database_url: str, embedder: EmbeddingClient) -> list[IndexDocument]:
    vectors = await embedder.embed(TEXTS)
    docs = [
        index_document(str(ULID()), namespace=NAMESPACE, content=text, vector=vector)
        for text, vector in zip(TEXTS, vectors, strict=True)
    ]
    pool = await open_pool(database_url, max_size=1)
    try:
        async with pool.connection() as conn:
            for doc in docs:
                await conn.execute(
                    "INSERT INTO memories (id, namespace, content) VALUES (%s, %s, %s)",
                    (doc.memory_id, NAMESPACE, doc.content),
                )
    finally:
        await pool.close()
    return docs


async def _tantivy(tmp_path: Path, docs: list[IndexDocument]) -> TantivyKeywordIndex:
    keyword = TantivyKeywordIndex(tmp_path / "tantivy")
    await keyword.upsert(docs)
    await keyword.flush()
    return keyword


async def _search(
    database_url: str,
    embedder: EmbeddingClient,
    vector: QdrantEdgeVectorIndex | QdrantServerVectorIndex,
    keyword: TantivyKeywordIndex | MeilisearchKeywordIndex,
    query: str,
) -> tuple[list[str], list[str]]:
    pool = await open_pool(database_url, max_size=4)
    try:
        service = SearchService(
            pool, embedder, vector, keyword, SettingsCache(pool),
            overfetch_factor=5, min_candidates=50,
        )  # fmt: skip
        request = SearchQuery(query=query, namespace=NAMESPACE, limit=3)
        outcome = await service.search(request)
    finally:
        await pool.close()
    return [r.memory.id for r in outcome.results], outcome.degraded


# The client warns that it could not check the server's version: that server is the point.
@pytest.mark.filterwarnings("ignore:Failed to obtain server version")
async def test_keyword_side_answers_when_the_vector_index_is_down(
    database_url: str, embedder: EmbeddingClient, tmp_path: Path
) -> None:
    docs = await _stored(database_url, embedder)
    keyword = await _tantivy(tmp_path, docs)
    vector = QdrantServerVectorIndex(f"http://127.0.0.1:{_closed_port()}", None, "memories", DIM)
    ids, degraded = await _search(database_url, embedder, vector, keyword, "nightly backup job")
    assert degraded == ["vector"]
    assert ids[0] == docs[0].memory_id


async def test_vector_side_answers_when_the_keyword_index_is_down(
    database_url: str, embedder: EmbeddingClient, tmp_path: Path
) -> None:
    docs = await _stored(database_url, embedder)
    vector = QdrantEdgeVectorIndex(tmp_path / "qdrant", DIM)
    try:
        await vector.upsert(docs)
        await vector.flush()
        keyword = MeilisearchKeywordIndex(f"http://127.0.0.1:{_closed_port()}", None, "memories")
        ids, degraded = await _search(
            database_url, embedder, vector, keyword, "where do database copies go every night?"
        )
    finally:
        await vector.close()
    assert degraded == ["keyword"]
    assert ids[0] == docs[0].memory_id


async def test_a_failed_embedding_leaves_the_keyword_side_to_answer(
    database_url: str, embedder: EmbeddingClient, tmp_path: Path
) -> None:
    """The keyword search waits for the query vector; a failed embedding must release it."""
    docs = await _stored(database_url, embedder)
    keyword = await _tantivy(tmp_path, docs)
    vector = QdrantEdgeVectorIndex(tmp_path / "qdrant", DIM)
    channel = open_channel(f"127.0.0.1:{_closed_port()}")
    try:
        await vector.upsert(docs)
        unreachable = EmbeddingClient(channel, timeout=5.0)
        ids, degraded = await _search(
            database_url, unreachable, vector, keyword, "staging cluster nodes"
        )
    finally:
        await channel.close()
        await vector.close()
    assert degraded == ["vector"]
    assert ids[0] == docs[2].memory_id
