"""The encoder this service runs: ONNX Runtime by default, torch when ONNX cannot run the model."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

from exocortex.core.domain.vectors import Precision
from exocortex.core.logging import get_logger
from exocortex.encoders import Encoder, OnnxEncoder, read_pipeline

log = get_logger(__name__)

Backend = Literal["onnx", "torch"]


def load_encoder(
    path: Path,
    *,
    backend: Backend,
    threads: int,
    cache_dir: Path,
    precision: Precision = "float32",
) -> Encoder:
    """The encoder for `path`. ONNX Runtime is the default (several times faster for one
    query and lighter on a busy machine); a model whose shape it does not support, or an ONNX
    failure, falls back to torch, which runs any sentence-transformers model (at full
    precision: the 8-bit copy is an ONNX file)."""
    if backend == "onnx":
        pipeline = read_pipeline(path)
        if pipeline is None:
            log.warning("model not supported by the onnx backend; using torch", model=str(path))
        else:
            try:
                return OnnxEncoder(
                    path,
                    pipeline,
                    threads=threads,
                    cache_dir=cache_dir,
                    int8=precision == "int8",
                )
            except Exception as exc:  # a broken export must not take the service down
                log.warning("onnx backend failed; using torch", error=str(exc))
    if precision == "int8":
        log.warning("8-bit weights need the onnx backend; torch runs the full model")
    from exocortex.embedding.torch_encoder import TorchEncoder

    return TorchEncoder(path, threads=threads)


def query_encoder_factory(
    path: Path, model: Encoder, *, threads: int, cache_dir: Path, precision: Precision = "float32"
) -> Callable[[], Encoder] | None:
    """How to make the encoder for search queries, or None when ``model`` serves them too.

    The ONNX encoder runs each text on one thread, the cheapest for the service's CPU; a search
    query is a lone text someone waits for, and ``threads`` threads inside its run answer it
    1-2 ms sooner. A second session of the same export (the same vectors, to float rounding)
    does that. Made at the first query: where retrieval embeds its queries itself (the embedded
    default) none ever comes, and the copy of the weights is never loaded."""
    if not isinstance(model, OnnxEncoder) or threads <= 1:
        return None
    pipeline = read_pipeline(path)
    if pipeline is None:
        return None

    def make() -> Encoder:
        return OnnxEncoder(
            path,
            pipeline,
            threads=1,
            threads_inside=threads,
            cache_dir=cache_dir,
            export=False,
            fingerprint=model.info.fingerprint,
            int8=precision == "int8",
        )

    return make
