from __future__ import annotations

import time
from collections.abc import Awaitable
from typing import TypeVar

from prometheus_client import Counter, Gauge, Histogram

SEARCH_DURATION = Histogram(
    "exo_retrieval_search_duration_seconds",
    "Search latency by stage",
    ["stage"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.25, 0.5, 1),
)
# Rows read against candidates ranked: how much the bound on unread candidates saves (bounds.py).
SEARCH_ROWS = Counter(
    "exo_retrieval_search_rows_total",
    "Search candidates ranked (kind=candidate) and rows read from Postgres for them (kind=read)",
    ["kind"],
)
# Where re-scoring found the head's token vectors: kept in memory, stored with the memory when it
# was embedded, or encoded during the search (memories stored before they were kept).
RERANK_TOKENS = Counter(
    "exo_retrieval_rerank_tokens_total",
    "Memories re-scored by late interaction, by where their token vectors came from "
    "(source=cached|stored|encoded)",
    ["source"],
)
TIME_TO_SEARCHABLE = Histogram(
    "exo_retrieval_time_to_searchable_seconds",
    "From a memory's commit to its projection being searchable",
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
)
PROJECTED = Counter(
    "exo_retrieval_projected_total",
    "Memories written to the indexes by the projector, by path: ahead (projected from its row "
    "for a wait, ahead of its event), event (by its event), covered (an event whose memory was "
    "already projected ahead: nothing written again)",
    ["path"],
)
CONSUMER_LAG = Gauge(
    "exo_consumer_lag_messages", "Events not yet processed by a durable consumer", ["consumer"]
)
INDEX_DOCUMENTS = Gauge("exo_index_documents", "Documents in each projection", ["index"])
POSTGRES_MEMORIES = Gauge(
    "exo_postgres_memories", "Rows in Postgres that the projections should hold", ["state"]
)
# Background work (enrichment's lookups and index writes) waiting for searches to pause.
BACKGROUND_WAIT = Histogram(
    "exo_retrieval_background_wait_seconds",
    "Time background work waited for searches to pause, by kind of work",
    ["work"],
    buckets=(0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5),
)
RECONCILER_REPAIRED = Counter(
    "exo_reconciler_repaired_total",
    "Index documents the reconciler wrote or removed to agree with Postgres, by index and "
    "reason (missing, stale, orphaned)",
    ["index", "reason"],
)
RECONCILER_LAST_RUN = Gauge(
    "exo_reconciler_last_run_timestamp_seconds", "When the reconciler last finished a run"
)
RECONCILER_DURATION = Gauge(
    "exo_reconciler_last_run_duration_seconds", "How long the reconciler's last run took"
)


T = TypeVar("T")


async def timed(stage: str, awaitable: Awaitable[T]) -> T:
    """Await ``awaitable``, observing its duration as the search stage ``stage``."""
    start = time.perf_counter()
    try:
        return await awaitable
    finally:
        SEARCH_DURATION.labels(stage).observe(time.perf_counter() - start)
