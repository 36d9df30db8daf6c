"""What jobs may use: the Postgres pool, the other services' clients and the runtime settings."""

from __future__ import annotations

from dataclasses import dataclass

from exocortex.core.clients.embedding import EmbeddingClient
from exocortex.core.clients.retrieval import RetrievalClient
from exocortex.core.db.pool import Pool
from exocortex.core.settings_cache import SettingsCache
from exocortex.maintenance.clients import IngestWriter, RetrievalAdmin


@dataclass
class Deps:
    pool: Pool
    retrieval: RetrievalClient
    retrieval_admin: RetrievalAdmin
    embedding: EmbeddingClient
    ingest: IngestWriter
    settings: SettingsCache
