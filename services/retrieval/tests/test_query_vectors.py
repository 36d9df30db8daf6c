"""A repeated query is embedded once, and a kept query vector is served only for the model that
made it: a change of the encoder's fingerprint or of the model settings embeds again. Pure unit
test (a counting stand-in for the encoder); searches through the real stack are in
tests/integration."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import numpy as np

from exocortex.core.domain.vectors import Vector
from exocortex.indexes.base import IndexFilter, IndexHit
from exocortex.retrieval.search.hits import IndexHits
from exocortex.retrieval.search.query_encoder import LocalQueryEncoder
from exocortex.retrieval.search.query_vectors import QueryVectors, model_key

SETTINGS = {"embedding.model": "Xenova/all-MiniLM-L6-v2", "embedding.dimensions": "384"}


class _Embedder:
    """Counts the texts it embeds; its vectors carry its model's number, to tell them apart."""

    def __init__(self) -> None:
        self.fingerprint = "model-a"
        self.embedded: list[str] = []

    async def embed(self, texts: list[str], *, query: bool = False) -> list[Vector]:
        self.embedded += texts
        code = 1.0 if self.fingerprint == "model-a" else 2.0
        return [np.full(3, code, dtype=np.float32) for _ in texts]


class _VectorIndex:
    def __init__(self) -> None:
        self.searched: list[Vector] = []

    async def search(self, vector: Vector, limit: int, flt: IndexFilter) -> list[IndexHit]:
        self.searched.append(vector)
        return []


def _hits(embedder: _Embedder, index: _VectorIndex) -> IndexHits:
    return IndexHits(cast(Any, None), embedder, cast(Any, index), cast(Any, None), 16)


async def _search(hits: IndexHits, query: str, settings: dict[str, str]) -> Vector:
    _, vector = await hits.vector(query, 10, IndexFilter(), asyncio.Event(), settings)
    return vector


async def test_a_repeated_query_is_embedded_once() -> None:
    embedder, index = _Embedder(), _VectorIndex()
    hits = _hits(embedder, index)
    first = await _search(hits, "why did we move the queue?", SETTINGS)
    again = await _search(hits, "why did we move the queue?", SETTINGS)
    other = await _search(hits, "who shipped the login flow?", SETTINGS)
    assert embedder.embedded == ["why did we move the queue?", "who shipped the login flow?"]
    assert np.array_equal(first, again)
    assert np.array_equal(other, first)  # same stand-in vector, but embedded for its own text
    assert len(index.searched) == 3


async def test_a_model_setting_change_embeds_the_query_again() -> None:
    embedder = _Embedder()
    hits = _hits(embedder, _VectorIndex())
    await _search(hits, "the payment queue", SETTINGS)
    changed = {**SETTINGS, "embedding.model": "another/model"}
    await _search(hits, "the payment queue", changed)
    assert embedder.embedded == ["the payment queue", "the payment queue"]
    resized = {**changed, "embedding.dimensions": "768"}
    await _search(hits, "the payment queue", resized)
    assert len(embedder.embedded) == 3


async def test_a_new_encoder_model_is_never_served_the_old_vectors() -> None:
    embedder = _Embedder()
    hits = _hits(embedder, _VectorIndex())
    old = await _search(hits, "the payment queue", SETTINGS)
    embedder.fingerprint = "model-b"  # the embedding service now runs another model
    new = await _search(hits, "the payment queue", SETTINGS)
    assert old[0] == 1.0
    assert new[0] == 2.0
    assert embedder.embedded == ["the payment queue", "the payment queue"]
    # And back: what was kept for model-b is dropped, model-a's vector is made again.
    embedder.fingerprint = "model-a"
    assert (await _search(hits, "the payment queue", SETTINGS))[0] == 1.0
    assert len(embedder.embedded) == 3


def test_the_cache_holds_one_model_at_a_time_and_is_bounded() -> None:
    cache = QueryVectors(2)
    a, b = ("a", "m", "384"), ("b", "m", "384")
    for text in ("one", "two", "three"):
        cache.put(a, text, np.zeros(3, dtype=np.float32))
    assert len(cache) == 2
    assert cache.get(a, "one") is None
    assert cache.get(a, "three") is not None
    assert cache.get(b, "three") is None
    cache.put(b, "four", np.ones(3, dtype=np.float32))
    assert len(cache) == 1
    assert cache.get(a, "three") is None


def test_the_local_encoders_key_names_its_model_and_precision() -> None:
    class _Info:
        fingerprint = "sha-of-model"

    class _Encoder:
        info = _Info()

        def encode(self, texts: list[str]) -> list[Vector]:
            return []

    remote = _Embedder()
    int8 = LocalQueryEncoder(cast(Any, _Encoder()), remote, workers=1, precision="int8")
    full = LocalQueryEncoder(cast(Any, _Encoder()), remote, workers=1, precision="float32")
    try:
        assert model_key(int8, SETTINGS) != model_key(full, SETTINGS)
        assert "sha-of-model" in model_key(int8, SETTINGS)[0]
    finally:
        int8.close()
        full.close()
