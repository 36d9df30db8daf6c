"""A text's token vectors (late-interaction re-scoring) as stored and sent: int8 rows.

The model's last hidden state for each token, the special tokens left out, each row of unit
length, is kept as ``round(value x 127)`` in one signed byte per dimension, at most
``MAX_TOKENS`` rows. A row's cosine with another survives that to about 0.999 (each value is off
by at most 1/254), and a 30-token memory of the 384-dimension default model takes 11.5 KB instead
of 46 KB as float32. Read back, each row is scaled to unit length again.
"""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(frozen=True, slots=True)
class Packed:
    """A text's token vectors kept as stored: the int8 rows and each row's inverse length, so
    a cosine against them is one matrix product and one scaling, in a quarter of the memory
    the float32 rows take (what lets a process keep four times as many memories' tokens)."""

    rows: npt.NDArray[np.int8]
    inverse_norms: npt.NDArray[np.float32]

    @property
    def nbytes(self) -> int:
        return int(self.rows.nbytes + self.inverse_norms.nbytes)

    def cosines(self, query: Tokens) -> npt.NDArray[np.float32]:
        """The cosine of every row of ``query`` (unit rows) with every row kept here."""
        scaled: npt.NDArray[np.float32] = (query @ self.rows.T.astype(np.float32)) * (
            self.inverse_norms
        )
        return scaled


def read(data: bytes, dimensions: int) -> Packed:
    """The rows ``pack`` wrote, kept packed. Raises ValueError when the bytes are not whole
    rows of ``dimensions``."""
    if dimensions <= 0 or len(data) % dimensions:
        raise ValueError(f"{len(data)} bytes are not rows of {dimensions} dimensions")
    rows = np.frombuffer(data, dtype=np.int8).reshape(-1, dimensions)
    norms = np.linalg.norm(rows.astype(np.float32), axis=1)
    inverse: npt.NDArray[np.float32] = (1.0 / np.maximum(norms, 1e-12)).astype(np.float32)
    return Packed(rows, inverse)


def packed(tokens: Tokens) -> Packed:
    """``tokens`` (rows of unit length) as ``read`` gives them back from ``pack``'s bytes."""
    rows = np.asarray(tokens, dtype=np.float32)
    return read(pack(rows), rows.shape[1] if rows.ndim == 2 else 0)
