"""The full backup as JSON lines: every section of the store (see ``export_repository``).
Embeddings are left out unless asked for (they can be recomputed; the model fingerprint is
kept); secret settings are masked."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from exocortex.core import scope
from exocortex.core.db.pool import Pool
from exocortex.core.domain.secrets import mask_settings
from exocortex.retrieval.reads import export_repository

DEFAULT_BATCH = 500
MAX_BATCH = 5_000


def _default(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, bytes | memoryview):
        return None
    raise TypeError(f"cannot serialise {type(value).__name__}")


def _with_embedding(row: dict[str, Any]) -> dict[str, Any]:
    """The row's embedding as base64 of its float32 bytes, beside its ``embedding_model``
    fingerprint (left out when the row has none)."""
    vector = row.pop("embedding", None)
    if vector is not None:
        row["embedding"] = base64.b64encode(bytes(vector)).decode()
    return row


def to_json(row: dict[str, Any]) -> str:
    return json.dumps(row, default=_default, ensure_ascii=False, separators=(",", ":"))


class ExportService:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def batches(
        self, namespace: str, batch_size: int, *, embeddings: bool = False
    ) -> AsyncIterator[tuple[str, list[str]]]:
        """(section, items) in section order; every section appears at least once. A caller
        limited to some namespaces exports one of them (the one named, or their only one)."""
        namespace = scope.require(namespace) if namespace else scope.default_namespace() or ""
        size = batch_size if 0 < batch_size <= MAX_BATCH else DEFAULT_BATCH
        async for section, rows in export_repository.stream(
            self._pool, namespace, size, embeddings=embeddings
        ):
            if embeddings and section == "memories":
                rows = [_with_embedding(r) for r in rows]
            if section == "settings":
                yield section, [json.dumps(mask_settings(rows[0]), ensure_ascii=False)]
            else:
                yield section, [to_json(r) for r in rows]
