"""A memory's stored token vectors (table ``memory_tokens``, see migration 0020): written by
ingest with the memory's vector, read by search's late-interaction re-scoring. A change of the
memory's content or embedding model deletes them (a trigger); deleting the memory deletes them
(ON DELETE CASCADE)."""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection

Conn = AsyncConnection[Any]
Params = dict[str, object]

# Only while the memory still holds the text they were made from, under the model that made
# them: a write that lost a race with an edit stores nothing rather than stale tokens.
_PUT_SQL = """
INSERT INTO memory_tokens (memory_id, model, dimensions, tokens)
SELECT m.id, %(model)s, %(dimensions)s, %(tokens)s
  FROM memories m
 WHERE m.id = %(id)s AND m.content = %(content)s AND m.embedding_model = %(model)s
ON CONFLICT (memory_id) DO UPDATE
   SET model = EXCLUDED.model, dimensions = EXCLUDED.dimensions, tokens = EXCLUDED.tokens
"""

# A new memory's, in the transaction that inserts it (nothing to race with yet).
INSERT_SQL = """
INSERT INTO memory_tokens (memory_id, model, dimensions, tokens)
VALUES (%(id)s, %(model)s, %(dimensions)s, %(tokens)s)
"""


def _row(memory_id: str, content: str, model: str, dimensions: int, tokens: bytes) -> Params:
    return {
        "id": memory_id,
        "content": content,
        "model": model,
        "dimensions": dimensions,
        "tokens": tokens,
    }


async def put(
    conn: Conn, memory_id: str, content: str, *, model: str, dimensions: int, tokens: bytes
) -> bool:
    """Keep ``tokens`` (``token_vectors.pack``'s bytes) for ``memory_id`` if it still holds
    ``content`` embedded by ``model``. True when they were written."""
    cur = await conn.execute(_PUT_SQL, _row(memory_id, content, model, dimensions, tokens))
    return cur.rowcount == 1


async def insert_many(
    conn: Conn, items: list[tuple[str, bytes]], *, model: str, dimensions: int
) -> None:
    """The token vectors of new memories (memory id, tokens), in the transaction that inserts
    them, in one round trip."""
    if not items:
        return
    async with conn.cursor() as cur:
        await cur.executemany(
            INSERT_SQL,
            [{"id": i, "model": model, "dimensions": dimensions, "tokens": t} for i, t in items],
        )


async def put_many(
    conn: Conn, items: list[tuple[str, str, bytes]], *, model: str, dimensions: int
) -> None:
    """``put`` for many memories at once (memory id, content, tokens), in one round trip."""
    if not items:
        return
    async with conn.cursor() as cur:
        await cur.executemany(
            _PUT_SQL, [_row(i, content, model, dimensions, t) for i, content, t in items]
        )
