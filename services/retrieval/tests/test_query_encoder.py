"""The local query encoder never fails a search: an error in the local model hands the query to
the embedding service. Pure unit test; the real model and stack are in tests/integration."""

from __future__ import annotations

from typing import Any

import numpy as np

from exocortex.core.domain.vectors import Vector
from exocortex.retrieval.search.query_encoder import LocalQueryEncoder


class _Broken:
    info: Any = None
    concurrent_calls = True

    def encode(self, texts: list[str]) -> list[Vector]:
        raise RuntimeError("onnx session lost")


class _Remote:
    def __init__(self) -> None:
        self.calls: list[tuple[list[str], bool]] = []

    async def embed(self, texts: list[str], *, query: bool = False) -> list[Vector]:
        self.calls.append((texts, query))
        return [np.ones(3, dtype=np.float32) for _ in texts]


async def test_a_local_failure_asks_the_embedding_service() -> None:
    remote = _Remote()
    local = LocalQueryEncoder(_Broken(), remote, workers=1)
    try:
        [vector] = await local.embed(["a query"], query=True)
    finally:
        local.close()
    assert remote.calls == [(["a query"], True)]
    assert vector.shape == (3,)
