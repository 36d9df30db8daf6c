"""The service's encoder: ONNX Runtime gives the torch model's vectors (same fingerprint), and a
model the ONNX path cannot run falls back to torch. Real model, real runtimes. (The ONNX
encoder's own behaviour is tested in libs/encoders.)"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from exocortex.embedding.encoder import load_encoder, query_encoder_factory
from exocortex.embedding.service import MicroBatcher
from exocortex.embedding.torch_encoder import TorchEncoder
from exocortex.encoders import Encoder, OnnxEncoder, bundled_model_path, read_pipeline

TEXTS = [
    "We chose Postgres for the memory store because it gives transactions and an outbox.",
    "ok",
    "NATS JetStream carries the events; the retrieval service projects them into two indexes. "
    * 12,  # long enough to be truncated at the model's maximum sequence length
    "Ünïcödé, emoji 🚀 and code: `def f(x): return x * 2`",
    "",
]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("encoder-cache")


@pytest.fixture(scope="module")
def onnx_encoder(cache_dir: Path) -> OnnxEncoder:
    encoder = load_encoder(bundled_model_path(), backend="onnx", threads=2, cache_dir=cache_dir)
    assert isinstance(encoder, OnnxEncoder)
    return encoder


def test_onnx_vectors_match_the_torch_model(onnx_encoder: OnnxEncoder) -> None:
    torch_encoder = TorchEncoder(bundled_model_path(), threads=2)
    got = np.stack(onnx_encoder.encode(TEXTS))
    want = np.stack(torch_encoder.encode(TEXTS))
    assert got.shape == want.shape == (len(TEXTS), 384)
    cosine = (got * want).sum(axis=1)
    assert cosine.min() > 0.9999, cosine
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    assert onnx_encoder.info == torch_encoder.info  # same model, same fingerprint


def test_a_model_the_onnx_path_cannot_run_falls_back_to_torch(tmp_path: Path) -> None:
    model = tmp_path / "model"
    shutil.copytree(bundled_model_path(), model)
    pooling = model / "1_Pooling" / "config.json"
    config = json.loads(pooling.read_text())
    config["pooling_mode_mean_tokens"] = False
    config["pooling_mode_cls_token"] = True
    pooling.write_text(json.dumps(config))
    assert read_pipeline(model) is None
    encoder = load_encoder(model, backend="onnx", threads=1, cache_dir=tmp_path / "cache")
    assert isinstance(encoder, TorchEncoder)
    assert len(encoder.encode(["still works"])[0]) == 384


def test_token_vectors_come_from_the_same_run_as_the_vectors(onnx_encoder: OnnxEncoder) -> None:
    vectors, tokens = onnx_encoder.encode_with_tokens(TEXTS)
    plain = onnx_encoder.encode(TEXTS)
    # The very same vectors a caller not asking for tokens gets.
    assert all(np.array_equal(a, b) for a, b in zip(vectors, plain, strict=True))
    alone = onnx_encoder.encode_tokens(TEXTS)
    assert len(tokens) == len(TEXTS)
    for got, want, text in zip(tokens, alone, TEXTS, strict=True):
        # The special tokens are left out: "ok" is one word piece, the empty text none but
        # its two special tokens (kept, as there is nothing else).
        assert got.shape == want.shape
        assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
        assert np.abs(got - want).max() < 1e-4, text
    assert tokens[1].shape[0] == 1


async def test_queries_get_an_encoder_of_their_own_at_the_first_query(
    onnx_encoder: OnnxEncoder, cache_dir: Path
) -> None:
    made: list[Encoder] = []
    factory = query_encoder_factory(
        bundled_model_path(), onnx_encoder, threads=2, cache_dir=cache_dir
    )
    assert factory is not None

    def make() -> Encoder:
        made.append(factory())
        return made[-1]

    batcher = MicroBatcher(onnx_encoder, max_batch=64, max_wait_ms=0, query_model=make)
    batcher.start()
    try:
        passages = await batcher.embed(TEXTS[:2])
        assert made == []  # passages never load it
        queries = await batcher.embed(TEXTS[:2], priority=0)
        again = await batcher.embed(TEXTS[:1], priority=0)
    finally:
        await batcher.stop()
    assert len(made) == 1  # made once, at the first query
    assert made[0] is not onnx_encoder
    # The same export, threads inside its runs: the passages' vectors, to float rounding.
    assert np.allclose(np.stack(queries), np.stack(passages), atol=1e-5)
    assert np.allclose(again[0], passages[0], atol=1e-5)


def test_one_thread_or_torch_needs_no_query_encoder(
    onnx_encoder: OnnxEncoder, cache_dir: Path
) -> None:
    path = bundled_model_path()
    assert query_encoder_factory(path, onnx_encoder, threads=1, cache_dir=cache_dir) is None
    torch_model = load_encoder(path, backend="torch", threads=2, cache_dir=cache_dir)
    assert query_encoder_factory(path, torch_model, threads=2, cache_dir=cache_dir) is None


def test_stored_memories_can_be_embedded_by_the_8_bit_copy(
    onnx_encoder: OnnxEncoder, cache_dir: Path
) -> None:
    """EXO_EMBEDDING_PRECISION=int8: the same model (same fingerprint, so nothing is embedded
    again) in 8-bit weights: vectors close to the full model's but not its, and the query lane's
    own encoder at the same precision, so a query meets passages made the same way."""
    path = bundled_model_path()
    int8 = load_encoder(path, backend="onnx", threads=2, cache_dir=cache_dir, precision="int8")
    assert isinstance(int8, OnnxEncoder)
    assert int8.info == onnx_encoder.info
    got = np.stack(int8.encode(TEXTS))
    full = np.stack(onnx_encoder.encode(TEXTS))
    cosine = (got * full).sum(axis=1)
    # Sentences land within 1%; a word or nothing ("ok", "") drifts most (0.96-0.97).
    assert cosine[[0, 2, 3]].min() > 0.99, cosine
    assert cosine.min() > 0.95, cosine
    assert not np.allclose(got, full, atol=1e-4)  # really the 8-bit weights
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    factory = query_encoder_factory(path, int8, threads=2, cache_dir=cache_dir, precision="int8")
    assert factory is not None
    queries = np.stack(factory().encode(TEXTS))
    assert np.allclose(queries, got, atol=1e-3)


def test_torch_runs_the_full_model_whatever_the_precision(cache_dir: Path) -> None:
    path = bundled_model_path()
    torch_model = load_encoder(
        path, backend="torch", threads=1, cache_dir=cache_dir, precision="int8"
    )
    assert isinstance(torch_model, TorchEncoder)
