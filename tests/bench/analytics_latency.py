"""Analytics report latency at 100k memories, on a real Postgres.

    .venv/bin/python tests/bench/analytics_latency.py [--memories 100000] [--repeats 15]

Starts its own embedded Postgres in a temporary directory, migrates it, and seeds the store
directly in SQL (fast): the memories of the namespace measured plus a tenth as many in another
namespace, two tags each from 500, access counts for 40%, links, and 20,000 search misses over
30 days (2,000 distinct queries). Then times each report through the analytics service (the
code behind the gRPC servicer and REST route, so the figure is the SQL and its assembly) and
prints per report the median and the worst wall time of `--repeats` calls, and the Postgres
CPU time a call costs (the backend's user + system time from /proc, averaged over the calls):
on a busy machine the wall time mostly measures the wait for a core, the CPU time does not.
Parallel query is off, so the CPU time is what one core spends on the report.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import psycopg

from exocortex.core.db import migrate
from exocortex.core.db.pool import open_pool
from exocortex.core.runtime.postgres import EmbeddedPostgres
from exocortex.maintenance.analytics.repository import AnalyticsRepository
from exocortex.maintenance.analytics.service import AnalyticsService, ModelInfo

TARGET_MS = 200.0
NAMESPACE = "bench"

SEED = """
INSERT INTO memories (id, namespace, content, importance, useful_count, model_id, agent,
                      embedding, embedding_model, embedding_dim, created_at, updated_at)
SELECT %(ns)s || '-' || lpad(i::text, 7, '0'), %(ns)s,
       'memory ' || i || ' about topic ' || (i %% 700) || ' ' || repeat('word ', 40),
       round((random() * 0.9 + 0.05)::numeric, 2), (random() * 5)::int,
       'model-' || (i %% 10), 'agent-' || (i %% 5),
       decode(repeat(md5(i::text), 48), 'hex'),
       CASE WHEN i %% 50 = 0 THEN 'old-model' ELSE 'current-model' END, 384,
       now() - make_interval(days => (i %% 730)), now() - make_interval(days => (i %% 730))
  FROM generate_series(1, %(n)s) AS i;
INSERT INTO memory_tags (memory_id, tag)
SELECT %(ns)s || '-' || lpad(i::text, 7, '0'), 'tag-' || ((i * k) %% 500)
  FROM generate_series(1, %(n)s) AS i, (VALUES (1), (7)) AS t(k)
ON CONFLICT DO NOTHING;
INSERT INTO memory_usage (memory_id, access_count, last_accessed_at)
SELECT %(ns)s || '-' || lpad(i::text, 7, '0'), (random() * 120)::int, now()
  FROM generate_series(1, %(n)s) AS i WHERE i %% 5 < 2;
INSERT INTO memory_links (source_id, target_id)
SELECT %(ns)s || '-' || lpad(i::text, 7, '0'), %(ns)s || '-' || lpad((i + 1)::text, 7, '0')
  FROM generate_series(1, %(n)s - 1, 2) AS i;
"""

MISSES = """
INSERT INTO search_misses (namespace, query, result_count, max_score, created_at)
SELECT %(ns)s, 'how do I configure service ' || (i %% 2000) || ' deployment',
       0, random() * 0.1, now() - make_interval(mins => (i %% 43200))
  FROM generate_series(1, 20000) AS i
"""


def _cpu_ms(pid: int) -> float:
    """User + system CPU time of a process on this machine, in milliseconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    return ticks * 1000 / os.sysconf("SC_CLK_TCK")


async def _time(
    call: Callable[[], Awaitable[Any]], repeats: int, backend: int
) -> tuple[float, float, float]:
    await call()  # warm the plan and the buffers once
    times = []
    cpu_before = _cpu_ms(backend)
    for _ in range(repeats):
        started = time.perf_counter()
        await call()
        times.append((time.perf_counter() - started) * 1000)
    cpu = (_cpu_ms(backend) - cpu_before) / repeats
    return statistics.median(times), max(times), cpu


async def measure(dsn: str, repeats: int) -> list[tuple[str, float, float, float]]:
    # One connection, so its backend's CPU time is the reports' (parallel workers off).
    pool = await open_pool(
        dsn + "?options=-c%20max_parallel_workers_per_gather%3D0", min_size=1, max_size=1
    )
    async with pool.connection() as conn:
        row = await (await conn.execute("SELECT pg_backend_pid() AS pid")).fetchone()
        assert row is not None
        backend = int(row["pid"])

    async def model() -> ModelInfo:
        return ModelInfo("current-model", 384)

    svc = AnalyticsService(AnalyticsRepository(pool), model)
    ns = NAMESPACE
    reports: dict[str, Callable[[], Awaitable[Any]]] = {
        "summary": lambda: svc.summary(ns),
        "access-distribution": lambda: svc.access_distribution(ns),
        "tag-effectiveness": lambda: svc.tag_effectiveness(ns, 20),
        "tag-health": lambda: svc.tag_health(ns),
        "producer-quality": lambda: svc.producer_quality(ns, "model", 15),
        "quality-trend": lambda: svc.quality_trend(ns, "month", 12),
        "quality-distribution": lambda: svc.quality_distribution(ns),
        "embedding-health": lambda: svc.embedding_health(ns),
        "decay-preview": lambda: svc.decay_preview(ns),
        "search-misses": lambda: svc.search_misses(ns, 7, 20),
        "knowledge-gaps": lambda: svc.knowledge_gaps(ns, 14, 3, 20),
    }
    try:
        return [(name, *await _time(call, repeats, backend)) for name, call in reports.items()]
    finally:
        await pool.close()


def seed(dsn: str, memories: int) -> float:
    started = time.perf_counter()
    with psycopg.connect(dsn, autocommit=True) as conn:
        for statement in SEED.split(";"):
            if statement.strip():
                conn.execute(statement, {"ns": NAMESPACE, "n": memories})
                conn.execute(statement, {"ns": "other", "n": max(2, memories // 10)})
        conn.execute(MISSES, {"ns": NAMESPACE})
        conn.execute("VACUUM ANALYZE")
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="exo-analytics-bench-") as tmp:
        server = EmbeddedPostgres(Path(tmp) / "data", fsync=False)
        with server:
            dsn = server.dsn_for("postgres")
            migrate.upgrade(dsn)
            took = seed(dsn, args.memories)
            print(f"seeded {args.memories:,} memories (+{args.memories // 10:,}) in {took:.0f} s")
            rows = asyncio.run(measure(dsn, args.repeats))
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'report':<22} {'median ms':>10} {'max ms':>8} {'pg cpu ms':>10}")
    for name, median, worst, cpu in rows:
        flag = "" if median < TARGET_MS else "  over target"
        print(f"{name:<22} {median:>10.1f} {worst:>8.1f} {cpu:>10.1f}{flag}")
    return 0 if all(median < TARGET_MS for _, median, _, _ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
