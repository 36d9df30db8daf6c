"""The Qdrant server collection keeps an 8-bit copy of its vectors and searches rescore with the
full ones: on a real server (EXO_TEST_QDRANT_URL, else the compose image in a
container), and the calls the adapter makes (unit)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from qdrant_client import AsyncQdrantClient
from qdrant_client import models as qm
from ulid import ULID

from exocortex.indexes.base import IndexFilter
from exocortex.indexes.qdrant_server_index import (
    QUANTIZATION,
    SEARCH_PARAMS,
    QdrantServerVectorIndex,
)
from exocortex.testing.containers import Server
from exocortex.testing.indexes import index_document

DIM = 64


def _vectors(n: int, seed: int) -> np.ndarray[Any, np.dtype[np.float32]]:
    v = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    out: np.ndarray[Any, np.dtype[np.float32]] = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out


@pytest.fixture
def server(qdrant_server: Server) -> tuple[str, str | None]:
    """EXO_TEST_QDRANT_URL, else the compose image in a container, else a skip."""
    return qdrant_server.url, qdrant_server.api_key


async def test_a_new_collection_is_quantized_and_searches_stay_exact(
    server: tuple[str, str | None],
) -> None:
    url, key = server
    index = QdrantServerVectorIndex(url, key, f"test_{ULID()}".lower(), DIM)
    stored = _vectors(1_000, seed=1)
    try:
        await index.upsert([index_document(f"01{i:024d}", vector=v) for i, v in enumerate(stored)])
        admin = AsyncQdrantClient(url=url, api_key=key)
        info = await admin.get_collection(index._collection)
        await admin.close()
        assert isinstance(info.config.quantization_config, qm.ScalarQuantization)
        for query in _vectors(10, seed=2):
            hits = await index.search(query, 10, IndexFilter(namespace="n"))
            exact = stored @ query
            # Rescored with the full vectors: each score is the exact cosine, best first.
            for hit in hits:
                assert hit.score == pytest.approx(float(exact[int(hit.memory_id[2:])]), abs=1e-4)
            assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    finally:
        await index.close()


async def test_a_collection_made_without_it_is_quantized_on_first_use(
    server: tuple[str, str | None],
) -> None:
    url, key = server
    name = f"test_{ULID()}".lower()
    admin = AsyncQdrantClient(url=url, api_key=key)
    await admin.create_collection(
        name, vectors_config=qm.VectorParams(size=DIM, distance=qm.Distance.COSINE)
    )
    index = QdrantServerVectorIndex(url, key, name, DIM)
    try:
        await index.ensure_collection()
        info = await admin.get_collection(name)
        assert isinstance(info.config.quantization_config, qm.ScalarQuantization)
    finally:
        await index.close()
        await admin.delete_collection(name)
        await admin.close()


class _Recorder:
    """Stands in for the server client and records what the adapter asks of it (unit test)."""

    def __init__(self, *, exists: bool, quantized: bool) -> None:
        self.exists, self.quantized = exists, quantized
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def collection_exists(self, name: str) -> bool:
        return self.exists

    async def create_collection(self, name: str, **kwargs: Any) -> None:
        self.calls.append(("create", kwargs))

    async def get_collection(self, name: str) -> Any:
        config = SimpleNamespace(quantization_config=QUANTIZATION if self.quantized else None)
        return SimpleNamespace(config=config)

    async def update_collection(self, name: str, **kwargs: Any) -> None:
        self.calls.append(("update", kwargs))

    async def create_payload_index(self, name: str, field: str, **kwargs: Any) -> None:
        pass

    async def query_points(self, name: str, **kwargs: Any) -> Any:
        self.calls.append(("query", kwargs))
        return SimpleNamespace(points=[])

    async def close(self) -> None:
        pass


@pytest.mark.parametrize(
    ("exists", "quantized", "asked"),
    [
        (False, False, [("create", QUANTIZATION)]),
        (True, False, [("update", QUANTIZATION)]),
        (True, True, []),
    ],
)
async def test_the_adapter_asks_for_quantization_once(
    exists: bool, quantized: bool, asked: list[tuple[str, Any]]
) -> None:
    index = QdrantServerVectorIndex("http://qdrant.invalid:6333", None, "c", DIM)
    recorder = _Recorder(exists=exists, quantized=quantized)
    index._client = recorder  # type: ignore[assignment]
    await index.ensure_collection()
    await index.search(_vectors(1, seed=3)[0], 5, IndexFilter(namespace="n"))
    setup = [(name, kw["quantization_config"]) for name, kw in recorder.calls if name != "query"]
    assert setup == asked
    queries = [kw for name, kw in recorder.calls if name == "query"]
    assert [q["search_params"] for q in queries] == [SEARCH_PARAMS]
