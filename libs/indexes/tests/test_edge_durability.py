"""Qdrant Edge writes survive a crash of the process without a flush (the engine's write-ahead
log is replayed on open), so the owner flushes only once searches pause, or once unflushed
writes get old (`flush_when_idle`)."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

from exocortex.indexes.base import IndexDocument, IndexFilter
from exocortex.indexes.qdrant_edge_index import QdrantEdgeVectorIndex
from exocortex.testing.indexes import index_document
from exocortex.testing.wait import until_async

HERE = str(Path(__file__).resolve().parent)
DIM = 8
PROBE = np.ones(DIM, dtype=np.float32)


def docs(n: int, offset: int = 0, version: int = 1) -> list[IndexDocument]:
    rng = np.random.default_rng(offset)
    return [
        index_document(
            f"01{i + offset:024d}",
            version=version,
            vector=rng.standard_normal(DIM).astype(np.float32),
        )
        for i in range(n)
    ]


# Writes in a child process that is then killed: no flush, no close.
_WRITER = textwrap.dedent(
    """
    import asyncio, os, signal, sys
    from pathlib import Path
    sys.path[:0] = [p for p in sys.argv[2:] if p]
    from test_edge_durability import docs
    from exocortex.indexes.qdrant_edge_index import QdrantEdgeVectorIndex

    async def main() -> None:
        index = QdrantEdgeVectorIndex(Path(sys.argv[1]), 8)
        await index.upsert(docs(40))
        await index.flush()
        await index.upsert(docs(30, offset=100))  # never flushed
        await index.upsert(docs(1, offset=0, version=7))  # an update, never flushed
        await index.delete([docs(1, offset=1)[0].memory_id])  # a delete, never flushed
        print("written", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)

    asyncio.run(main())
    """
)


async def test_applied_writes_survive_a_killed_process_without_a_flush(tmp_path: Path) -> None:
    child = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", _WRITER, str(tmp_path), HERE, *sys.path],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert "written" in child.stdout
    index = QdrantEdgeVectorIndex(tmp_path, DIM)
    try:
        assert await index.count() == 40 + 30 - 1
        updated, deleted = docs(1)[0].memory_id, docs(1, offset=1)[0].memory_id
        last = docs(30, offset=100)[-1].memory_id
        assert await index.versions([updated, deleted, last]) == {updated: 7, last: 1}
        hits = await index.search(PROBE, 100, IndexFilter(namespace="n"))
        assert {h.memory_id for h in hits} >= {d.memory_id for d in docs(30, offset=100)}
    finally:
        await index.close()


async def test_flush_waits_for_searches_to_pause_or_for_writes_to_get_old(
    tmp_path: Path,
) -> None:
    # Searches never pause for this one (60 s): only the writes' age makes it flush.
    busy = QdrantEdgeVectorIndex(tmp_path / "busy", DIM, idle_seconds=60.0)
    try:
        await busy.upsert(docs(10))
        await busy.search(PROBE, 5, IndexFilter(namespace="n"))
        assert await busy.flush_when_idle(max_age=60.0) is False  # searched just now

        # Searches keep coming, yet once the first unflushed write is older than max_age
        # it flushes.
        async def flushed_between_searches() -> bool:
            await busy.search(PROBE, 5, IndexFilter(namespace="n"))
            return await busy.flush_when_idle(max_age=0.1)

        await until_async(
            flushed_between_searches, what="a write older than max_age flushed", seconds=30
        )
        assert await busy.flush_when_idle(max_age=0.1) is False  # nothing new since
    finally:
        await busy.close()
    # Searches have always paused for this one: it flushes whatever was written, once.
    idle = QdrantEdgeVectorIndex(tmp_path / "idle", DIM, idle_seconds=0.0)
    try:
        assert await idle.flush_when_idle(max_age=60.0) is False  # nothing written
        await idle.upsert(docs(10))
        await idle.search(PROBE, 5, IndexFilter(namespace="n"))
        assert await idle.flush_when_idle(max_age=60.0) is True
        assert await idle.flush_when_idle(max_age=60.0) is False  # nothing new since
        await idle.delete([docs(1)[0].memory_id])
        assert await idle.flush_when_idle(max_age=60.0) is True  # a delete counts too
    finally:
        await idle.close()
