"""The search query's vector: computed in this process by the embedding service's own model (the
same ONNX export, from the same cache), or asked of the embedding service.

Why local: a query's round trip to the embedding service (gRPC both ways, the service's lanes
and thread hand-offs) costs about as much as running the model on it. The local encoder is used
only when it is provably the same model: the fingerprint the embedding service reports, and the
same vector for a probe text. Otherwise (another model, no ONNX export yet, the embedding
package not installed, as in the retrieval container image) every query goes to the service, as
it always did; stored passages are embedded by the service in every case.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

import numpy as np

from exocortex.core.domain.vectors import Vector
from exocortex.core.logging import get_logger

if TYPE_CHECKING:
    from exocortex.core.clients.embedding import EmbeddingClient
    from exocortex.embedding.encoders import Encoder

log = get_logger(__name__)

Mode = Literal["local", "remote"]
# The local vector must match the service's to this cosine (the two runtimes agree to ~1e-6).
AGREEMENT = 0.9999
PROBE = "Why did the team move the payment queue after Tuesday's outage?"


class QueryEmbedder(Protocol):
    async def embed(self, texts: list[str], *, query: bool = False) -> list[Vector]:
        """Unit-length vectors, one per text, in order."""
        ...


class LocalQueryEncoder:
    """Runs the model in this process, on its own small thread pool (an ONNX Runtime session
    takes concurrent calls), so the event loop keeps serving while a query is encoded."""

    def __init__(self, encoder: Encoder, remote: QueryEmbedder, *, workers: int = 2) -> None:
        self.info = encoder.info
        self._encoder = encoder
        self._remote = remote
        self._executor = ThreadPoolExecutor(max(1, workers), thread_name_prefix="query-encoder")

    async def embed(self, texts: list[str], *, query: bool = False) -> list[Vector]:
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, self._encoder.encode, texts)
        except Exception as exc:  # never fail a search on the local copy; the service has one
            log.warning("local query encoder failed; asking the embedding service", error=str(exc))
            return await self._remote.embed(texts, query=query)

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


def _load(model_path: Path | None, cache_dir: Path, threads: int, fingerprint: str) -> Encoder:
    """The embedding service's ONNX encoder, from its cache, never exported here. Raises when
    the model is not the one the service reports or cannot run on ONNX Runtime."""
    from exocortex.embedding.encoders.base import (
        bundled_model_path,
        fingerprint_model,
        read_pipeline,
    )
    from exocortex.embedding.encoders.onnx_encoder import OnnxEncoder

    path = model_path or bundled_model_path()
    local = fingerprint_model(path)
    if local != fingerprint:
        raise ValueError(f"model fingerprint {local} differs from the service's {fingerprint}")
    pipeline = read_pipeline(path)
    if pipeline is None:
        raise ValueError("the model is not supported by the onnx backend")
    return OnnxEncoder(
        path, pipeline, threads=threads, cache_dir=cache_dir, export=False, fingerprint=local
    )


def _cosine(a: Vector, b: Vector) -> float:
    denominator = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(np.dot(a, b)) / denominator if denominator > 0 else 0.0


async def open_query_embedder(
    mode: Mode,
    remote: EmbeddingClient,
    *,
    fingerprint: str,
    model_path: Path | None,
    cache_dir: Path,
    threads: int,
) -> QueryEmbedder:
    """The local encoder when ``mode`` is local and it matches the embedding service (whose
    ``fingerprint`` is given); the remote client otherwise, with a warning saying why."""
    if mode == "remote":
        log.info("query encoder: the embedding service (remote)")
        return remote
    try:
        encoder = await asyncio.to_thread(_load, model_path, cache_dir, threads, fingerprint)
    except ImportError as exc:
        log.warning(
            "query encoder: remote (the embedding package is not installed)", error=str(exc)
        )
        return remote
    except Exception as exc:
        log.warning("query encoder: remote (the local model cannot be used)", error=str(exc))
        return remote
    local = LocalQueryEncoder(encoder, remote)
    try:
        mine = (await local.embed([PROBE], query=True))[0]
        theirs = (await remote.embed([PROBE], query=True))[0]
    except Exception as exc:
        local.close()
        log.warning("query encoder: remote (the probe failed)", error=str(exc))
        return remote
    agreement = _cosine(mine, theirs)
    if agreement < AGREEMENT:
        local.close()
        log.warning("query encoder: remote (the local vectors differ)", cosine=agreement)
        return remote
    log.info("query encoder: in process (local)", fingerprint=fingerprint, cosine=agreement)
    return local
