"""What jobs may use: the Postgres pool, the other services' clients and the runtime settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool

from exocortex.core.clients.embedding import EmbeddingClient
from exocortex.core.clients.retrieval import RetrievalClient
from exocortex.core.settings_cache import SettingsCache
from exocortex.maintenance.clients import IngestWriter, RetrievalAdmin

Pool = AsyncConnectionPool[psycopg.AsyncConnection[dict[str, Any]]]


@dataclass
class Deps:
    pool: Pool
    retrieval: RetrievalClient
    retrieval_admin: RetrievalAdmin
    embedding: EmbeddingClient
    ingest: IngestWriter
    settings: SettingsCache
