"""Choose the index adapters from settings: a server when its URL is set, else embedded."""

from __future__ import annotations

from pathlib import Path

from exocortex.indexes.base import KeywordIndex, VectorIndex


async def open_vector_index(
    *,
    qdrant_url: str | None,
    qdrant_api_key: str | None,
    data_dir: Path,
    dim: int,
    collection: str = "memories",
) -> VectorIndex:
    """Qdrant server at `qdrant_url`, or a Qdrant Edge shard under `data_dir/qdrant`."""
    if qdrant_url:
        from exocortex.indexes.qdrant_server_index import QdrantServerVectorIndex

        server = QdrantServerVectorIndex(qdrant_url, qdrant_api_key, collection, dim)
        await server.ensure_collection()
        return server
    from exocortex.indexes.qdrant_edge_index import QdrantEdgeVectorIndex

    return QdrantEdgeVectorIndex(data_dir / "qdrant", dim)


async def open_keyword_index(
    *,
    meili_url: str | None,
    meili_api_key: str | None,
    data_dir: Path,
    index_uid: str = "memories",
) -> KeywordIndex:
    """Meilisearch at `meili_url`, or a tantivy index under `data_dir/tantivy`."""
    if meili_url:
        from exocortex.indexes.meilisearch_index import MeilisearchKeywordIndex

        meili = MeilisearchKeywordIndex(meili_url, meili_api_key, index_uid)
        await meili.ensure_index()
        return meili
    from exocortex.indexes.tantivy_index import TantivyKeywordIndex

    return TantivyKeywordIndex(data_dir / "tantivy")
