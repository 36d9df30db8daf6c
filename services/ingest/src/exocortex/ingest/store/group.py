"""Group commit for the single-store path: new memories that arrive while a commit is in flight
are committed together, in one transaction, by the next commit.

Each store still commits durably before it is answered, with its rows, its tags and its
``memory.stored`` event (outbox) in the same transaction; what concurrent stores share is the
transaction (one BEGIN, one ``executemany`` for the rows, one for the tags, one for the events,
one COMMIT), the wake-up of this process's outbox relay after it, the relay's drain, and so
the projector's batch and index commit downstream. A store that arrives alone commits at once
(no waiting for company): grouping only takes what queued up behind a commit already running.

A group that fails (a unique violation: two identical texts racing; Postgres away) is retried
one store at a time, so each store gets its own outcome, exactly as without grouping.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from exocortex.core.db.pool import Pool
from exocortex.core.repositories import bulk
from exocortex.core.repositories import tokens as token_rows
from exocortex.core.repositories.memories import NewMemory
from exocortex.ingest import events, metrics
from exocortex.ingest.store import repository
from exocortex.ingest.store.model import Row

# At most this many stores in one transaction (a group of short notes is a few hundred KB).
MAX_GROUP = 64


@dataclass(frozen=True)
class KeptTokens:
    """A new memory's token vectors (``token_vectors.pack``'s bytes), made by ``model`` from its
    text: written in the memory's own transaction (its fields are named as
    ``tokens.INSERT_SQL``'s parameters)."""

    tokens: bytes
    model: str
    dimensions: int


@dataclass
class _Waiting:
    rows: list[NewMemory]
    headers: dict[str, str]
    future: asyncio.Future[Row] = field(repr=False)
    tokens: KeptTokens | None = None


class GroupCommitter:
    def __init__(
        self,
        pool: Pool,
        *,
        max_group: int = MAX_GROUP,
        on_commit: Callable[[], None] | None = None,
    ) -> None:
        """``on_commit`` wakes the outbox relay of this process after each commit; without it
        the commit wakes a relay through Postgres (``pg_notify``), a round trip more."""
        self._pool = pool
        self._max = max_group
        self._on_commit = on_commit
        self._queue: list[_Waiting] = []
        self._leader: asyncio.Task[None] | None = None

    async def insert(self, rows: list[NewMemory], tokens: KeptTokens | None = None) -> Row:
        """Commit a new memory (``rows``: parent first, then its chunks) with its ``stored``
        event and its token vectors when given; the parent's row as committed. Raises
        ``UniqueClash`` as a transaction of its own would."""
        future: asyncio.Future[Row] = asyncio.get_running_loop().create_future()
        # The correlation id is the caller's: taken here, not in the committing task.
        self._queue.append(_Waiting(rows, events.headers(), future, tokens))
        if self._leader is None or self._leader.done():
            self._leader = asyncio.create_task(self._lead(), name="ingest-group-commit")
        return await asyncio.shield(future)

    async def _lead(self) -> None:
        while self._queue:
            group, self._queue = self._queue[: self._max], self._queue[self._max :]
            try:
                rows = await self._commit(group)
            except Exception as exc:
                if len(group) == 1:
                    _settle(group[0], exc=exc)
                    continue
                # Who failed it is not known: each store again, on its own.
                for waiting in group:
                    try:
                        (row,) = await self._commit([waiting])
                    except Exception as one:
                        _settle(waiting, exc=one)
                    else:
                        _settle(waiting, row=row)
                continue
            metrics.GROUP_SIZE.observe(len(group))
            for waiting, row in zip(group, rows, strict=True):
                _settle(waiting, row=row)

    async def _commit(self, group: Sequence[_Waiting]) -> list[Row]:
        rows = await _commit(self._pool, group, wake_relay=self._on_commit is None)
        if self._on_commit is not None:
            self._on_commit()
        return rows


def _settle(waiting: _Waiting, *, row: Row | None = None, exc: BaseException | None = None) -> None:
    if waiting.future.done():
        return
    if exc is not None:
        waiting.future.set_exception(exc)
    elif row is not None:
        waiting.future.set_result(row)


async def _commit(pool: Pool, group: Sequence[_Waiting], *, wake_relay: bool) -> list[Row]:
    """One transaction for the group; the parents' rows as inserted, in order."""
    all_rows = [r for w in group for r in w.rows]
    async with repository.transaction(pool) as conn:
        inserted = await bulk.insert_memories(conn, all_rows, returning=True)
        parents = [inserted[w.rows[0].id] for w in group]
        await bulk.enqueue_events(
            conn,
            [
                (
                    events.SUBJECTS["stored"],
                    events.payload(
                        row["id"], int(row["version"]), row["namespace"], "stored",
                        [r.id for r in w.rows[1:]],
                    ),
                    w.headers,
                )
                for w, row in zip(group, parents, strict=True)
            ],
            wake_relay=wake_relay,
        )  # fmt: skip
        kept = [
            {"id": row["id"], **vars(w.tokens)}
            for w, row in zip(group, parents, strict=True)
            if w.tokens is not None
        ]
        if kept:
            async with conn.cursor() as cur:
                await bulk.execute_each(cur, token_rows.INSERT_SQL, kept)
    return parents
