"""Roots-only neighbour lookups (semantic dedup) find a memory even when its own variants fill
the first hits, on a real vector engine."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from exocortex.core.domain.vectors import from_bytes, to_bytes
from exocortex.indexes.qdrant_edge_index import QdrantEdgeVectorIndex
from exocortex.retrieval.search.nearest import NearestProbe, NearestQuery, nearest
from exocortex.testing.indexes import index_document

DIM = 32


def _unit(v: np.ndarray[Any, Any]) -> np.ndarray[Any, np.dtype[np.float32]]:
    out: np.ndarray[Any, np.dtype[np.float32]] = (v / np.linalg.norm(v)).astype(np.float32)
    return out


async def test_a_root_behind_many_of_its_variants_is_found(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    query = _unit(np.eye(DIM)[0])
    root = "01" + "R" * 24
    docs = [index_document(root, vector=_unit(query + 0.1 * rng.standard_normal(DIM)))]
    # Twenty wordings of that memory, each closer to the query than the memory itself.
    docs += [
        index_document(
            f"01V{i:023d}", parent_id=root, vector=_unit(query + 0.03 * rng.standard_normal(DIM))
        )
        for i in range(20)
    ]
    docs += [
        index_document(f"01U{i:023d}", vector=_unit(rng.standard_normal(DIM))) for i in range(30)
    ]
    index = QdrantEdgeVectorIndex(tmp_path, DIM)
    try:
        await index.upsert(docs)
        request = NearestQuery(
            probes=(NearestProbe(from_bytes(to_bytes(query))),),
            namespace="n",
            limit=3,
            min_similarity=0.8,
            roots_only=True,
        )
        reply = await nearest(index, request)
        assert [h.memory_id for h in reply[0]] == [root]
        # Without roots_only the variants come first, with their memory's id.
        hits = (await nearest(index, replace(request, roots_only=False)))[0]
        assert len(hits) == 3
        assert {h.parent_id for h in hits} == {root}
    finally:
        await index.close()
