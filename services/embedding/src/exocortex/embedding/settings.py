from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field

from exocortex.core.config import DEFAULT_GRPC_PORTS, DEFAULT_METRICS_PORTS, GrpcServiceSettings
from exocortex.core.domain.vectors import Precision
from exocortex.core.reference_env import env


class EmbeddingSettings(GrpcServiceSettings):
    listen: str = Field(
        default=f"127.0.0.1:{DEFAULT_GRPC_PORTS['embedding']}",
        validation_alias=AliasChoices("EXO_EMBEDDING_LISTEN"),
    )
    metrics_port: int = Field(
        default=DEFAULT_METRICS_PORTS["embedding"],
        validation_alias=AliasChoices("EXO_EMBEDDING_METRICS_PORT"),
    )
    # A sentence-transformers model directory; default: the bundled all-MiniLM-L6-v2.
    model_path: Path | None = Field(
        default=None, validation_alias=AliasChoices("EXO_EMBEDDING_MODEL_PATH")
    )
    # Micro-batching: concurrent requests are merged for up to this long / this many texts.
    max_batch: int = Field(default=64, validation_alias=AliasChoices("EXO_EMBEDDING_MAX_BATCH"))
    max_wait_ms: float = Field(
        default=2.0, validation_alias=AliasChoices("EXO_EMBEDDING_MAX_WAIT_MS")
    )
    # onnx (default): ONNX Runtime, exported once from the model's own weights and cached under
    # cache_dir; torch: sentence-transformers on torch. Both give the same vectors.
    backend: Literal["onnx", "torch"] = Field(
        default="onnx", validation_alias=AliasChoices("EXO_EMBEDDING_BACKEND")
    )
    # ONNX: the weights stored memories are embedded with. float32: the model as published;
    # int8: an 8-bit copy of it (matrix products quantized per channel, made once beside the
    # export), about 2.4x less CPU a lone text and 2.1x a batch, vectors at cosine 0.986-0.999
    # of the full model's (docs/architecture.md, "The embedding runtime"). Search queries are
    # embedded at retrieval's own precision (EXO_RETRIEVAL_QUERY_ENCODER_PRECISION).
    precision: Precision = Field(
        default="float32", validation_alias=AliasChoices("EXO_EMBEDDING_PRECISION")
    )
    # Where the ONNX export is kept (default: <EXO_DATA_DIR>/models).
    cache_dir: Path | None = Field(default=None, validation_alias=env("EXO_EMBEDDING_CACHE_DIR"))
    # ONNX: how many runs of the model a batch keeps going side by side, each on one thread
    # (see exocortex.encoders.onnx_encoder); torch: its threads for a large batch.
    threads: int = Field(default=2, validation_alias=AliasChoices("EXO_EMBEDDING_THREADS"))
    max_texts_per_request: int = 2048
    max_chars_per_text: int = 100_000
