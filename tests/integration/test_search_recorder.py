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
