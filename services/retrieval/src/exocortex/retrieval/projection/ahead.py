"""Projection ahead of the event: a memory someone waits for is projected from Postgres at once.

A store answers once it is searchable (read-your-writes). Through events alone that is the
commit, the outbox relay's read and publish, NATS, the projector's fetch and read: most of a
single store's time. The row is committed before anyone waits for it, so the retrieval asked
to wait reads it and writes it to the indexes itself (``Projector.project_now``), and the
event that comes later finds nothing left to write. It works while NATS is away too.

Only where this process alone writes the indexes and a search commits what it must see (the
embedded engines with shared commits; see ``exocortex.indexes.shared_commits``). Replicas on
index servers could write one memory from two processes out of order, so they wait for the
event as before.

Waits that arrive while a projection runs are taken together by the next one: one read and
one index write for the stores that arrived together.
"""

from __future__ import annotations

import asyncio
from contextlib import suppress

from exocortex.core.logging import get_logger
from exocortex.retrieval.projection.projector import Projector

log = get_logger(__name__)


class ProjectionAhead:
    def __init__(self, projector: Projector) -> None:
        self._projector = projector
        # Memory id → the highest version waited for.
        self._pending: dict[str, int] = {}
        self._runner: asyncio.Task[None] | None = None

    def request(self, memory_id: str, version: int) -> None:
        """Project ``memory_id`` soon (with whatever else is asked meanwhile), unless its
        event brought ``version`` first; a failure only leaves it to its event."""
        self._pending[memory_id] = max(version, self._pending.get(memory_id, 0))
        if self._runner is None or self._runner.done():
            self._runner = asyncio.create_task(self._run(), name="projection-ahead")

    async def _run(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, {}
            try:
                await self._projector.project_now(batch)
            except Exception as exc:
                log.warning(
                    "projection ahead of the event failed; the event will project it",
                    memories=len(batch),
                    error=str(exc) or type(exc).__name__,
                )

    async def close(self) -> None:
        if self._runner is not None:
            self._runner.cancel()
            with suppress(asyncio.CancelledError):
                await self._runner
