"""The reference's settings through this version's schema: only the values its user chose."""

from __future__ import annotations

import json

from exocortex.core.domain import setting_schema
from exocortex.core.reference.values import Report

# Settings about the reference's own install (its model, its port, its schema): never applied.
INSTALL_SETTINGS = frozenset(
    {"embedding.model", "embedding.dimensions", "server.port", "schema_version"}
)
# The reference's defaults (written into every database it opens): a value equal to its default
# was not chosen by the user, so this version's own default is kept.
REFERENCE_DEFAULTS: dict[str, str] = {
    "scoring.vector_weight": "0.45", "scoring.fts_weight": "0.25",
    "scoring.recency_weight": "0.2", "scoring.frequency_weight": "0.1",
    "scoring.recency_decay": "0.05", "scoring.min_score": "0.15", "scoring.tag_boost": "0.1",
    "scoring.use_rrf": "true", "scoring.rrf_k": "60", "scoring.rrf_min_score": "0.001",
    "scoring.graph_weight": "0.1", "scoring.usefulness_weight": "0.05",
    "scoring.valence_weight": "0.05", "scoring.quality_weight": "0.1",
    "scoring.goal_gated_weight": "0.1", "scoring.keyword_boost": "2",
    "importance.auto_adjust": "true", "importance.boost_threshold": "5",
    "importance.decay_age_days": "30", "dedup.enabled": "true", "dedup.hash_enabled": "true",
    "dedup.similarity_threshold": "0.85", "dedup.candidate_pool": "200",
    "dedup.skip_insert_on_match": "true", "dedup.hash_normalize_whitespace": "true",
    "dedup.merge_enabled": "false", "dedup.merge_threshold": "0.75", "dedup.exempt_tags": "[]",
    "chunking.enabled": "true", "chunking.max_length": "1500", "chunking.target_size": "500",
    "auto_tagging.enabled": "true", "trash.auto_purge_days": "30",
    "search.query_expansion": "true", "search.expansion_max_terms": "15",
    "search.metadata_mode": "penalize", "search.metadata_penalty": "0.35",
    "search.metadata_tags": "benchmark-artifact,golden-queries,retrieval-regression,"
    "goal-progress,goal-progress-implicit",
    "tags.alias_map": '{"nextjs":"next.js","next-js":"next.js","reactjs":"react"}',
    "benchmark.default_importance": "0.15", "benchmark.indexed": "false",
    "benchmark.chunking": "false", "retrieval_regression.enabled": "true",
    "retrieval_regression.schedule": "15 6 * * *", "retrieval_regression.queries": "[]",
    "retrieval_regression.limit": "10", "retrieval_regression.min_overlap_at_10": "0.8",
    "retrieval_regression.max_avg_rank_shift": "3",
    "retrieval_regression.create_alert_memory": "true", "observability.log_events": "false",
    "consolidation.auto_enabled": "true", "sentinel.report_ttl_days": "30",
}  # fmt: skip


def settings_of(values: dict[str, str], report: Report) -> tuple[dict[str, str], dict[str, str]]:
    kept: dict[str, str] = {}
    ai: dict[str, str] = {}
    for key, value in sorted(values.items()):
        if key.startswith("ai."):
            if value:
                ai[key] = value
            continue
        if key in INSTALL_SETTINGS:
            report.add("settings", f"{key}: describes the reference's own install")
        elif key not in setting_schema.SCHEMA and not key.startswith(
            setting_schema.TAG_ALIAS_PREFIX
        ):
            report.add("settings", f"{key}: not a setting of this version")
        elif _same_value(REFERENCE_DEFAULTS.get(key), value):
            report.add("settings", f"{key}: the reference's default (this version's kept)")
        else:
            try:
                setting_schema.check(key, value)
            except setting_schema.SettingError as err:
                report.add("settings", f"{key}: refused by this version's schema ({err})")
                continue
            kept[key] = value
    return kept, ai


def _same_value(default: str | None, value: str) -> bool:
    if default is None:
        return False
    if default == value:
        return True
    try:
        return float(default) == float(value)
    except ValueError:
        pass
    try:
        return bool(json.loads(default) == json.loads(value))
    except json.JSONDecodeError:
        return False
