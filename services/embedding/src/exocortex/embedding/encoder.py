"""The encoder this service runs: ONNX Runtime by default, torch when ONNX cannot run the model."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from exocortex.core.logging import get_logger
from exocortex.encoders import Encoder, OnnxEncoder, read_pipeline

log = get_logger(__name__)

Backend = Literal["onnx", "torch"]


def load_encoder(path: Path, *, backend: Backend, threads: int, cache_dir: Path) -> Encoder:
    """The encoder for `path`. ONNX Runtime is the default (several times faster for one
    query and lighter on a busy machine); a model whose shape it does not support, or an ONNX
    failure, falls back to torch, which runs any sentence-transformers model."""
    if backend == "onnx":
        pipeline = read_pipeline(path)
        if pipeline is None:
            log.warning("model not supported by the onnx backend; using torch", model=str(path))
        else:
            try:
                return OnnxEncoder(path, pipeline, threads=threads, cache_dir=cache_dir)
            except Exception as exc:  # a broken export must not take the service down
                log.warning("onnx backend failed; using torch", error=str(exc))
    from exocortex.embedding.torch_encoder import TorchEncoder

    return TorchEncoder(path, threads=threads)
