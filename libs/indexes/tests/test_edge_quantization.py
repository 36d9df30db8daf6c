"""Qdrant Edge keeps an 8-bit copy of indexed vectors for the graph walk and rescores the best
candidates with the full vectors: the order and scores a search returns stay exact."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from exocortex.indexes import qdrant_edge_index
from exocortex.indexes.base import IndexDocument, IndexFilter
from exocortex.indexes.qdrant_edge_index import QdrantEdgeVectorIndex
from exocortex.testing.indexes import index_document

DIM = 64
N = 3_000


def vectors(n: int, seed: int) -> np.ndarray[Any, np.dtype[np.float32]]:
    v = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    out: np.ndarray[Any, np.dtype[np.float32]] = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out


def docs(matrix: np.ndarray[Any, np.dtype[np.float32]]) -> list[IndexDocument]:
    return [index_document(f"01{i:024d}", vector=v) for i, v in enumerate(matrix)]


def quantized_segments(path: Path) -> int:
    return len(list(path.glob("segments/*/vector_storage/quantized.data")))


async def assert_exact(index: QdrantEdgeVectorIndex, stored: np.ndarray[Any, Any]) -> None:
    """Every hit carries its full-precision cosine (8-bit scores alone are off by about 1e-2),
    hits come best first, and the graph walk finds nearly all of the exact top 20."""
    found = 0
    for query in vectors(25, seed=99):
        hits = await index.search(query, 20, IndexFilter(namespace="n"))
        exact = stored @ query
        rows = [int(h.memory_id[2:]) for h in hits]
        assert [h.score for h in hits] == pytest.approx(exact[rows].tolist(), abs=1e-5)
        assert rows == sorted(rows, key=lambda r: -exact[r])
        found += len(set(rows) & set(np.argsort(-exact)[:20].tolist()))
    assert found / (25 * 20) >= 0.95


async def test_indexed_segments_are_quantized_and_searches_stay_exact(tmp_path: Path) -> None:
    stored = vectors(N, seed=1)
    index = QdrantEdgeVectorIndex(tmp_path, DIM, indexing_threshold_kb=10)
    try:
        await index.upsert(docs(stored))
        await index.optimize()
        assert quantized_segments(tmp_path) >= 1
        await assert_exact(index, stored)
    finally:
        await index.close()


async def test_a_shard_made_without_quantization_gets_it_on_the_next_optimizer_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored = vectors(N, seed=2)
    with monkeypatch.context() as m:
        m.setattr(qdrant_edge_index, "_QUANTIZATION", None)
        old = QdrantEdgeVectorIndex(tmp_path, DIM, indexing_threshold_kb=10)
        try:
            await old.upsert(docs(stored))
            await old.optimize()
        finally:
            await old.close()
    assert quantized_segments(tmp_path) == 0

    index = QdrantEdgeVectorIndex(tmp_path, DIM, indexing_threshold_kb=10, idle_seconds=0.0)
    try:
        await assert_exact(index, stored)  # unquantized segments still answer
        assert await index.optimize_when_idle() is True  # the first idle run converts them
        assert quantized_segments(tmp_path) >= 1
        await assert_exact(index, stored)
    finally:
        await index.close()
