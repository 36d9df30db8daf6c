"""The search recorder writes a batch of searches' side effects with one statement per kind;
the counts must be those of recording the searches one by one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import psycopg
from psycopg.rows import dict_row

from exocortex.core.db.pool import open_pool
from exocortex.maintenance.recorder import SearchRecorder
from exocortex.proto.v1 import events_pb2

T0 = datetime(2026, 11, 30, 9, tzinfo=UTC)


def _event(
    ids: list[str], at: datetime, *, compact: bool = False, query_hash: str = "q1"
) -> events_pb2.SearchPerformed:
    event = events_pb2.SearchPerformed(
        query_hash=query_hash,
        namespace="rec",
        result_ids=ids,
        compact=compact,
        result_count=len(ids),
        max_score=0.5 if ids else 0.0,
        miss_query="" if ids else "nothing matches this",
    )
    event.occurred_at.FromDatetime(at)
    return event


async def test_a_batch_is_recorded_as_its_searches_one_by_one(database_url: str) -> None:
    async with await psycopg.AsyncConnection.connect(
        database_url, autocommit=True, row_factory=dict_row
    ) as db:
        for mid in ("a", "b", "c"):
            await db.execute(
                "INSERT INTO memories (id, namespace, content) VALUES (%s, 'rec', %s)",
                (mid, f"memory {mid}"),
            )
        before = await (await db.execute("SELECT id, xmin::text AS x FROM memories")).fetchall()
        pool = await open_pool(database_url, max_size=1)
        try:
            await SearchRecorder(pool).record(
                [
                    _event(["a", "b"], T0),
                    _event(["b", "a", "a"], T0 + timedelta(seconds=5), query_hash="q2"),
                    _event(["c"], T0 + timedelta(seconds=9), compact=True),
                    _event(["gone", "a"], T0 + timedelta(seconds=2)),
                    _event([], T0 + timedelta(seconds=3)),
                ]
            )
        finally:
            await pool.close()

        rows = await (
            await db.execute(
                "SELECT m.id, coalesce(u.access_count, 0) AS access_count, u.last_accessed_at"
                " FROM memories m LEFT JOIN memory_usage u ON u.memory_id = m.id ORDER BY m.id"
            )
        ).fetchall()
        assert [(r["id"], r["access_count"]) for r in rows] == [("a", 3), ("b", 2), ("c", 0)]
        last = {r["id"]: r["last_accessed_at"] for r in rows}
        assert last["a"] == T0 + timedelta(seconds=5)
        assert last["b"] == T0 + timedelta(seconds=5)
        assert last["c"] is None  # a compact search only peeks
        # Counting an access leaves the wide memories rows alone (no new row version).
        after = await (await db.execute("SELECT id, xmin::text AS x FROM memories")).fetchall()
        assert sorted(after, key=str) == sorted(before, key=str)

        log = await (
            await db.execute("SELECT memory_id, query FROM access_log ORDER BY memory_id, query")
        ).fetchall()
        assert [(r["memory_id"], r["query"]) for r in log] == [
            ("a", "hash:q1"),
            ("a", "hash:q1"),
            ("a", "hash:q2"),
            ("b", "hash:q1"),
            ("b", "hash:q2"),
        ]

        served = await (
            await db.execute("SELECT memory_id, served_at FROM search_impressions ORDER BY 1")
        ).fetchall()
        assert [(r["memory_id"], r["served_at"]) for r in served] == [
            ("a", T0 + timedelta(seconds=5)),
            ("b", T0 + timedelta(seconds=5)),
            ("c", T0 + timedelta(seconds=9)),  # compact searches still serve
        ]

        misses = await (await db.execute("SELECT query FROM search_misses")).fetchall()
        assert [r["query"] for r in misses] == ["nothing matches this"]
        co = await (
            await db.execute("SELECT memory_ids FROM co_retrievals ORDER BY created_at")
        ).fetchall()
        assert [r["memory_ids"] for r in co] == [["a", "b"], ["gone", "a"], ["b", "a", "a"]]


async def test_fetches_made_before_the_search_was_recorded_count_once(database_url: str) -> None:
    """A fetch that found no impression yet waits in pending_fetches; recording the search that
    served the memory before that fetch (and at most five minutes before) counts it once."""
    async with await psycopg.AsyncConnection.connect(
        database_url, autocommit=True, row_factory=dict_row
    ) as db:
        for mid in ("early", "before", "late", "again", "stale", "unfetched"):
            await db.execute(
                "INSERT INTO memories (id, namespace, content) VALUES (%s, 'rec', %s)",
                (mid, f"memory {mid}"),
            )
        # Recent enough that only the "stale" fetch is older than the recorder keeps them.
        t0 = datetime.now(UTC) - timedelta(minutes=8)
        fetched = {
            "early": t0 + timedelta(seconds=1),  # right after the search: a use
            "before": t0 - timedelta(seconds=1),  # before the search: not a use of it
            "late": t0 + timedelta(minutes=6),  # too long after
            "again": t0 + timedelta(seconds=1),  # a use, and served once more afterwards
            "stale": datetime.now(UTC) - timedelta(minutes=20),  # never served: dropped
        }
        for mid, at in fetched.items():
            await db.execute(
                "INSERT INTO pending_fetches (memory_id, fetched_at) VALUES (%s, %s)", (mid, at)
            )
        pool = await open_pool(database_url, max_size=1)
        try:
            await SearchRecorder(pool).record(
                [
                    _event(["early", "before", "late", "again", "unfetched"], t0),
                    _event(["again"], t0 + timedelta(seconds=3), query_hash="q2"),
                ]
            )
        finally:
            await pool.close()

        useful = await (
            await db.execute("SELECT id, useful_count FROM memories ORDER BY id")
        ).fetchall()
        assert {r["id"]: r["useful_count"] for r in useful} == {
            "again": 1,
            "before": 0,
            "early": 1,
            "late": 0,
            "stale": 0,
            "unfetched": 0,
        }
        served = await (
            await db.execute("SELECT memory_id, served_at FROM search_impressions ORDER BY 1")
        ).fetchall()
        # A used impression is gone, except one served again after the fetch.
        assert [(r["memory_id"], r["served_at"]) for r in served] == [
            ("again", t0 + timedelta(seconds=3)),
            ("before", t0),
            ("late", t0),
            ("unfetched", t0),
        ]
        pending = await (
            await db.execute("SELECT memory_id FROM pending_fetches ORDER BY 1")
        ).fetchall()
        assert [r["memory_id"] for r in pending] == ["before", "late"]
