from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

STORE_DURATION = Histogram(
    "exo_ingest_store_duration_seconds",
    "Time to validate, embed and commit one memory",
    ["outcome"],
    buckets=(0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)
STORES = Counter("exo_ingest_stores_total", "Stores by dedup outcome", ["dedup_action"])
OUTBOX_BACKLOG = Gauge("exo_outbox_backlog", "Outbox events not yet published to NATS")
OUTBOX_PUBLISHED = Counter("exo_outbox_published_total", "Outbox events published to NATS")
DEDUP_LOOKUP_FAILURES = Counter(
    "exo_ingest_dedup_lookup_failures_total",
    "Semantic dedup lookups skipped because the vector index could not answer",
)
IMPORT_ITEMS = Counter(
    "exo_ingest_import_items_total", "Bulk-imported items by outcome", ["outcome"]
)
DEDUP_OVERFLOWS = Counter(
    "exo_ingest_dedup_overflows_total",
    "Near duplicates stored as memories of their own because their match had no room for "
    "another variant",
)
GROUP_SIZE = Histogram(
    "exo_ingest_store_group_size",
    "Single stores committed together in one transaction (group commit)",
    buckets=(1, 2, 4, 8, 16, 32, 64),
)
