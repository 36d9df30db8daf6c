"""All SQL of the analytics reports. Each report is one statement that aggregates inside
Postgres and returns only the report's rows, never the memories themselves.

Every statement takes ``ns``: the namespaces the report covers (a ``text[]``), or NULL for every
namespace. A *memory* here is an active root row (not a chunk or variant); access counts live
in ``memory_usage`` (no row: never accessed).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import psycopg
from psycopg.rows import class_row
from psycopg_pool import AsyncConnectionPool

from exocortex.core.db.arrays import TextArray
from exocortex.maintenance.analytics.models import (
    AccessBucket,
    DecayCandidate,
    ProducerQuality,
    QualityDistribution,
    QualityPeriod,
    SearchMiss,
    Summary,
    TagEffectiveness,
)

Pool = AsyncConnectionPool[psycopg.AsyncConnection[dict[str, Any]]]
T = TypeVar("T")

_IN_SCOPE = "(%(ns)s::text[] IS NULL OR {alias}.namespace = ANY(%(ns)s::text[]))"
_MEMORIES = f"m.is_active AND m.parent_id IS NULL AND {_IN_SCOPE.format(alias='m')}"

# The seed's quality score (see retrieval's scoring.quality), in SQL over one memory row `m`,
# its access count `a` and its link count `l`.
_QUALITY = """(
    0.30 * m.importance
  + 0.25 * least(1.0, ln(1.0 + m.useful_count::float8) / ln(6.0::float8))
  + 0.15 * least(1.0, ln(1.0 + ({a})::float8) / ln(21.0::float8))
  + 0.15 * least(1.0, ({l})::float8 / 5.0)
  + 0.15 * exp(-0.02 * greatest(0.0,
        date_part('epoch', now() - m.created_at)::float8 / 86400.0))
)"""

# A miss's query as it is grouped: trimmed, lower case, inner whitespace collapsed, so
# "Deploy  Steps" and "deploy steps" are one query counted twice.
_MISS_KEY = "lower(regexp_replace(btrim(s.query), '\\s+', ' ', 'g'))"
_MISSES_IN_WINDOW = f"""
    s.created_at > now() - make_interval(days => %(days)s)
    AND {_IN_SCOPE.format(alias="s")}
"""

SUMMARY = f"""
SELECT count(*)::int AS total_active,
       coalesce(100.0 * count(*) FILTER (WHERE coalesce(u.access_count, 0) = 0)
                / nullif(count(*), 0), 0)::float8 AS never_accessed_pct,
       coalesce(100.0 * count(*) FILTER (WHERE m.useful_count > 0)
                / nullif(count(*), 0), 0)::float8 AS useful_pct,
       coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY coalesce(u.access_count, 0)),
                0)::float8 AS median_access_count
  FROM memories m LEFT JOIN memory_usage u ON u.memory_id = m.id
 WHERE {_MEMORIES}
"""

ACCESS_BUCKETS = ("0", "1-5", "6-20", "21-100", "100+")
ACCESS_DISTRIBUTION = f"""
SELECT CASE WHEN a = 0 THEN '0' WHEN a <= 5 THEN '1-5' WHEN a <= 20 THEN '6-20'
            WHEN a <= 100 THEN '21-100' ELSE '100+' END AS label,
       count(*)::int AS count
  FROM (SELECT coalesce(u.access_count, 0) AS a
          FROM memories m LEFT JOIN memory_usage u ON u.memory_id = m.id
         WHERE {_MEMORIES}) x
 GROUP BY 1
"""

TAG_EFFECTIVENESS = f"""
SELECT t.tag, count(*)::int AS memory_count, avg(m.useful_count)::float8 AS avg_useful_count
  FROM memory_tags t JOIN memories m ON m.id = t.memory_id
 WHERE {_MEMORIES}
 GROUP BY t.tag
HAVING count(*) >= %(min_memories)s
 ORDER BY avg_useful_count DESC, memory_count DESC, t.tag
 LIMIT %(limit)s
"""

# Tags that are probably one (nextjs / next.js, deploy / deploys): the original's tag cleanup
# rule, normalised edit distance similarity of at least 0.8 (and below 1) between two of the
# most used tags used at least twice; the less used one would merge into the other. Pairs whose
# lengths alone rule the similarity out are not compared, and levenshtein_less_equal stops
# once a pair is further apart than the rule allows.
TAG_HEALTH = f"""
WITH uses AS (
    SELECT t.tag, count(*)::int AS n
      FROM memory_tags t JOIN memories m ON m.id = t.memory_id
     WHERE {_MEMORIES}
     GROUP BY t.tag
), common AS (
    SELECT tag, n, length(tag) AS len FROM uses
     WHERE n >= %(min_uses)s ORDER BY n DESC, tag LIMIT %(max_tags)s
), pairs AS (
    SELECT a.tag AS from_tag, b.tag AS to_tag, a.n AS from_count, b.n AS to_count,
           1.0 - levenshtein_less_equal(
               a.tag, b.tag, floor(0.2 * greatest(a.len, b.len))::int
           )::float8 / greatest(a.len, b.len) AS similarity
      FROM common a JOIN common b
        ON (a.n < b.n OR (a.n = b.n AND a.tag > b.tag))
       AND abs(a.len - b.len) <= 0.2 * greatest(a.len, b.len)
), close_pairs AS (
    SELECT * FROM pairs WHERE similarity >= 0.8 AND similarity < 1.0
)
SELECT (SELECT count(*) FROM uses)::int AS total_tags,
       (SELECT count(*) FROM close_pairs)::int AS merge_count,
       coalesce((
           SELECT json_agg(json_build_object(
                      'from_tag', s.from_tag, 'to_tag', s.to_tag,
                      'similarity', round(s.similarity::numeric, 3),
                      'from_count', s.from_count, 'to_count', s.to_count)
                  ORDER BY s.similarity DESC, s.to_count DESC, s.from_tag)
             FROM (SELECT * FROM close_pairs
                    ORDER BY similarity DESC, to_count DESC, from_tag
                    LIMIT %(suggestions)s) s
       ), '[]'::json) AS suggestions
"""

# The producer column is chosen from this closed map, never from the caller's text.
PRODUCER_COLUMNS = {"model": "coalesce(m.model_id, m.model_name)", "agent": "m.agent"}
PRODUCER_QUALITY = f"""
SELECT {{column}} AS producer, count(*)::int AS memory_count,
       avg(m.useful_count)::float8 AS avg_useful_count
  FROM memories m
 WHERE {_MEMORIES} AND {{column}} IS NOT NULL
 GROUP BY 1
HAVING count(*) >= %(min_memories)s
 ORDER BY avg_useful_count DESC, memory_count DESC, producer
 LIMIT %(limit)s
"""

# Periods are counted over every memory created in them that is still active.
PERIOD_LABELS = {"month": "YYYY-MM", "week": 'IYYY-"W"IW'}
QUALITY_TREND = f"""
SELECT period, created, avg_useful, never_accessed_pct FROM (
    SELECT date_trunc(%(unit)s, m.created_at AT TIME ZONE 'UTC') AS start,
           to_char(date_trunc(%(unit)s, m.created_at AT TIME ZONE 'UTC'), %(label)s) AS period,
           count(*)::int AS created,
           avg(m.useful_count)::float8 AS avg_useful,
           (100.0 * count(*) FILTER (WHERE coalesce(u.access_count, 0) = 0)
            / count(*))::float8 AS never_accessed_pct
      FROM memories m LEFT JOIN memory_usage u ON u.memory_id = m.id
     WHERE {_MEMORIES}
     GROUP BY 1, 2
     ORDER BY 1 DESC
     LIMIT %(limit)s
) recent ORDER BY start
"""

# The score of every memory from one hash aggregate keyed by memory id: the memory's own row
# (its importance and usefulness terms and its age term), its access count and one row per
# link end all go through the same aggregate, so nothing is hashed twice (a link-count
# aggregate joined to the memories, then the access counts joined, cost 1.5x as much). The
# score is a column of the grouped `q`, so it is computed once per memory (a plain subquery is
# pulled up and its expression evaluated again by every aggregate that reads it). The terms
# are added in the order of `_QUALITY`, so the floats are the same.
_QUALITY_OWN = """
    0.30 * m.importance
  + 0.25 * least(1.0, ln(1.0 + m.useful_count::float8) / ln(6.0::float8))"""
_QUALITY_AGE = """0.15 * exp(-0.02 * greatest(0.0,
        date_part('epoch', now() - m.created_at)::float8 / 86400.0))"""
QUALITY_DISTRIBUTION = f"""
WITH parts AS (
    SELECT m.id, {_QUALITY_OWN} AS own, {_QUALITY_AGE} AS age, NULL::int AS accesses, 0 AS link
      FROM memories m
     WHERE {_MEMORIES}
    UNION ALL
    SELECT memory_id, NULL, NULL, access_count, 0 FROM memory_usage
    UNION ALL
    SELECT source_id, NULL, NULL, NULL, 1 FROM memory_links
    UNION ALL
    SELECT target_id, NULL, NULL, NULL, 1 FROM memory_links
), q AS (
    -- Ids without an own row (another namespace, archived) have no score.
    SELECT max(own)
           + 0.15 * least(1.0, ln(1.0 + coalesce(max(accesses), 0)::float8) / ln(21.0::float8))
           + 0.15 * least(1.0, sum(link)::float8 / 5.0)
           + max(age) AS quality
      FROM parts
     GROUP BY id
    HAVING count(own) > 0
), stats AS (
    -- One sort for the three percentiles.
    SELECT avg(quality) AS avg,
           percentile_cont(ARRAY[0.1, 0.5, 0.9]) WITHIN GROUP (ORDER BY quality) AS p,
           count(*) FILTER (WHERE quality >= 0.5) AS high_quality,
           count(*) FILTER (WHERE quality < 0.2) AS low_quality,
           count(*) AS total
      FROM q
)
SELECT coalesce(avg, 0)::float8 AS avg, coalesce(p[2], 0)::float8 AS median,
       coalesce(p[1], 0)::float8 AS p10, coalesce(p[3], 0)::float8 AS p90,
       high_quality::int, low_quality::int, total::int
  FROM stats
"""

QUALITY_WORK_MEM = "32MB"

# Every active row that is searched by its vector: roots and chunks (variants included).
EMBEDDING_MODELS = f"""
SELECT coalesce(m.embedding_model, '') AS model, (m.embedding IS NOT NULL) AS embedded,
       max(m.embedding_dim) AS dimensions, count(*)::int AS n
  FROM memories m
 WHERE m.is_active AND {_IN_SCOPE.format(alias="m")}
 GROUP BY 1, 2
"""

# What the importance job's decay step would lower: never accessed, older than the decay age,
# importance above 0.3, not pinned (1.0), and of low quality (under 0.2).
# The quality score without its link term (the links can only raise it).
_BASE_QUALITY = _QUALITY.replace("+ 0.15 * least(1.0, ({l})::float8 / 5.0)", "")

# What the importance job's decay would lower: never accessed, older than the decay age,
# importance above 0.3, not pinned (1.0), and of low quality (under 0.2). Links only raise the
# score, so rows already at 0.2 without them are dropped before links are counted, one
# index lookup per remaining row.
DECAY_PREVIEW = f"""
WITH c AS (
    SELECT m.id, m.namespace, m.importance, m.created_at,
           {_BASE_QUALITY.format(a="0")}::float8 AS base
      FROM memories m
      LEFT JOIN memory_usage u ON u.memory_id = m.id
     WHERE {_MEMORIES}
       AND coalesce(u.access_count, 0) = 0
       AND m.created_at < now() - make_interval(days => %(decay_age_days)s)
       AND m.importance > 0.3
       AND round(m.importance::numeric, 2) <> 1.0
), low AS (
    SELECT c.*, c.base + 0.15 * least(1.0, (
               (SELECT count(*) FROM memory_links l WHERE l.source_id = c.id)
             + (SELECT count(*) FROM memory_links l WHERE l.target_id = c.id))::float8 / 5.0
           ) AS quality
      FROM c WHERE c.base < 0.2
), ranked AS (
    SELECT low.id, low.namespace, low.importance, low.created_at, low.quality,
           count(*) OVER ()::int AS total
      FROM low
     WHERE low.quality < 0.2
     ORDER BY low.quality, low.created_at, low.id
     LIMIT %(limit)s
)
-- The content is read for the rows shown only (the rest comes from the narrow index).
SELECT r.id, r.namespace, left(full_row.content, 120) AS content, r.importance, r.created_at,
       r.quality, r.total
  FROM ranked r JOIN memories full_row ON full_row.id = r.id
 ORDER BY r.quality, r.created_at, r.id
"""

SEARCH_MISSES = f"""
SELECT {_MISS_KEY} AS query, count(*)::int AS count,
       coalesce(avg(s.max_score), 0)::float8 AS avg_max_score, max(s.created_at) AS last_seen
  FROM search_misses s
 WHERE {_MISSES_IN_WINDOW}
 GROUP BY 1
 ORDER BY count DESC, last_seen DESC, query
 LIMIT %(limit)s
"""

# Misses grouped into topics: each missed query's words are stemmed (English), each query joins
# the topic of its most missed stem (ties: more distinct queries, then alphabetical), and a
# topic is named by its most frequent surface word. A query with no word left after stemming
# (only stop words) is a topic of its own.
KNOWLEDGE_GAPS = f"""
WITH misses AS (
    SELECT {_MISS_KEY} AS q, count(*) AS n, max(s.created_at) AS last_seen
      FROM search_misses s
     WHERE {_MISSES_IN_WINDOW}
     GROUP BY 1
), words AS (
    SELECT DISTINCT misses.q, misses.n, w.word, st.stem
      FROM misses
     CROSS JOIN LATERAL regexp_split_to_table(misses.q, '[^[:alnum:]]+') AS w(word)
     CROSS JOIN LATERAL (
         SELECT (tsvector_to_array(to_tsvector('english', w.word)))[1] AS stem
     ) st
     WHERE length(w.word) > 2 AND st.stem IS NOT NULL
), stems AS (
    SELECT stem, sum(n) AS misses, count(DISTINCT q) AS queries,
           mode() WITHIN GROUP (ORDER BY word) AS label
      FROM words GROUP BY stem
), topic_of AS (
    SELECT DISTINCT ON (w.q) w.q, s.label AS topic
      FROM words w JOIN stems s USING (stem)
     ORDER BY w.q, s.misses DESC, s.queries DESC, s.stem
)
SELECT coalesce(t.topic, m.q) AS topic, sum(m.n)::int AS count,
       (array_agg(m.q ORDER BY m.n DESC, m.q))[1:%(queries_per_topic)s] AS queries,
       max(m.last_seen) AS last_seen
  FROM misses m LEFT JOIN topic_of t USING (q)
 GROUP BY 1
HAVING sum(m.n) >= %(min_count)s
 ORDER BY count DESC, last_seen DESC, topic
 LIMIT %(limit)s
"""


@dataclass(frozen=True, slots=True)
class TagHealthRow:
    total_tags: int
    merge_count: int
    suggestions: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class ModelCount:
    model: str
    embedded: bool
    dimensions: int | None
    n: int


@dataclass(frozen=True, slots=True)
class DecayRow:
    id: str
    namespace: str
    content: str
    importance: float
    created_at: datetime
    quality: float
    total: int

    def candidate(self) -> DecayCandidate:
        return DecayCandidate(
            id=self.id,
            namespace=self.namespace,
            content=self.content,
            importance=self.importance,
            quality=self.quality,
            created_at=self.created_at,
        )


@dataclass(frozen=True, slots=True)
class GapRow:
    topic: str
    count: int
    queries: list[str]
    last_seen: datetime


class AnalyticsRepository:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def _all(self, cls: type[T], sql: str, params: dict[str, Any]) -> list[T]:
        async with (
            self._pool.connection() as conn,
            conn.cursor(row_factory=class_row(cls)) as cur,
        ):
            await cur.execute(sql, params)
            return await cur.fetchall()

    async def _one(self, cls: type[T], sql: str, params: dict[str, Any]) -> T:
        rows = await self._all(cls, sql, params)
        return rows[0]

    @staticmethod
    def _ns(namespaces: list[str] | None) -> TextArray | None:
        return None if namespaces is None else TextArray(namespaces)

    async def summary(self, namespaces: list[str] | None) -> Summary:
        return await self._one(Summary, SUMMARY, {"ns": self._ns(namespaces)})

    async def access_distribution(self, namespaces: list[str] | None) -> list[AccessBucket]:
        found = await self._all(AccessBucket, ACCESS_DISTRIBUTION, {"ns": self._ns(namespaces)})
        counts = {b.label: b.count for b in found}
        return [AccessBucket(label, counts.get(label, 0)) for label in ACCESS_BUCKETS]

    async def tag_effectiveness(
        self, namespaces: list[str] | None, limit: int, min_memories: int
    ) -> list[TagEffectiveness]:
        params = {"ns": self._ns(namespaces), "limit": limit, "min_memories": min_memories}
        return await self._all(TagEffectiveness, TAG_EFFECTIVENESS, params)

    async def tag_health(
        self, namespaces: list[str] | None, *, min_uses: int, max_tags: int, suggestions: int
    ) -> TagHealthRow:
        params = {
            "ns": self._ns(namespaces),
            "min_uses": min_uses,
            "max_tags": max_tags,
            "suggestions": suggestions,
        }
        return await self._one(TagHealthRow, TAG_HEALTH, params)

    async def setting(self, key: str) -> str | None:
        async with self._pool.connection() as conn:
            cur = await conn.execute("SELECT value FROM settings WHERE key = %s", (key,))
            row = await cur.fetchone()
        return None if row is None else str(row["value"])

    async def producer_quality(
        self, namespaces: list[str] | None, by: str, limit: int, min_memories: int
    ) -> list[ProducerQuality]:
        sql = PRODUCER_QUALITY.format(column=PRODUCER_COLUMNS[by])
        params = {"ns": self._ns(namespaces), "limit": limit, "min_memories": min_memories}
        return await self._all(ProducerQuality, sql, params)

    async def quality_trend(
        self, namespaces: list[str] | None, unit: str, limit: int
    ) -> list[QualityPeriod]:
        params = {
            "ns": self._ns(namespaces),
            "unit": unit,
            "label": PERIOD_LABELS[unit],
            "limit": limit,
        }
        return await self._all(QualityPeriod, QUALITY_TREND, params)

    async def quality_distribution(self, namespaces: list[str] | None) -> QualityDistribution:
        # The planner cannot foresee how many memories the aggregate groups (about 150 bytes
        # each), and at the default 4 MB it spills to disk from about 50,000 memories.
        async with (
            self._pool.connection() as conn,
            conn.transaction(),
            conn.cursor(row_factory=class_row(QualityDistribution)) as cur,
        ):
            await cur.execute(f"SET LOCAL work_mem = '{QUALITY_WORK_MEM}'")
            await cur.execute(QUALITY_DISTRIBUTION, {"ns": self._ns(namespaces)})
            row = await cur.fetchone()
        assert row is not None  # an aggregate without GROUP BY always yields one row
        return row

    async def embedding_models(self, namespaces: list[str] | None) -> list[ModelCount]:
        return await self._all(ModelCount, EMBEDDING_MODELS, {"ns": self._ns(namespaces)})

    async def decay_candidates(
        self, namespaces: list[str] | None, decay_age_days: int, limit: int
    ) -> list[DecayRow]:
        params = {"ns": self._ns(namespaces), "decay_age_days": decay_age_days, "limit": limit}
        return await self._all(DecayRow, DECAY_PREVIEW, params)

    async def search_misses(
        self, namespaces: list[str] | None, days: int, limit: int
    ) -> list[SearchMiss]:
        params = {"ns": self._ns(namespaces), "days": days, "limit": limit}
        return await self._all(SearchMiss, SEARCH_MISSES, params)

    async def knowledge_gaps(
        self,
        namespaces: list[str] | None,
        *,
        days: int,
        min_count: int,
        limit: int,
        queries_per_topic: int,
    ) -> list[GapRow]:
        params = {
            "ns": self._ns(namespaces),
            "days": days,
            "min_count": min_count,
            "limit": limit,
            "queries_per_topic": queries_per_topic,
        }
        return await self._all(GapRow, KNOWLEDGE_GAPS, params)
