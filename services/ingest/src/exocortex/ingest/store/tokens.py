"""Token vectors kept with a memory (late-interaction re-scoring, see retrieval's
``search/rerank.py``): the embedding service gives them with the memory's vector from the same
run of the model, and they are written next to the memory in the transaction that inserts it
(the group commit, see group.py, or an import's batch, see bulk_import.py), so search reads
them instead of running the model on its results.

Kept for a memory embedded as one text (not for one split into chunks, whose root vector is not
its text's); a memory without them is encoded at search time as before. Written after the
memory (a store that supersedes another), they are best effort: the memory is already stored,
and a failure only costs that later encoding.
"""

from __future__ import annotations

from typing import Protocol

from exocortex.core.db.pool import Pool
from exocortex.core.domain.vectors import Vector
from exocortex.core.logging import get_logger
from exocortex.core.repositories import tokens as repository

log = get_logger(__name__)


class Embedder(Protocol):
    fingerprint: str
    dimensions: int

    async def embed(
        self, texts: list[str], *, deadline_seconds: float | None = None, bulk: bool = False
    ) -> list[Vector]: ...


async def embed_many(
    embedder: Embedder,
    texts: list[str],
    *,
    keep: bool,
    deadline_seconds: float | None = None,
    bulk: bool = False,
) -> tuple[list[Vector], list[bytes] | None]:
    """``texts``' vectors and, when ``keep``, each one's packed token vectors from the same
    request (None when not asked for or not given). ``bulk``: an import's batch, embedded
    after single stores' texts already waiting."""
    with_tokens = getattr(embedder, "embed_with_tokens", None)
    if not keep or with_tokens is None:
        return await embedder.embed(texts, deadline_seconds=deadline_seconds, bulk=bulk), None
    vectors, tokens = await with_tokens(texts, deadline_seconds=deadline_seconds, bulk=bulk)
    return vectors, tokens


async def embed(
    embedder: Embedder, texts: list[str], *, keep: bool
) -> tuple[list[Vector], bytes | None]:
    """``texts``' vectors and, when ``keep`` and there is one text, its packed token vectors
    from the same request (None when not asked for or not given)."""
    vectors, tokens = await embed_many(embedder, texts, keep=keep and len(texts) == 1)
    return vectors, tokens[0] if tokens else None


async def keep_many(pool: Pool, embedder: Embedder, items: list[tuple[str, str, bytes]]) -> None:
    """Write each (memory id, content it was made from, token vectors) of ``items``, in one
    statement."""
    if not items:
        return
    try:
        async with pool.connection() as conn:
            await repository.put_many(
                conn, items, model=embedder.fingerprint, dimensions=embedder.dimensions
            )
    except Exception as exc:
        log.warning("token vectors not kept; search encodes the memories", error=str(exc))


async def keep(
    pool: Pool, embedder: Embedder, memory_id: str, content: str, tokens: bytes | None
) -> None:
    """Write ``tokens`` for ``memory_id`` (made from ``content``), if given."""
    if tokens is not None:
        await keep_many(pool, embedder, [(memory_id, content, tokens)])
