"""Index documents for tests of the index engines, with defaults for what a test leaves out."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from exocortex.indexes.base import IndexDocument


def index_document(memory_id: str, **overrides: Any) -> IndexDocument:
    """A plain text memory in namespace "n", created now; keyword arguments override."""
    fields: dict[str, Any] = {
        "memory_id": memory_id,
        "version": 1,
        "namespace": "n",
        "content_type": "text",
        "source": "api",
        "tags": (),
        "created_at": datetime.now(UTC),
        "importance": 0.5,
        "is_metadata": False,
        **overrides,
    }
    return IndexDocument(**fields)
