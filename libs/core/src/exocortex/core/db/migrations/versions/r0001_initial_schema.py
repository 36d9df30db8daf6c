"""Initial schema: the whole Exocortex data model.

Revision ID: 0001
Revises:
Create Date: 2026-01-01

Plain DDL on purpose: this file is the readable reference of the schema (see docs/data-model.md).
IDs are ULID text. Embeddings are float32 little-endian bytea with the model fingerprint beside
them, so a vector index can be rebuilt from Postgres without re-embedding.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from exocortex.core.db.settings_store import DEFAULT_SETTINGS

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES_IN_DROP_ORDER = (
    "outbox",
    "job_runs",
    "observability_counters",
    "retrieval_regression_runs",
    "retrieval_regression_baselines",
    "settings",
    "contradictions",
    "consolidations",
    "search_misses",
    "co_retrievals",
    "search_impressions",
    "access_log",
    "goal_links",
    "goal_milestones",
    "goals",
    "memory_links",
    "memory_entities",
    "entity_relationships",
    "entity_tags",
    "entities",
    "memory_tags",
    "memories",
)

MEMORIES = """
CREATE TABLE memories (
    id                text PRIMARY KEY,
    namespace         text NOT NULL DEFAULT 'default',
    content           text NOT NULL,
    content_type      text NOT NULL DEFAULT 'text',
    source            text NOT NULL DEFAULT 'api',
    source_uri        text,
    importance        double precision NOT NULL DEFAULT 0.5
                      CONSTRAINT ck_memories_importance CHECK (importance BETWEEN 0 AND 1),
    valence           double precision NOT NULL DEFAULT 0
                      CONSTRAINT ck_memories_valence CHECK (valence BETWEEN -1 AND 1),
    is_active         boolean NOT NULL DEFAULT true,
    is_metadata       boolean NOT NULL DEFAULT false,
    -- chunks point at their root; deleting the root deletes its chunks
    parent_id         text REFERENCES memories (id) ON DELETE CASCADE,
    chunk_index       integer,
    -- consolidation lineage, kept apart from chunking so sources are never cascade-deleted
    consolidated_into text REFERENCES memories (id) ON DELETE SET NULL,
    superseded_by     text REFERENCES memories (id) ON DELETE SET NULL,
    content_hash      text,
    keywords          text NOT NULL DEFAULT '',
    embedding         bytea,
    embedding_model   text,
    embedding_dim     integer,
    access_count      integer NOT NULL DEFAULT 0,
    useful_count      integer NOT NULL DEFAULT 0,
    last_accessed_at  timestamptz,
    expires_at        timestamptz,
    provider          text,
    model_id          text,
    model_name        text,
    agent             text,
    session_id        text,
    conversation_id   text,
    metadata          jsonb NOT NULL DEFAULT '{}',
    enrichment_status text NOT NULL DEFAULT 'pending'
                      CONSTRAINT ck_memories_enrichment_status
                      CHECK (enrichment_status IN ('pending', 'done', 'skipped')),
    enriched_at       timestamptz,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    version           bigint NOT NULL DEFAULT 1
)
"""

MEMORY_INDEXES = """
-- Race-proof backstop for hash dedup: at most one active root per (namespace, type, hash).
CREATE UNIQUE INDEX uq_memories_active_root_hash
    ON memories (namespace, content_type, content_hash)
    WHERE is_active AND parent_id IS NULL AND content_hash IS NOT NULL;
CREATE INDEX ix_memories_namespace_created_at ON memories (namespace, created_at);
CREATE INDEX ix_memories_namespace_updated_at ON memories (namespace, updated_at);
CREATE INDEX ix_memories_content_type ON memories (content_type);
CREATE INDEX ix_memories_source ON memories (source);
CREATE INDEX ix_memories_importance ON memories (importance);
CREATE INDEX ix_memories_is_metadata ON memories (is_metadata);
CREATE INDEX ix_memories_provider ON memories (provider);
CREATE INDEX ix_memories_model_id ON memories (model_id);
CREATE INDEX ix_memories_session_id ON memories (session_id);
CREATE INDEX ix_memories_expires_at ON memories (expires_at);
CREATE INDEX ix_memories_parent_id ON memories (parent_id);
CREATE INDEX ix_memories_consolidated_into ON memories (consolidated_into);
CREATE INDEX ix_memories_superseded_by ON memories (superseded_by);

CREATE TABLE memory_tags (
    memory_id text NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    tag       text NOT NULL,
    PRIMARY KEY (memory_id, tag)
);
CREATE INDEX ix_memory_tags_tag ON memory_tags (tag);
"""

ENTITIES = """
CREATE TABLE entities (
    id         text PRIMARY KEY,
    namespace  text NOT NULL DEFAULT 'default',
    name       text NOT NULL,
    type       text NOT NULL DEFAULT 'concept'
               CONSTRAINT ck_entities_type
               CHECK (type IN ('person', 'project', 'technology', 'organization', 'concept')),
    aliases    jsonb NOT NULL DEFAULT '[]',
    metadata   jsonb NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
-- One entity per name (case-insensitive) per namespace, so concurrent extractors cannot fork it.
CREATE UNIQUE INDEX uq_entities_namespace_lower_name ON entities (namespace, lower(name));

CREATE TABLE entity_tags (
    entity_id text NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    tag       text NOT NULL,
    PRIMARY KEY (entity_id, tag)
);

CREATE TABLE entity_relationships (
    id               text PRIMARY KEY,
    source_entity_id text NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    target_entity_id text NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    relationship     text NOT NULL,
    confidence       double precision NOT NULL DEFAULT 0.7,
    memory_id        text REFERENCES memories (id) ON DELETE SET NULL,
    context          text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT uq_entity_relationships UNIQUE (source_entity_id, target_entity_id, relationship)
);
CREATE INDEX ix_entity_relationships_target ON entity_relationships (target_entity_id);
CREATE INDEX ix_entity_relationships_memory ON entity_relationships (memory_id);

CREATE TABLE memory_entities (
    memory_id text NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    entity_id text NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    relevance double precision NOT NULL DEFAULT 0.5,
    PRIMARY KEY (memory_id, entity_id)
);
CREATE INDEX ix_memory_entities_entity_id ON memory_entities (entity_id);
"""

LINKS = """
CREATE TABLE memory_links (
    source_id  text NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    target_id  text NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    link_type  text NOT NULL DEFAULT 'related'
               CONSTRAINT ck_memory_links_link_type
               CHECK (link_type IN ('related', 'elaborates', 'contradicts', 'supersedes',
                                    'supports', 'derived_from')),
    strength   double precision NOT NULL DEFAULT 0.5
               CONSTRAINT ck_memory_links_strength CHECK (strength BETWEEN 0 AND 1),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source_id, target_id)
);
CREATE INDEX ix_memory_links_target_id ON memory_links (target_id);
"""

GOALS = """
CREATE TABLE goals (
    id              text PRIMARY KEY,
    namespace       text NOT NULL DEFAULT 'default',
    title           text NOT NULL,
    description     text,
    status          text NOT NULL DEFAULT 'active'
                    CONSTRAINT ck_goals_status
                    CHECK (status IN ('active', 'completed', 'stalled', 'abandoned')),
    priority        text NOT NULL DEFAULT 'medium'
                    CONSTRAINT ck_goals_priority
                    CHECK (priority IN ('low', 'medium', 'high', 'critical')),
    deadline        timestamptz,
    metadata        jsonb NOT NULL DEFAULT '{}',
    completed_at    timestamptz,
    embedding       bytea,
    embedding_model text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ix_goals_namespace_status ON goals (namespace, status);

CREATE TABLE goal_milestones (
    id           text PRIMARY KEY,
    goal_id      text NOT NULL REFERENCES goals (id) ON DELETE CASCADE,
    title        text NOT NULL,
    status       text NOT NULL DEFAULT 'pending'
                 CONSTRAINT ck_goal_milestones_status
                 CHECK (status IN ('pending', 'in_progress', 'completed')),
    sort_order   integer NOT NULL,
    deadline     timestamptz,
    completed_at timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ix_goal_milestones_goal_order ON goal_milestones (goal_id, sort_order);

CREATE TABLE goal_links (
    goal_id    text NOT NULL REFERENCES goals (id) ON DELETE CASCADE,
    memory_id  text NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    relevance  double precision NOT NULL,
    kind       text NOT NULL DEFAULT 'implicit'
               CONSTRAINT ck_goal_links_kind CHECK (kind IN ('explicit', 'implicit')),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (goal_id, memory_id)
);
CREATE INDEX ix_goal_links_memory_id ON goal_links (memory_id);
"""

USAGE = """
CREATE TABLE access_log (
    id          bigserial PRIMARY KEY,
    memory_id   text NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    query       text,
    kind        text NOT NULL DEFAULT 'search',
    accessed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ix_access_log_memory_id ON access_log (memory_id);

-- Implicit usefulness: a fetch within 5 minutes of being served in results counts once.
CREATE TABLE search_impressions (
    memory_id text PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    served_at timestamptz NOT NULL
);

CREATE TABLE co_retrievals (
    id           bigserial PRIMARY KEY,
    namespace    text,
    query_hash   text NOT NULL,
    memory_ids   text[] NOT NULL,
    result_count integer NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ix_co_retrievals_created_at ON co_retrievals (created_at);

CREATE TABLE search_misses (
    id           bigserial PRIMARY KEY,
    namespace    text,
    query        text NOT NULL,
    result_count integer NOT NULL,
    max_score    double precision,
    filters      jsonb NOT NULL DEFAULT '{}',
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ix_search_misses_created_at ON search_misses (created_at);
"""

CURATION = """
CREATE TABLE consolidations (
    id              text PRIMARY KEY,
    summary_id      text REFERENCES memories (id) ON DELETE SET NULL,
    source_ids      text[] NOT NULL,
    strategy        text NOT NULL,
    memories_merged integer NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE contradictions (
    id          text PRIMARY KEY,
    memory_a_id text NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    memory_b_id text NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    description text NOT NULL,
    kind        text,
    score       double precision,
    status      text NOT NULL DEFAULT 'pending'
                CONSTRAINT ck_contradictions_status
                CHECK (status IN ('pending', 'resolved', 'dismissed')),
    resolution  text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT uq_contradictions_pair UNIQUE (memory_a_id, memory_b_id)
);
CREATE INDEX ix_contradictions_memory_b ON contradictions (memory_b_id);
CREATE INDEX ix_contradictions_status ON contradictions (status);
"""

OPERATIONS = """
CREATE TABLE settings (
    key        text PRIMARY KEY,
    value      text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE retrieval_regression_baselines (
    query      text PRIMARY KEY,
    namespace  text,
    top_ids    text[] NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE retrieval_regression_runs (
    id             bigserial PRIMARY KEY,
    run_group_id   text NOT NULL,
    query          text,
    baseline_ids   text[],
    current_ids    text[],
    overlap_at_10  double precision,
    avg_rank_shift double precision,
    exact_order    boolean,
    alert          boolean,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ix_retrieval_regression_runs_group ON retrieval_regression_runs (run_group_id);

CREATE TABLE observability_counters (
    key        text PRIMARY KEY,
    value      bigint NOT NULL DEFAULT 0,
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE job_runs (
    id          bigserial PRIMARY KEY,
    job         text NOT NULL,
    started_at  timestamptz NOT NULL,
    finished_at timestamptz,
    status      text NOT NULL
                CONSTRAINT ck_job_runs_status CHECK (status IN ('running', 'succeeded', 'failed')),
    dry_run     boolean NOT NULL DEFAULT false,
    report      jsonb,
    error       text
);
CREATE INDEX ix_job_runs_job_started_at ON job_runs (job, started_at);

-- Domain events written in the same transaction as the change, relayed to JetStream.
CREATE TABLE outbox (
    id           bigserial PRIMARY KEY,
    subject      text NOT NULL,
    payload      bytea NOT NULL,
    headers      jsonb NOT NULL DEFAULT '{}',
    created_at   timestamptz NOT NULL DEFAULT now(),
    published_at timestamptz
);
CREATE INDEX ix_outbox_unpublished ON outbox (id) WHERE published_at IS NULL;
"""


def upgrade() -> None:
    for ddl in (MEMORIES, MEMORY_INDEXES, ENTITIES, LINKS, GOALS, USAGE, CURATION, OPERATIONS):
        op.execute(ddl)
    seed_settings(DEFAULT_SETTINGS)


def seed_settings(values: dict[str, str]) -> None:
    """Insert settings that are missing; values an operator already changed stay as they are."""
    op.get_bind().execute(
        sa.text(
            "INSERT INTO settings (key, value) VALUES (:key, :value) ON CONFLICT (key) DO NOTHING"
        ),
        [{"key": key, "value": value} for key, value in values.items()],
    )


def downgrade() -> None:
    for table in TABLES_IN_DROP_ORDER:
        op.execute(f"DROP TABLE IF EXISTS {table} CASCADE")
