"""A text's token vectors (late-interaction re-scoring) as stored and sent: int8 rows.

The model's last hidden state for each token, the special tokens left out, each row of unit
length, is kept as ``round(value x 127)`` in one signed byte per dimension, at most
``MAX_TOKENS`` rows. A row's cosine with another survives that to about 0.999 (each value is off
by at most 1/254), and a 30-token memory of the 384-dimension default model takes 11.5 KB instead
of 46 KB as float32. Read back, each row is scaled to unit length again.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Tokens = npt.NDArray[np.float32]

# The first this many tokens of a text are kept: a memory's MaxSim is the query tokens' best
# matches among them (a short memory has 20-60; the model reads at most 256).
MAX_TOKENS = 128
SCALE = 127.0


def pack(tokens: Tokens, *, max_tokens: int = MAX_TOKENS) -> bytes:
    """``tokens`` (rows of unit length) as int8 bytes, row after row, at most ``max_tokens``
    rows."""
    rows = np.asarray(tokens, dtype=np.float32)[:max_tokens]
    packed: bytes = np.clip(np.rint(rows * SCALE), -127, 127).astype(np.int8).tobytes()
    return packed


def unpack(data: bytes, dimensions: int) -> Tokens:
    """The rows ``pack`` wrote, each of unit length again; an empty matrix for no bytes.
    Raises ValueError when the bytes are not whole rows of ``dimensions``."""
    if dimensions <= 0 or len(data) % dimensions:
        raise ValueError(f"{len(data)} bytes are not rows of {dimensions} dimensions")
    rows = np.frombuffer(data, dtype=np.int8).reshape(-1, dimensions).astype(np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit: Tokens = rows / np.maximum(norms, 1e-12)
    return unit
