"""The type and range of every runtime setting, declared once.

Settings are stored as text and read by several services; one bad value (``nan``, ``inf``, a
negative pool size, a typo in a key) would otherwise break every later search or write that
reads it. The gateway checks a PATCH /api/settings against this schema and the ingest Admin
service checks it again before writing (it is the only writer). A key not declared here is
refused, so every setting the product reads has a type.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from exocortex.core.db.settings_store import DEFAULT_SETTINGS

MAX_TEXT_CHARS = 100_000


class SettingError(ValueError):
    """A value (or key) the schema refuses; ``key`` names the setting."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key
        self.message = message


@dataclass(frozen=True)
class Spec:
    """``kind`` is one of boolean, number, integer, choice, text, url, cron, json-list,
    json-object."""

    kind: str
    low: float = -math.inf
    high: float = math.inf
    choices: tuple[str, ...] = ()
    max_chars: int = MAX_TEXT_CHARS

    def describe(self) -> str:
        if self.kind in ("number", "integer"):
            return f"{self.kind} from {self.low:g} to {self.high:g}"
        if self.kind == "choice":
            return "one of " + ", ".join(repr(c) for c in self.choices)
        return self.kind


BOOLEAN = Spec("boolean")
FRACTION = Spec("number", 0, 1)
WEIGHT = Spec("number", 0, 10)
DAYS = Spec("integer", 0, 36_500)


def _int(low: int, high: int) -> Spec:
    return Spec("integer", low, high)


SCHEMA: dict[str, Spec] = {
    "scoring.vector_weight": WEIGHT,
    "scoring.fts_weight": WEIGHT,
    "scoring.recency_weight": WEIGHT,
    "scoring.frequency_weight": WEIGHT,
    "scoring.recency_decay": WEIGHT,
    "scoring.min_score": FRACTION,
    "scoring.tag_boost": WEIGHT,
    "scoring.use_rrf": BOOLEAN,
    "scoring.rrf_k": Spec("number", 1, 1000),
    "scoring.rrf_min_score": FRACTION,
    "scoring.graph_weight": WEIGHT,
    "scoring.neighbour_weight": WEIGHT,
    "scoring.context_weight": WEIGHT,
    "scoring.rerank_weight": WEIGHT,
    "search.rerank_candidates": _int(0, 100),
    "scoring.coverage_weight": WEIGHT,
    "scoring.dated_weight": WEIGHT,
    "scoring.expand_weight": WEIGHT,
    "search.expand_seeds": _int(0, 50),
    "search.expand_limit": _int(0, 100),
    "scoring.feedback_weight": WEIGHT,
    "search.feedback_seeds": _int(0, 20),
    "search.feedback_mix": WEIGHT,
    "search.coverage_similarity": Spec("number", 0, 0.99),
    "scoring.usefulness_weight": WEIGHT,
    "scoring.valence_weight": WEIGHT,
    "scoring.quality_weight": WEIGHT,
    "scoring.goal_gated_weight": WEIGHT,
    "scoring.keyword_boost": Spec("number", 0, 100),
    "embedding.model": Spec("text", max_chars=200),
    "embedding.dimensions": _int(1, 8192),
    "importance.auto_adjust": BOOLEAN,
    "importance.boost_threshold": _int(0, 1_000_000),
    "importance.decay_age_days": DAYS,
    "dedup.enabled": BOOLEAN,
    "dedup.hash_enabled": BOOLEAN,
    "dedup.similarity_threshold": FRACTION,
    "dedup.skip_insert_on_match": BOOLEAN,
    "dedup.hash_normalize_whitespace": BOOLEAN,
    "dedup.merge_enabled": BOOLEAN,
    "dedup.merge_threshold": FRACTION,
    "dedup.exempt_tags": Spec("json-list"),
    "dedup.keep_variants": BOOLEAN,
    "dedup.max_variants": _int(0, 1000),
    "chunking.enabled": BOOLEAN,
    "chunking.max_length": _int(50, 1_000_000),
    "chunking.target_size": _int(50, 1_000_000),
    "auto_tagging.enabled": BOOLEAN,
    "tags.alias_map": Spec("json-object"),
    "enrichment.entity_min_confidence": FRACTION,
    "enrichment.neighbour_limit": _int(0, 1000),
    "enrichment.relation_threshold": FRACTION,
    "enrichment.relation_limit": _int(0, 1000),
    "enrichment.contradiction_threshold": FRACTION,
    "enrichment.contradiction_negation_overlap": FRACTION,
    "enrichment.goal_threshold": FRACTION,
    "enrichment.context_vectors": BOOLEAN,
    "trash.auto_purge_days": DAYS,
    "search.query_expansion": BOOLEAN,
    "search.expansion_max_terms": _int(0, 1000),
    "search.neighbour_window": _int(0, 100),
    "search.neighbour_max_gap_minutes": Spec("number", 0, 525_600),
    "search.neighbour_coherence_full": Spec("number", 0, 1),
    "search.metadata_mode": Spec("choice", choices=("penalize", "exclude", "include")),
    "search.metadata_penalty": FRACTION,
    "search.metadata_tags": Spec("text", max_chars=10_000),
    "benchmark.default_importance": FRACTION,
    "benchmark.indexed": BOOLEAN,
    "benchmark.chunking": BOOLEAN,
    "retrieval_regression.enabled": BOOLEAN,
    "retrieval_regression.schedule": Spec("cron", max_chars=100),
    "retrieval_regression.queries": Spec("json-list"),
    "retrieval_regression.limit": _int(1, 100),
    "retrieval_regression.min_overlap_at_10": FRACTION,
    "retrieval_regression.max_avg_rank_shift": Spec("number", 0, 1000),
    "retrieval_regression.create_alert_memory": BOOLEAN,
    "consolidation.auto_enabled": BOOLEAN,
    "sentinel.report_ttl_days": DAYS,
    "backup.max_count": _int(1, 1000),
    # The chat's LLM provider; empty clears a value (the chat then uses its default).
    "ai.provider": Spec("choice", choices=("", "anthropic", "openai")),
    "ai.model": Spec("text", max_chars=200),
    "ai.api_key": Spec("text", max_chars=1000),
    "ai.base_url": Spec("url", max_chars=2048),
}

# Settings of the original product that this one does not have, each with the reason a PATCH
# naming it is refused with (a migration removed their rows).
REMOVED: dict[str, str] = {
    "dedup.candidate_pool": (
        "was removed: semantic dedup searches the vector index over the whole namespace, so "
        "there is no pool of recent memories to size"
    ),
    "observability.log_events": (
        "was removed: each service logs its events as structured lines and counts them in its "
        "metrics; set EXO_LOG_LEVEL=DEBUG (environment) for more"
    ),
    "server.port": (
        "was removed: a port is chosen where the stack starts (exo up -p, EXO_GATEWAY_PORT); a "
        "stored value could not move a running server"
    ),
}

# `tag_alias.<from>`: one tag alias per key, beside the `tags.alias_map` object (both are read
# by core.domain.tags.alias_map); an empty value turns the alias off.
TAG_ALIAS_PREFIX = "tag_alias."
TAG_ALIAS = Spec("text", max_chars=200)
MAX_TAG_ALIAS_KEY_CHARS = 200

# Every seeded setting has a declared type (checked again by the unit tests).
assert set(DEFAULT_SETTINGS) <= set(SCHEMA), set(DEFAULT_SETTINGS) - set(SCHEMA)


def _number(key: str, spec: Spec, value: str) -> None:
    try:
        number = int(value) if spec.kind == "integer" else float(value)
    except ValueError:
        raise SettingError(key, f"must be an {spec.describe()}") from None
    if not math.isfinite(number) or not spec.low <= number <= spec.high:
        raise SettingError(key, f"must be a finite {spec.describe()}")


_CRON_FIELD = re.compile(r"[0-9A-Za-z*/,?#-]+")


def _cron(key: str, value: str) -> None:
    """A cron expression (UTC: five fields, or six with the seconds last) or empty (off). The
    scheduler checks it again with croniter; this keeps obvious garbage out of the store."""
    fields = value.split()
    if value.strip() and (
        len(fields) not in (5, 6) or not all(_CRON_FIELD.fullmatch(f) for f in fields)
    ):
        raise SettingError(
            key, "must be a cron expression (5 fields, or 6 with seconds), or empty for off"
        )


def _url(key: str, value: str) -> None:
    if not value:
        return
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SettingError(key, "must be an http:// or https:// URL (or empty for the default)")


def _spec(key: str) -> Spec:
    spec = SCHEMA.get(key)
    if spec is not None:
        return spec
    if key in REMOVED:
        raise SettingError(key, REMOVED[key])
    if key.startswith(TAG_ALIAS_PREFIX):
        alias = key.removeprefix(TAG_ALIAS_PREFIX)
        if not alias.strip() or len(key) > MAX_TAG_ALIAS_KEY_CHARS or not alias.isprintable():
            raise SettingError(
                key,
                f"names no tag: tag_alias.<tag> takes a printable tag of at most "
                f"{MAX_TAG_ALIAS_KEY_CHARS - len(TAG_ALIAS_PREFIX)} characters",
            )
        return TAG_ALIAS
    raise SettingError(key, "is not a setting (GET /api/settings lists them)")


def check(key: str, value: str) -> None:
    """Raises ``SettingError`` unless ``key`` is a declared setting and ``value`` fits it."""
    spec = _spec(key)
    if "\x00" in value:
        raise SettingError(key, "contains a NUL character")
    if len(value) > spec.max_chars:
        raise SettingError(key, f"is longer than {spec.max_chars} characters")
    if spec.kind == "boolean" and value not in ("true", "false"):
        raise SettingError(key, "must be 'true' or 'false'")
    elif spec.kind in ("number", "integer"):
        _number(key, spec, value)
    elif spec.kind == "choice" and value not in spec.choices:
        raise SettingError(key, f"must be {spec.describe()}")
    elif spec.kind == "url":
        _url(key, value)
    elif spec.kind == "cron":
        _cron(key, value)
    elif spec.kind.startswith("json"):
        _json(key, spec, value)


def _json(key: str, spec: Spec, value: str) -> None:
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        raise SettingError(key, f"must be a {spec.kind.replace('-', ' ')}") from None
    expected = list if spec.kind == "json-list" else dict
    if not isinstance(parsed, expected):
        raise SettingError(key, f"must be a {spec.kind.replace('-', ' ')}")


def check_all(values: Mapping[str, str]) -> None:
    for key, value in values.items():
        check(key, value)
