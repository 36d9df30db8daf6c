"""The ONNX encoder gives the torch model's vectors, caches its export, and recovers from a
damaged cache; a model it cannot run falls back to torch. Real model, real runtimes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from exocortex.embedding.encoder import load_encoder
from exocortex.embedding.torch_encoder import TorchEncoder
from exocortex.encoders import OnnxEncoder, bundled_model_path, read_pipeline

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


def test_order_is_kept_across_slices(onnx_encoder: OnnxEncoder) -> None:
    texts = [f"memory number {i} " + "word " * (i % 17) for i in range(70)]
    batch = np.stack(onnx_encoder.encode(texts))
    one_by_one = np.stack([onnx_encoder.encode([t])[0] for t in texts])
    assert np.allclose(batch, one_by_one, atol=1e-5)


def test_the_export_is_cached_and_a_damaged_cache_is_rebuilt(
    onnx_encoder: OnnxEncoder, cache_dir: Path
) -> None:
    (exported,) = list(cache_dir.glob("*.onnx"))
    stamp = exported.stat().st_mtime_ns
    load_encoder(bundled_model_path(), backend="onnx", threads=1, cache_dir=cache_dir)
    assert exported.stat().st_mtime_ns == stamp  # reused, not exported again

    exported.write_bytes(b"not a model")
    again = load_encoder(bundled_model_path(), backend="onnx", threads=1, cache_dir=cache_dir)
    assert isinstance(again, OnnxEncoder)
    assert exported.stat().st_size > 1_000_000
    assert list(cache_dir.glob("*.tmp")) == []


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


def test_the_bundled_model_is_a_supported_shape() -> None:
    pipeline = read_pipeline(bundled_model_path())
    assert pipeline is not None
    assert pipeline.mean_pooling
    assert pipeline.normalize
    assert pipeline.max_seq_length == 256


def test_prepare_exports_ahead_of_time_and_is_idempotent(
    onnx_encoder: OnnxEncoder, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from exocortex.encoders import prepare

    assert prepare.main([str(cache_dir)]) == 0
    printed = Path(capsys.readouterr().out.strip())
    assert printed.parent == cache_dir
    assert printed.name == f"{onnx_encoder.info.fingerprint}.onnx"
    assert prepare.main([]) == 2
