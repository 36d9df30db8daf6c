"""Every NATS subject, stream and durable consumer name, in one place."""

from __future__ import annotations

STREAM = "EXO"
STREAM_SUBJECTS = ["exo.>"]

MEMORY_STORED = "exo.memory.stored"
MEMORY_UPDATED = "exo.memory.updated"
MEMORY_ARCHIVED = "exo.memory.archived"
MEMORY_RESTORED = "exo.memory.restored"
MEMORY_DELETED = "exo.memory.deleted"
MEMORY_ENRICHED = "exo.memory.enriched"
MEMORY_ALL = "exo.memory.>"

SEARCH_PERFORMED = "exo.search.performed"

# Core NATS, outside the stream: ingest announces a settings change after committing it, and
# each process's settings cache answers once it has dropped its values (``settings_cache``).
SETTINGS_CHANGED = "settings.changed"
SETTINGS_APPLIED = "settings.applied"

# Durable consumers (one per projection / worker; each survives restarts).
RETRIEVAL_PROJECTOR = "retrieval-projector"
ENRICHMENT_WORKER = "enrichment-worker"
MAINTENANCE_SEARCH_RECORDER = "maintenance-search-recorder"

# Events a consumer gave up on after its bounded retries, kept for an operator: one subject per
# consumer, ``dlq.<durable>``, in a stream of their own (so EXO's 14-day age limit and its
# consumers' filters never touch them).
DLQ_STREAM = "EXO_DLQ"
DLQ_SUBJECTS = ["dlq.>"]


def dead_letter_subject(durable: str) -> str:
    return f"dlq.{durable}"


def indexed_subject(projector_durable: str) -> str:
    """Core NATS, outside the stream's ``exo.>`` so nothing keeps it: the memory versions a
    retrieval replica just made searchable, for the replicas that share its indexes (the same
    projector durable) to release their waiters."""
    return f"retrieval.indexed.{projector_durable}"


MSG_ID_HEADER = "Nats-Msg-Id"
CORRELATION_HEADER = "X-Correlation-Id"
