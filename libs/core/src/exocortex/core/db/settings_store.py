"""The `settings` table: runtime-tunable key/value settings, stored as text.

Values are strings exactly as the API shows them; JSON-valued settings hold JSON text. Typed
parsing belongs to the caller that knows what a key means.
"""

from __future__ import annotations

import json
from typing import Any

import psycopg
from psycopg.rows import tuple_row

_METADATA_TAGS = (
    "benchmark-artifact,golden-queries,retrieval-regression,goal-progress,goal-progress-implicit"
)

DEFAULT_SETTINGS: dict[str, str] = {
    # Hybrid scoring and fusion.
    "scoring.vector_weight": "0.50",
    "scoring.fts_weight": "0.50",
    "scoring.recency_weight": "0.20",
    "scoring.frequency_weight": "0.10",
    "scoring.recency_decay": "0.05",
    "scoring.min_score": "0.15",
    "scoring.tag_boost": "0.10",
    "scoring.use_rrf": "true",
    "scoring.rrf_k": "5",
    "scoring.rrf_min_score": "0",
    "scoring.graph_weight": "0.05",
    "scoring.neighbour_weight": "0.5",
    "scoring.context_weight": "0",
    "scoring.rerank_weight": "0.5",
    "scoring.coverage_weight": "0",
    "scoring.dated_weight": "0.2",
    "scoring.expand_weight": "0",
    "scoring.feedback_weight": "0",
    "scoring.usefulness_weight": "0.05",
    "scoring.valence_weight": "0.05",
    "scoring.quality_weight": "0.10",
    "scoring.goal_gated_weight": "0.10",
    "scoring.keyword_boost": "2.0",
    # Embedding model.
    "embedding.model": "Xenova/all-MiniLM-L6-v2",
    "embedding.dimensions": "384",
    # Importance adjustment.
    "importance.auto_adjust": "true",
    "importance.boost_threshold": "5",
    "importance.decay_age_days": "30",
    # Deduplication.
    "dedup.enabled": "true",
    "dedup.hash_enabled": "true",
    "dedup.similarity_threshold": "0.85",
    "dedup.skip_insert_on_match": "true",
    "dedup.hash_normalize_whitespace": "true",
    "dedup.merge_enabled": "false",
    "dedup.merge_threshold": "0.75",
    "dedup.exempt_tags": "[]",
    "dedup.keep_variants": "true",
    "dedup.max_variants": "20",
    # Chunking and tagging.
    "chunking.enabled": "true",
    "chunking.max_length": "1500",
    "chunking.target_size": "500",
    "auto_tagging.enabled": "true",
    "tags.alias_map": json.dumps({"nextjs": "next.js", "next-js": "next.js", "reactjs": "react"}),
    # Enrichment (the asynchronous worker): entity, link, contradiction and goal thresholds.
    "enrichment.entity_min_confidence": "0.5",
    "enrichment.neighbour_limit": "10",
    "enrichment.relation_threshold": "0.75",
    "enrichment.relation_limit": "5",
    "enrichment.contradiction_threshold": "0.7",
    "enrichment.contradiction_negation_overlap": "0.6",
    "enrichment.goal_threshold": "0.55",
    "enrichment.context_vectors": "false",
    # Trash.
    "trash.auto_purge_days": "30",
    # Search.
    "search.query_expansion": "true",
    "search.expansion_max_terms": "15",
    "search.neighbour_window": "2",
    "search.neighbour_max_gap_minutes": "30",
    "search.neighbour_coherence_full": "0.02",
    "search.rerank_candidates": "20",
    "search.coverage_similarity": "0.5",
    "search.expand_seeds": "5",
    "search.expand_limit": "10",
    "search.feedback_seeds": "3",
    "search.feedback_mix": "1",
    "search.metadata_mode": "penalize",
    "search.metadata_penalty": "0.35",
    "search.metadata_tags": _METADATA_TAGS,
    # Benchmark artifacts.
    "benchmark.default_importance": "0.15",
    "benchmark.indexed": "false",
    "benchmark.chunking": "false",
    # Retrieval regression.
    "retrieval_regression.enabled": "true",
    "retrieval_regression.schedule": "15 6 * * *",
    "retrieval_regression.queries": "[]",
    "retrieval_regression.limit": "10",
    "retrieval_regression.min_overlap_at_10": "0.80",
    "retrieval_regression.max_avg_rank_shift": "3",
    "retrieval_regression.create_alert_memory": "true",
    # Consolidation, reports, backups.
    "consolidation.auto_enabled": "true",
    "sentinel.report_ttl_days": "30",
    "backup.max_count": "7",
}
"""Seeded by the initial migration (insert-if-missing), so a fresh database is fully configured.

Keys added later need their own migration that inserts them, and a changed default needs one that
updates only rows still at the old default (0002 did so for fusion); an operator's edited value is
never overwritten.
"""


async def load_settings(conn: psycopg.AsyncConnection[Any]) -> dict[str, str]:
    """All settings as a key → value mapping."""
    # An explicit row factory: callers' connections may yield dicts or tuples.
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute("SELECT key, value FROM settings ORDER BY key")
        rows = await cur.fetchall()
    return {str(key): str(value) for key, value in rows}


async def upsert_settings(conn: psycopg.AsyncConnection[Any], values: dict[str, str]) -> None:
    """Insert or replace the given settings; the caller owns the transaction."""
    if not values:
        return
    async with conn.cursor() as cur:
        await cur.executemany(
            """
            INSERT INTO settings (key, value, updated_at) VALUES (%s, %s, now())
            ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()
            """,
            list(values.items()),
        )
