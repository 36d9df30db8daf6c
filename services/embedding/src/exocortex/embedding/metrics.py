from __future__ import annotations

from prometheus_client import Counter, Histogram

BATCH_SIZE = Histogram(
    "exo_embedding_batch_size",
    "Texts per model call after micro-batching",
    buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256),
)
TEXTS = Counter("exo_embedding_texts_total", "Texts embedded")
DURATION = Histogram(
    "exo_embedding_duration_seconds",
    "Model time per batch",
    buckets=(0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)
