from __future__ import annotations

from prometheus_client import Counter, Histogram

ENRICHED = Counter("exo_enrichment_memories_total", "Memories enriched")
ENRICH_DURATION = Histogram(
    "exo_enrichment_duration_seconds",
    "Time to enrich one memory (entities, links, contradictions, goals)",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)
ENRICH_FAILURES = Counter("exo_enrichment_batch_failures_total", "Event batches that failed")
