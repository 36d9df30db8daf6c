"""The search query's vector: computed in this process by the embedding service's own model (the
same ONNX export, from the same cache), or asked of the embedding service.

Why local: a query's round trip to the embedding service (gRPC both ways, the service's lanes
and thread hand-offs) costs about as much as running the model on it. The local encoder is used
only when it is provably the same model: the fingerprint the embedding service reports, and the
same vector for a probe text. By default the local copy runs 8-bit weights (int8): about half
the CPU of the full model on a short query, with vectors at cosine ~0.99 of the full model's; on
the LoCoMo questions its dense-only recall@5/10/25 was the full model's (40.9/51.3/66.0 against
40.9/50.7/65.0) and 94% of its top 10 were the same. Stored passages always get the full model.
Otherwise (another model, no ONNX export yet, the embedding
package not installed, as in the retrieval container image) every query goes to the service, as
it always did; stored passages are embedded by the service in every case.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

import numpy as np
import numpy.typing as npt

from exocortex.core.domain import token_vectors
from exocortex.core.domain.vectors import Precision, Vector
from exocortex.core.logging import get_logger
from exocortex.retrieval.search.lru import LruCache

if TYPE_CHECKING:
    from exocortex.core.clients.embedding import EmbeddingClient
    from exocortex.encoders import Encoder

log = get_logger(__name__)

Mode = Literal["local", "remote"]
# The local vector must match the service's to this cosine: the full model in two runtimes
# agrees to ~1e-6; the 8-bit copy lands at 0.987-0.996 on ordinary queries (0.994 on the probe),
# so 0.98 passes a sound copy and stops a broken one.
AGREEMENT: dict[Precision, float] = {"float32": 0.9999, "int8": 0.98}
PROBE = "Why did the team move the payment queue after Tuesday's outage?"
# Queries whose token vectors are kept from the run that made their vector (int8, ~4 KB each
# for a ten-word query), as many as the query vectors search keeps.
QUERY_TOKENS_KEPT = 2048


class NotUsable(Exception):
    """The local model is not the service's, or cannot run here at any precision."""


class QueryEmbedder(Protocol):
    async def embed(self, texts: list[str], *, query: bool = False) -> list[Vector]:
        """Unit-length vectors, one per text, in order."""
        ...


class LocalQueryEncoder:
    """Runs the model in this process, on its own small thread pool (an ONNX Runtime session
    takes concurrent calls), so the event loop keeps serving while a query is encoded."""

    def __init__(
        self, encoder: Encoder, remote: QueryEmbedder, *, workers: int = 2, precision: str = ""
    ) -> None:
        self.info = encoder.info
        # What its vectors depend on: the model file, and the precision it runs at (kept query
        # vectors are only served for the same; see query_vectors).
        self.fingerprint = f"{getattr(self.info, 'fingerprint', '')}:{precision}"
        self._encoder = encoder
        self._remote = remote
        self._executor = ThreadPoolExecutor(max(1, workers), thread_name_prefix="query-encoder")
        # A query's token vectors (late-interaction re-scoring), from the same run of the model
        # as its vector: keeping them costs a copy of ~10 rows, not another run.
        self._query_tokens: LruCache[str, bytes] = LruCache(QUERY_TOKENS_KEPT)
        self._dimensions = int(getattr(self.info, "dimensions", 0) or 0)

    async def embed(self, texts: list[str], *, query: bool = False) -> list[Vector]:
        loop = asyncio.get_running_loop()
        with_tokens = getattr(self._encoder, "encode_with_tokens", None)
        try:
            if query and with_tokens is not None and self._dimensions > 0:
                vectors, tokens = await loop.run_in_executor(self._executor, with_tokens, texts)
                for text, rows in zip(texts, tokens, strict=True):
                    self._query_tokens.put(text, token_vectors.pack(rows))
                return list(vectors)
            return await loop.run_in_executor(self._executor, self._encoder.encode, texts)
        except Exception as exc:  # never fail a search on the local copy; the service has one
            log.warning("local query encoder failed; asking the embedding service", error=str(exc))
            return await self._remote.embed(texts, query=query)

    def query_tokens(self, query: str) -> npt.NDArray[np.float32] | None:
        """The token vectors kept when ``query``'s vector was made here, if they still are."""
        kept = self._query_tokens.get(query)
        return token_vectors.unpack(kept, self._dimensions) if kept is not None else None

    async def tokens(self, texts: list[str]) -> list[npt.NDArray[np.float32]] | None:
        """Each text's unit token vectors (late-interaction re-scoring), or None when this
        encoder cannot give them (search then keeps its order)."""
        encode_tokens = getattr(self._encoder, "encode_tokens", None)
        if encode_tokens is None:
            return None
        loop = asyncio.get_running_loop()
        try:
            tokens: list[npt.NDArray[np.float32]] = await loop.run_in_executor(
                self._executor, encode_tokens, texts
            )
        except Exception as exc:  # re-scoring only reorders the head; never fail a search
            log.warning("token vectors unavailable; order kept", error=str(exc))
            return None
        return tokens

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


def _load(
    model_path: Path | None, cache_dir: Path, threads: int, fingerprint: str, precision: Precision
) -> Encoder:
    """The embedding service's ONNX encoder, from its cache, never exported here (the 8-bit copy
    is written beside it on first use). Raises when the model is not the one the service
    reports or cannot run on ONNX Runtime."""
    from exocortex.encoders import (
        OnnxEncoder,
        bundled_model_path,
        fingerprint_model,
        read_pipeline,
    )

    path = model_path or bundled_model_path()
    local = fingerprint_model(path)
    if local != fingerprint:
        raise NotUsable(f"model fingerprint {local} differs from the service's {fingerprint}")
    pipeline = read_pipeline(path)
    if pipeline is None:
        raise NotUsable("the model is not supported by the onnx backend")
    return OnnxEncoder(
        path,
        pipeline,
        threads=threads,
        cache_dir=cache_dir,
        export=False,
        fingerprint=local,
        int8=precision == "int8",
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
    precision: Precision = "int8",
) -> QueryEmbedder:
    """The local encoder when ``mode`` is local and it matches the embedding service (whose
    ``fingerprint`` is given); an 8-bit copy that strays too far falls back to the full model
    here; the remote client otherwise, each time with a warning saying why."""
    if mode == "remote":
        log.info("query encoder: the embedding service (remote)")
        return remote
    local, retry = await _open_local(remote, fingerprint, model_path, cache_dir, threads, precision)
    if local is None and retry and precision == "int8":
        log.warning("query encoder: trying the full-precision model instead of the 8-bit copy")
        local, _ = await _open_local(remote, fingerprint, model_path, cache_dir, threads, "float32")
    return local or remote


async def _open_local(
    remote: EmbeddingClient,
    fingerprint: str,
    model_path: Path | None,
    cache_dir: Path,
    threads: int,
    precision: Precision,
) -> tuple[LocalQueryEncoder | None, bool]:
    """The local encoder, or None and whether another precision could still work (not when the
    package, the export or the model itself is missing or different)."""
    try:
        encoder = await asyncio.to_thread(
            _load, model_path, cache_dir, threads, fingerprint, precision
        )
    except ImportError as exc:
        log.warning(
            "query encoder: remote (the embedding package is not installed)", error=str(exc)
        )
        return None, False
    except (FileNotFoundError, NotUsable) as exc:  # no export yet; another model
        log.warning("query encoder: remote (the local model cannot be used)", error=str(exc))
        return None, False
    except Exception as exc:
        log.warning(
            "query encoder: the local model cannot be used", precision=precision, error=str(exc)
        )
        return None, True
    local = LocalQueryEncoder(encoder, remote, precision=precision)
    try:
        mine = (await local.embed([PROBE], query=True))[0]
        theirs = (await remote.embed([PROBE], query=True))[0]
    except Exception as exc:
        local.close()
        log.warning("query encoder: remote (the probe failed)", error=str(exc))
        return None, False
    agreement = _cosine(mine, theirs)
    if agreement < AGREEMENT[precision]:
        local.close()
        log.warning(
            "query encoder: the local vectors differ from the service's",
            precision=precision,
            cosine=agreement,
        )
        return None, True
    log.info(
        "query encoder: in process (local)",
        fingerprint=fingerprint,
        precision=precision,
        cosine=agreement,
    )
    return local, False
