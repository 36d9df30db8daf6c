"""Two retrieval replicas on shared indexes, over real NATS and Postgres: they share one projector
durable (each event applied once, by whichever replica takes it), AwaitIndexed is answered
promptly by the replica that did not apply the event, from the applier's announcement, and
their periodic reconciler runs take turns.

The embedded engines are opened by one process only, so by default both replicas run in this
test's process on one pair of embedded indexes, as replicas share index servers. With
EXO_TEST_QDRANT_URL and EXO_TEST_MEILI_URL set, each replica opens its own clients to those
servers instead.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pytest
from nats.aio.msg import Msg

from exocortex.core.bus import subjects
from exocortex.core.bus.client import DurableConsumer, connect, ensure_stream
from exocortex.core.db.pool import open_pool
from exocortex.indexes.base import KeywordIndex, VectorIndex
from exocortex.indexes.factory import open_keyword_index, open_vector_index
from exocortex.proto.v1 import events_pb2
from exocortex.retrieval.projection.events import IndexedAnnouncements, MemoryEvents
from exocortex.retrieval.projection.projector import Projector
from exocortex.retrieval.projection.reconciler import (
    Reconciler,
    ReconcileReport,
    reconcile_periodically,
)
from exocortex.retrieval.projection.service import IndexService
from exocortex.retrieval.projection.waiters import IndexedVersions
from exocortex.testing.wait import until_async

DIM = 384
# Far beyond any wait below: a replica released before it was released by an announcement.
NO_POLL_SECONDS = 30.0
DEADLINE_MS = 10_000
# "Promptly": inside the deadline and far inside the poll a lost announcement would cost, so a
# release this early can only come from the announcement (or the look at the start); the bound
# leaves a busy machine room, the wait itself takes about 0.1 s.
PROMPT_SECONDS = 8.0


@dataclass
class Replica:
    name: str
    versions: IndexedVersions
    indexes: IndexService
    consumer: DurableConsumer
    applied: list[str] = field(default_factory=list)


async def _indexes(stack: AsyncExitStack, tmp_path: Path) -> tuple[VectorIndex, KeywordIndex]:
    qdrant, meili = os.environ.get("EXO_TEST_QDRANT_URL"), os.environ.get("EXO_TEST_MEILI_URL")
    suffix = f"replicas_{uuid.uuid4().hex[:8]}"
    vector = await open_vector_index(
        qdrant_url=qdrant,
        qdrant_api_key=os.environ.get("EXO_TEST_QDRANT_API_KEY"),
        data_dir=tmp_path,
        dim=DIM,
        collection=suffix,
    )
    stack.push_async_callback(vector.close)
    keyword = await open_keyword_index(
        meili_url=meili,
        meili_api_key=os.environ.get("EXO_TEST_MEILI_MASTER_KEY"),
        data_dir=tmp_path,
        index_uid=suffix,
    )
    stack.push_async_callback(keyword.close)
    return vector, keyword


async def _replica(
    stack: AsyncExitStack,
    name: str,
    database_url: str,
    nats_url: str,
    durable: str,
    indexes: tuple[VectorIndex, KeywordIndex],
) -> Replica:
    pool = await open_pool(database_url, max_size=2)
    stack.push_async_callback(pool.close)
    nc = await connect(nats_url, name=name)
    stack.push_async_callback(nc.close)
    versions = IndexedVersions()
    announcements = IndexedAnnouncements(nc, subjects.indexed_subject(durable), versions)
    await announcements.listen()
    stack.push_async_callback(announcements.close)
    vector, keyword = indexes
    projector = Projector(pool, vector, keyword, versions, announce=announcements.announce)
    handle = MemoryEvents(projector).handle
    replica: Replica

    async def counted(msgs: Sequence[Msg]) -> None:
        await handle(msgs)
        for msg in msgs:
            event = events_pb2.MemoryChanged()
            event.ParseFromString(msg.data)
            replica.applied.append(event.memory_id)

    consumer = DurableConsumer(
        nc.jetstream(),
        durable=durable,
        filter_subject=subjects.MEMORY_ALL,
        handler=counted,
        fetch_timeout=0.25,
    )
    replica = Replica(
        name,
        versions,
        IndexService(versions, vector, keyword, poll_seconds=NO_POLL_SECONDS),
        consumer,
    )
    return replica


async def _running(stack: AsyncExitStack, replica: Replica) -> None:
    stop = asyncio.Event()
    task = asyncio.create_task(replica.consumer.run(stop))

    async def halt() -> None:
        stop.set()
        await asyncio.wait_for(task, 10)

    stack.push_async_callback(halt)


async def _insert(database_url: str, texts: Sequence[str]) -> list[str]:
    """Rows written as ingest writes them (their events are published separately)."""
    ids = [uuid.uuid4().hex[:26].upper() for _ in texts]
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as db:
        for memory_id, text in zip(ids, texts, strict=True):
            await db.execute(
                "INSERT INTO memories (id, namespace, content, content_hash) "
                "VALUES (%s, 'replicas', %s, %s)",
                (memory_id, text, f"hash-{memory_id}"),
            )
    return ids


async def _publish(nats_url: str, ids: Sequence[str]) -> None:
    """The memory.stored events of ``ids``, as ingest's outbox relay publishes them."""
    nc = await connect(nats_url, name="ingest-stand-in")
    try:
        js = nc.jetstream()
        await ensure_stream(js)
        for memory_id in ids:
            event = events_pb2.MemoryChanged(
                memory_id=memory_id, version=1, namespace="replicas", change="stored"
            )
            await js.publish(subjects.MEMORY_STORED, event.SerializeToString())
    finally:
        await nc.close()


@pytest.fixture
async def stack() -> AsyncIterator[AsyncExitStack]:
    async with AsyncExitStack() as s:
        yield s


async def _until(condition: Callable[[], bool], what: str) -> None:
    async def holds() -> bool:
        return condition()

    await until_async(holds, what=what, seconds=60, interval=0.05)


async def _waiting_for(replica: Replica, ids: Sequence[str]) -> None:
    """Until the replica has a read-your-writes wait registered for each of ``ids`` (its look
    at the index at the start found nothing)."""
    waiters = replica.versions._waiters  # a test looks inside: no public view of the waits
    await _until(
        lambda: all(waiters.get(memory_id) for memory_id in ids),
        f"replica {replica.name} is waiting for {len(ids)} memories",
    )


async def _timed_wait(replica: Replica, memory_id: str) -> tuple[bool, float]:
    start = time.monotonic()
    indexed = await replica.indexes.await_indexed(memory_id, 1, DEADLINE_MS)
    return indexed, time.monotonic() - start


async def test_a_replica_that_did_not_apply_the_event_answers_await_indexed_promptly(
    database_url: str, nats_url: str, tmp_path: Path, stack: AsyncExitStack
) -> None:
    durable = f"projector-{uuid.uuid4().hex[:8]}"
    indexes = await _indexes(stack, tmp_path)
    applier = await _replica(stack, "a", database_url, nats_url, durable, indexes)
    asker = await _replica(stack, "b", database_url, nats_url, durable, indexes)
    await _running(stack, applier)  # only A consumes: B can only learn from A

    # B waits before the event exists, so its look at the index at the start finds nothing
    # and its next poll is 30 s away: only A's announcement can release it in time.
    [memory_id] = await _insert(database_url, ["The ferry to the island leaves at seven."])
    waiting = asyncio.create_task(_timed_wait(asker, memory_id))
    await _waiting_for(asker, [memory_id])
    assert not waiting.done()
    await _publish(nats_url, [memory_id])
    indexed, seconds = await waiting
    assert indexed is True
    assert seconds < PROMPT_SECONDS, f"released after {seconds:.2f} s"
    assert applier.applied == [memory_id]
    assert asker.applied == []

    # Applied by A before B was asked (B missed nothing here, but a replica that started
    # after the announcement would have): B's look at the shared index answers at once.
    [later] = await _insert(database_url, ["The library closes early on Fridays."])
    await _publish(nats_url, [later])
    assert await applier.indexes.await_indexed(later, 1, DEADLINE_MS) is True
    # A replica that started after the announcement: it heard nothing of ``later``.
    fresh = IndexService(IndexedVersions(), *indexes, poll_seconds=NO_POLL_SECONDS)
    start = time.monotonic()
    assert await fresh.await_indexed(later, 1, DEADLINE_MS) is True
    assert time.monotonic() - start < PROMPT_SECONDS


async def test_replicas_on_one_durable_apply_each_event_once_and_both_answer_waits(
    database_url: str, nats_url: str, tmp_path: Path, stack: AsyncExitStack
) -> None:
    durable = f"projector-{uuid.uuid4().hex[:8]}"
    indexes = await _indexes(stack, tmp_path)
    replicas = [
        await _replica(stack, name, database_url, nats_url, durable, indexes) for name in ("a", "b")
    ]
    for replica in replicas:
        await _running(stack, replica)
    ids = await _insert(database_url, [f"Note {n} about the harbour tides." for n in range(60)])
    waits = [
        asyncio.create_task(_timed_wait(replicas[n % 2], memory_id))
        for n, memory_id in enumerate(ids)
    ]
    for n, replica in enumerate(replicas):
        await _waiting_for(replica, ids[n::2])
    # Published in small groups, so both replicas' fetches get a share.
    for start in range(0, len(ids), 5):
        await _publish(nats_url, ids[start : start + 5])
        await asyncio.sleep(0.05)
    results = await asyncio.gather(*waits)
    assert all(indexed for indexed, _ in results)
    slowest = max(seconds for _, seconds in results)
    assert slowest < PROMPT_SECONDS + 1.0, f"slowest wait {slowest:.2f} s"
    applied = [memory_id for replica in replicas for memory_id in replica.applied]
    assert sorted(applied) == sorted(ids)  # every event applied, none by both replicas
    held = await indexes[1].versions(ids)
    assert held == dict.fromkeys(ids, 1)


async def test_one_replica_on_a_durable_reconciles_and_another_takes_over_when_it_stops(
    database_url: str, tmp_path: Path, stack: AsyncExitStack
) -> None:
    """Replicas sharing indexes run the periodic reconciliation once per interval between
    them: the one holding the deployment's turn runs, the other does not while it lives, and
    takes over once it stops."""
    vector, keyword = await _indexes(stack, tmp_path)
    runs: dict[str, int] = {"a": 0, "b": 0}
    tries: dict[str, list[bool]] = {"a": [], "b": []}  # whether each try got the turn
    reconcilers: dict[str, Reconciler] = {}
    for name in runs:
        pool = await open_pool(database_url, max_size=2)
        stack.push_async_callback(pool.close)
        projector = Projector(pool, vector, keyword, IndexedVersions())
        reconciler = Reconciler(pool, projector, vector, keyword)
        run_once = reconciler.run_once

        async def counted(name: str = name, run_once: Any = run_once) -> ReconcileReport:
            runs[name] += 1
            report: ReconcileReport = await run_once()
            return report

        reconciler.run_once = counted  # type: ignore[method-assign]
        turn_of = reconciler.turn

        @asynccontextmanager
        async def tried(lock: str, name: str = name, turn_of: Any = turn_of) -> AsyncIterator[bool]:
            async with turn_of(lock) as mine:
                tries[name].append(mine)
                yield mine

        reconciler.turn = tried  # type: ignore[method-assign]
        reconcilers[name] = reconciler
    turn = f"retrieval-reconciler:{uuid.uuid4().hex[:8]}"
    stops = {name: asyncio.Event() for name in runs}
    a = asyncio.create_task(reconcile_periodically(reconcilers["a"], 0.2, stops["a"], turn=turn))
    await _until(lambda: runs["a"] >= 1, "A took the turn and ran")
    b = asyncio.create_task(reconcile_periodically(reconcilers["b"], 0.2, stops["b"], turn=turn))
    # While A lives, B asks for the turn every interval and is refused.
    await _until(
        lambda: tries["b"].count(False) >= 3 and runs["a"] >= 3,
        "B was refused the turn three times while A kept running",
    )
    assert runs["b"] == 0
    assert True not in tries["b"]
    stops["a"].set()
    await asyncio.wait_for(a, 10)
    await _until(lambda: runs["b"] >= 2, "B took over the turn and ran twice")
    stops["b"].set()
    await asyncio.wait_for(b, 10)
