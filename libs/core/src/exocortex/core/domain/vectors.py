"""Embedding vectors as stored (float32 little-endian bytes) and as computed (numpy)."""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]
# The weights a model's vectors are computed at: the model as published, or its 8-bit copy
# (the embedding service's EXO_EMBEDDING_PRECISION, retrieval's query encoder precision).
Precision = Literal["float32", "int8"]


def to_bytes(vector: Vector) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def from_bytes(data: bytes) -> Vector:
    return np.frombuffer(data, dtype="<f4").astype(np.float32, copy=False)
