"""The index factories pick the adapter the settings ask for, and the result works end to end."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from ulid import ULID

from exocortex.indexes.base import IndexDocument, IndexFilter
from exocortex.indexes.factory import open_keyword_index, open_vector_index
from exocortex.testing.containers import Server

DIM = 384


def _doc(content: str, seed: int) -> IndexDocument:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return IndexDocument(
        memory_id=str(ULID()),
        version=1,
        namespace="it",
        content_type="note",
        source="api",
        tags=("x",),
        created_at=datetime.now(UTC),
        importance=0.5,
        is_metadata=False,
        content=content,
        vector=v / np.linalg.norm(v),
    )


async def test_embedded_defaults_round_trip(tmp_path: Path) -> None:
    vectors = await open_vector_index(
        qdrant_url=None, qdrant_api_key=None, data_dir=tmp_path, dim=DIM
    )
    keywords = await open_keyword_index(meili_url=None, meili_api_key=None, data_dir=tmp_path)
    try:
        assert (vectors.name, keywords.name) == ("qdrant-edge", "tantivy")
        assert (tmp_path / "qdrant").is_dir()
        assert (tmp_path / "tantivy").is_dir()
        doc = _doc("embedded indexes answer searches", 1)
        await vectors.upsert([doc])
        await keywords.upsert([doc])
        await vectors.flush()
        await keywords.flush()
        assert doc.vector is not None
        flt = IndexFilter(namespace="it")
        assert [h.memory_id for h in await vectors.search(doc.vector, 3, flt)] == [doc.memory_id]
        assert [h.memory_id for h in await keywords.search("searching", 3, flt)] == [doc.memory_id]
    finally:
        await vectors.close()
        await keywords.close()


async def test_qdrant_server_from_url(tmp_path: Path, qdrant_server: Server) -> None:
    index = await open_vector_index(
        qdrant_url=qdrant_server.url,
        qdrant_api_key=qdrant_server.api_key,
        data_dir=tmp_path,
        dim=DIM,
        collection=f"it_{ULID()}".lower(),
    )
    try:
        assert index.name == "qdrant"
        doc = _doc("server", 2)
        await index.upsert([doc])
        await index.flush()
        assert doc.vector is not None
        hits = await index.search(doc.vector, 1, IndexFilter(namespace="it"))
        assert [h.memory_id for h in hits] == [doc.memory_id]
    finally:
        await index.close()


async def test_meilisearch_from_url(tmp_path: Path, meilisearch_server: Server) -> None:
    index = await open_keyword_index(
        meili_url=meilisearch_server.url,
        meili_api_key=meilisearch_server.api_key,
        data_dir=tmp_path,
        index_uid=f"it_{ULID()}",
    )
    try:
        assert index.name == "meilisearch"
        doc = _doc("meilisearch answers keyword searches", 3)
        await index.upsert([doc])
        await index.flush()
        hits = await index.search("keyword", 3, IndexFilter(namespace="it"))
        assert [h.memory_id for h in hits] == [doc.memory_id]
    finally:
        await index.close()
