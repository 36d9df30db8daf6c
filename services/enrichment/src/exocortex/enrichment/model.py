"""What enrichment takes, in domain terms (no protobuf)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MemoryChange:
    """A memory event: which memory, and what happened to it (stored, updated, ...)."""

    memory_id: str
    change: str
