"""The search query's encoder inside retrieval: the embedding service's own model from its own
ONNX cache, giving the service's vectors, and the remote path whenever the local copy cannot be
trusted. Real model, real stack."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import httpx
import numpy as np
import onnx
import pytest

from exocortex.core.clients.embedding import EmbeddingClient
from exocortex.core.runtime.stack import Stack
from exocortex.encoders.export import int8_path
from exocortex.retrieval.search import query_encoder
from exocortex.retrieval.search.query_encoder import (
    LocalQueryEncoder,
    Mode,
    Precision,
    QueryEmbedder,
    open_query_embedder,
)
from exocortex.testing.rest import search, store

TEXTS = [
    "why did we pick NATS over Kafka?",
    "ok",
    "Ünïcödé, emoji 🚀 and code: `def f(x): return x * 2`",
    "the payment queue moved after Tuesday's outage " * 40,  # truncated at the model's length
]


@pytest.fixture
def remote(embedding_client: EmbeddingClient) -> EmbeddingClient:
    return embedding_client


@pytest.fixture
def cache_dir(exo_stack: Stack) -> Path:
    """Where the stack's embedding service keeps its ONNX export (the session's shared cache)."""
    return Path(os.environ.get("EXO_EMBEDDING_CACHE_DIR") or exo_stack.config.data_dir / "models")


async def _open(
    mode: Mode,
    remote: EmbeddingClient,
    cache_dir: Path,
    fingerprint: str | None = None,
    precision: Precision = "float32",
) -> QueryEmbedder:
    """``open_query_embedder`` as retrieval calls it; the service's fingerprint by default."""
    return await open_query_embedder(
        mode,
        remote,
        fingerprint=fingerprint or (await remote.model_info()).fingerprint,
        model_path=None,
        cache_dir=cache_dir,
        threads=1,
        precision=precision,
    )


async def test_the_stack_embeds_queries_in_retrieval(
    exo_stack: Stack, api: httpx.AsyncClient, namespace: str
) -> None:
    log = (exo_stack.log_dir / "retrieval.log").read_text()
    assert "query encoder: in process (local)" in log
    target = await store(api, namespace, "We rotate the database credentials every ninety days.")
    await store(api, namespace, "The office plants are watered on Mondays.")
    body = await search(api, namespace, "how often are DB passwords changed")
    assert body["results"][0]["memory"]["id"] == target
    assert body["results"][0]["vector_score"] > 0
    assert body["degraded"] == []


async def test_local_vectors_are_the_embedding_services(
    remote: EmbeddingClient, cache_dir: Path
) -> None:
    info = await remote.model_info()
    local = await _open("local", remote, cache_dir)
    assert isinstance(local, LocalQueryEncoder)
    try:
        assert local.info.fingerprint == info.fingerprint
        assert local.info.dimensions == info.dimensions
        mine = await local.embed(TEXTS, query=True)
        theirs = await remote.embed(TEXTS, query=True)
        for a, b in zip(mine, theirs, strict=True):
            assert a.shape == b.shape == (info.dimensions,)
            np.testing.assert_allclose(a, b, atol=1e-5)
            assert float(np.dot(a, b)) > 0.99999
    finally:
        local.close()


async def test_the_8bit_copy_is_close_to_the_services_vectors(
    remote: EmbeddingClient, cache_dir: Path, tmp_path: Path
) -> None:
    """The default: an 8-bit copy written beside the service's export on first use, close to
    (not equal to) the service's vectors, and ranking passages as the full model does."""
    export = cache_dir / f"{(await remote.model_info()).fingerprint}.onnx"
    private = tmp_path / "models"
    private.mkdir()
    (private / export.name).write_bytes(export.read_bytes())
    local = await _open("local", remote, private, precision="int8")
    assert isinstance(local, LocalQueryEncoder)
    try:
        copy = int8_path(private, export.stem)
        # Fused before it was quantized: residual adds ride in the layer norms.
        ops = {node.op_type for node in onnx.load(str(copy)).graph.node}
        assert {"SkipLayerNormalization", "MatMulInteger"} <= ops, ops
        mine = await local.embed(TEXTS, query=True)
        theirs = await remote.embed(TEXTS, query=True)
        agreement = [float(np.dot(a, b)) for a, b in zip(mine, theirs, strict=True)]
        assert min(agreement) > 0.95, agreement
        assert max(agreement) < 0.99999, "the copy is not quantized"
        passages = await remote.embed(
            [
                "We rotate the database credentials every ninety days.",
                "The office plants are watered on Mondays.",
                "Deploys are frozen during the last week of the quarter.",
            ]
        )
        [query] = await local.embed(["how often are DB passwords changed"], query=True)
        assert int(np.argmax([float(np.dot(query, p)) for p in passages])) == 0
    finally:
        local.close()


async def test_an_8bit_copy_that_strays_falls_back_to_the_full_model(
    remote: EmbeddingClient, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(query_encoder.AGREEMENT, "int8", 1.01)  # no 8-bit copy can pass
    local = await _open("local", remote, cache_dir, precision="int8")
    assert isinstance(local, LocalQueryEncoder)
    try:
        [mine] = await local.embed([TEXTS[0]], query=True)
        [theirs] = await remote.embed([TEXTS[0]], query=True)
        assert float(np.dot(mine, theirs)) > 0.99999  # the full model's vector
    finally:
        local.close()


async def test_a_damaged_8bit_copy_is_written_again(
    remote: EmbeddingClient, cache_dir: Path, tmp_path: Path
) -> None:
    export = cache_dir / f"{(await remote.model_info()).fingerprint}.onnx"
    private = tmp_path / "models"
    private.mkdir()
    (private / export.name).write_bytes(export.read_bytes())
    copy = int8_path(private, export.stem)
    copy.write_bytes(b"not a model")
    local = await _open("local", remote, private, precision="int8")
    assert isinstance(local, LocalQueryEncoder)
    try:
        assert copy.stat().st_size > 1_000_000
        [mine] = await local.embed([TEXTS[0]], query=True)
        [theirs] = await remote.embed([TEXTS[0]], query=True)
        assert 0.95 < float(np.dot(mine, theirs)) < 0.99999
    finally:
        local.close()


async def test_a_model_other_than_the_services_falls_back_to_remote(
    remote: EmbeddingClient, cache_dir: Path
) -> None:
    chosen = await _open("local", remote, cache_dir, fingerprint="0123456789abcdef")
    assert chosen is remote
    [vector] = await chosen.embed(["still answers"], query=True)
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-4


async def test_a_missing_export_falls_back_to_remote_without_exporting(
    remote: EmbeddingClient, tmp_path: Path
) -> None:
    chosen = await _open("local", remote, tmp_path)
    assert chosen is remote
    assert await asyncio.to_thread(lambda: list(tmp_path.iterdir())) == []


async def test_remote_mode_asks_the_service(remote: EmbeddingClient, cache_dir: Path) -> None:
    chosen = await _open("remote", remote, cache_dir)
    assert chosen is remote
