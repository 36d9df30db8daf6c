"""The model on ONNX Runtime: the bundled model is a shape it runs, the export is made once and
cached (a damaged cache is made again), a process that may not export finds none, and texts keep
their order across length-sorted slices. Real model, real runtime."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from exocortex.encoders import OnnxEncoder, Pipeline, bundled_model_path, read_pipeline
from exocortex.encoders.export import int8_path
from exocortex.encoders.onnx_encoder import RUN_POSITIONS, RUN_ROWS, plan_runs


@pytest.fixture(scope="module")
def pipeline() -> Pipeline:
    found = read_pipeline(bundled_model_path())
    assert found is not None
    return found


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("encoder-cache")


@pytest.fixture(scope="module")
def encoder(pipeline: Pipeline, cache_dir: Path) -> OnnxEncoder:
    return OnnxEncoder(bundled_model_path(), pipeline, threads=2, cache_dir=cache_dir)


def test_the_bundled_model_is_a_supported_shape(pipeline: Pipeline) -> None:
    assert pipeline.mean_pooling
    assert pipeline.normalize
    assert pipeline.max_seq_length == 256


def test_order_is_kept_across_slices(encoder: OnnxEncoder) -> None:
    texts = [f"memory number {i} " + "word " * (i % 17) for i in range(70)]
    batch = np.stack(encoder.encode(texts))
    one_by_one = np.stack([encoder.encode([t])[0] for t in texts])
    assert batch.shape == (70, 384)
    assert np.allclose(batch, one_by_one, atol=1e-5)
    assert np.allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)


def test_the_export_is_cached_and_a_damaged_cache_is_rebuilt(
    encoder: OnnxEncoder, pipeline: Pipeline, cache_dir: Path
) -> None:
    exported = cache_dir / f"{encoder.info.fingerprint}.onnx"
    stamp = exported.stat().st_mtime_ns
    OnnxEncoder(bundled_model_path(), pipeline, threads=1, cache_dir=cache_dir)
    assert exported.stat().st_mtime_ns == stamp  # reused, not exported again

    exported.write_bytes(b"not a model")
    OnnxEncoder(bundled_model_path(), pipeline, threads=1, cache_dir=cache_dir)
    assert exported.stat().st_size > 1_000_000
    assert list(cache_dir.glob("*.tmp")) == []


def test_a_process_that_may_not_export_finds_no_export(pipeline: Pipeline, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        OnnxEncoder(bundled_model_path(), pipeline, threads=1, cache_dir=tmp_path, export=False)
    assert list(tmp_path.iterdir()) == []


def test_prepare_exports_ahead_of_time_and_is_idempotent(
    encoder: OnnxEncoder, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from exocortex.encoders import prepare

    assert prepare.main([str(cache_dir)]) == 0
    # The last two lines (the log may say it quantized, on the same stream).
    export, quantized = (Path(line) for line in capsys.readouterr().out.splitlines()[-2:])
    assert export.parent == quantized.parent == cache_dir
    assert export.name == f"{encoder.info.fingerprint}.onnx"
    # The 8-bit copy too, where the 8-bit encoder looks for it.
    assert quantized == int8_path(cache_dir, encoder.info.fingerprint)
    assert quantized.stat().st_size > 1_000_000
    stamps = (export.stat().st_mtime_ns, quantized.stat().st_mtime_ns)
    assert prepare.main([str(cache_dir)]) == 0
    assert (export.stat().st_mtime_ns, quantized.stat().st_mtime_ns) == stamps
    assert prepare.main([]) == 2


def test_token_vectors_leave_the_special_tokens_out_and_are_unit_length(
    encoder: OnnxEncoder,
) -> None:
    texts = ["hello world", "The deploy uses blue-green releases on Kubernetes."]
    tokens = encoder.encode_tokens(texts)
    assert len(tokens) == 2
    assert tokens[0].shape == (2, encoder.info.dimensions)  # "hello", "world"
    assert tokens[1].shape[0] > tokens[0].shape[0]
    for t in tokens:
        assert np.allclose(np.linalg.norm(t, axis=1), 1.0, atol=1e-4)
    # A text's tokens are the same alone as in a padded batch.
    alone = encoder.encode_tokens(texts[:1])[0]
    assert np.allclose(alone, tokens[0], atol=1e-4)


def test_runs_pad_to_a_bounded_width_and_keep_every_text_once() -> None:
    lengths = [5, 300, 12, 12, 40, 7, 100, 3] + [9] * 40
    runs = plan_runs(lengths)
    assert sorted(i for run in runs for i in run) == list(range(len(lengths)))
    for run in runs:
        widest = max(lengths[i] for i in run)
        # A run pads to its longest text; only a text longer than the bound runs alone.
        assert len(run) * widest <= RUN_POSITIONS or len(run) == 1
        assert len(run) <= RUN_ROWS
    assert [300] in [[lengths[i] for i in run] for run in runs]
    # Sorted by length: a run never mixes texts around one of another run.
    widths = [(min(lengths[i] for i in run), max(lengths[i] for i in run)) for run in runs]
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(widths))


def test_runs_side_by_side_give_the_vectors_of_one_thread(
    encoder: OnnxEncoder, pipeline: Pipeline, cache_dir: Path
) -> None:
    alone = OnnxEncoder(bundled_model_path(), pipeline, threads=1, cache_dir=cache_dir)
    texts = [f"note {i}: " + "the deploy runs on blue-green releases " * (i % 9) for i in range(90)]
    assert len(plan_runs([len(t.split()) for t in texts])) > 2
    vectors, tokens = encoder.encode_with_tokens(texts)
    one_vectors, one_tokens = alone.encode_with_tokens(texts)
    assert np.allclose(np.stack(vectors), np.stack(one_vectors), atol=1e-5)
    assert all(np.allclose(a, b, atol=1e-4) for a, b in zip(tokens, one_tokens, strict=True))
    assert np.allclose(np.stack(encoder.encode(texts)), np.stack(vectors), atol=1e-6)
    assert encoder.encode([]) == []
