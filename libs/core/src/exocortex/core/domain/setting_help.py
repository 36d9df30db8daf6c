"""What each runtime setting does, in a sentence a person changing it can act on: shown beside
the setting by `GET /api/settings/schema` and the dashboard's Settings page. Settings that
work together share one sentence. docs/settings.md gives the same sentences in its tables (a
test keeps them equal)."""

from __future__ import annotations

_TOGETHER: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        ("scoring.use_rrf",),
        (
            "Reciprocal rank fusion of the vector, keyword and graph lists; false: the weighted "
            'average ("legacy" mode)'
        ),
    ),
    (
        ("scoring.rrf_k",),
        "RRF's k: smaller lets the top of each list count more",
    ),
    (
        ("scoring.rrf_min_score",),
        (
            "RRF mode: results scoring below this are dropped when the query gives no min_score "
            "(0 keeps every scored result; the original's value was 0.001)"
        ),
    ),
    (
        ("scoring.min_score",),
        "Legacy mode's threshold when the query gives none",
    ),
    (
        ("scoring.vector_weight", "scoring.fts_weight", "scoring.graph_weight"),
        "Weight of the vector, keyword and graph lists in fusion (and in the legacy average)",
    ),
    (
        ("scoring.keyword_boost",),
        (
            "Weight of a match in a memory's keywords against one in its content, in the keyword "
            "index's BM25 (tantivy; Meilisearch keeps its own attribute order)"
        ),
    ),
    (
        ("scoring.recency_weight", "scoring.recency_decay"),
        ("Boost for recent memories, and how fast it decays with age (slower for important ones)"),
    ),
    (
        (
            "scoring.frequency_weight",
            "scoring.usefulness_weight",
            "scoring.valence_weight",
            "scoring.quality_weight",
            "scoring.goal_gated_weight",
        ),
        (
            "The other boosts: access count, times found useful, strength of feeling, memory "
            "quality, relevance to an active goal"
        ),
    ),
    (
        ("scoring.tag_boost",),
        "Bonus (× the best fused score) for a memory with a tag the query names",
    ),
    (
        ("scoring.neighbour_weight",),
        "Share of a neighbouring memory's score a memory stored beside it gets; 0 off",
    ),
    (
        ("scoring.context_weight",),
        "Weight of contextual vectors (see enrichment.context_vectors); 0 off",
    ),
    (
        ("search.rerank_candidates", "scoring.rerank_weight"),
        (
            "Late-interaction re-scoring of the head of the ranking over the token vectors kept "
            "with each memory (how many candidates; 0 off, and no token vectors kept) and its "
            "weight"
        ),
    ),
    (
        ("scoring.coverage_weight", "search.coverage_similarity"),
        (
            "Coverage-aware ordering of the best 30 results: how much a result loses for "
            "repeating one ranked above it (0 off), and the cosine from which it starts to "
            "repeat it"
        ),
    ),
    (
        ("scoring.expand_weight", "search.expand_seeds", "search.expand_limit"),
        (
            "One-hop expansion: share of a first hit's score a memory linked to it, or naming a "
            "rare entity it names, gets (0 off); how many first hits pass it on; at most how "
            "many memories the indexes did not find it adds"
        ),
    ),
    (
        ("scoring.feedback_weight", "search.feedback_seeds", "search.feedback_mix"),
        (
            "Pseudo-relevance feedback: weight of one more vector search, for the query moved "
            "toward its best first hits, fused beside the two indexes (0 off); how many first "
            "hits; how far toward them (their mean vector's share against the query's)"
        ),
    ),
    (
        ("scoring.dated_weight",),
        (
            "When the query asks when: bonus (× the best score) for each of the best 30 results "
            "that names a time (a date, a weekday, yesterday, last week); 0 off"
        ),
    ),
    (
        ("search.query_expansion", "search.expansion_max_terms"),
        "Query expansion with entity aliases and tag aliases, and its size",
    ),
    (
        (
            "search.neighbour_window",
            "search.neighbour_max_gap_minutes",
            "search.neighbour_coherence_full",
        ),
        (
            "Which neighbours count: how many on each side, how far apart in time, and from what "
            "similarity they count in full"
        ),
    ),
    (
        ("search.metadata_mode", "search.metadata_penalty", "search.metadata_tags"),
        (
            "Metadata memories (benchmark items, golden queries, goal progress notes): scored × "
            "the penalty, excluded, or included as any other; the tags that make a memory "
            "metadata"
        ),
    ),
    (
        ("embedding.model", "embedding.dimensions"),
        (
            "The model vectors were made with: a change keys new query vectors, and repair re-"
            "embeds rows of another model"
        ),
    ),
    (
        ("dedup.enabled", "dedup.similarity_threshold"),
        (
            "Semantic dedup: the nearest active memory of the namespace (vector index) at least "
            "this similar is a duplicate"
        ),
    ),
    (
        ("dedup.hash_enabled", "dedup.hash_normalize_whitespace"),
        "Exact (hash) dedup, with case and whitespace folded",
    ),
    (
        ("dedup.skip_insert_on_match",),
        (
            "A duplicate is not inserted (the existing memory gets the new tags and metadata); "
            "false: inserted, the old one superseded"
        ),
    ),
    (
        ("dedup.merge_enabled", "dedup.merge_threshold"),
        "Merge mode: a near match above this is appended to",
    ),
    (
        ("dedup.exempt_tags",),
        "Tags whose memories are never deduplicated",
    ),
    (
        ("dedup.keep_variants", "dedup.max_variants"),
        (
            "A skipped near duplicate's wording is kept as a variant of the memory (searchable), "
            "at most this many"
        ),
    ),
    (
        ("chunking.enabled", "chunking.max_length", "chunking.target_size"),
        "Long memories (over max length) are split into chunks of about the target size",
    ),
    (
        ("auto_tagging.enabled",),
        "Tags derived from the content are added",
    ),
    (
        ("tags.alias_map",),
        (
            "Tag aliases (JSON object from → to): stored tags are mapped, and search expands both"
            " ways"
        ),
    ),
    (
        ("benchmark.default_importance", "benchmark.indexed", "benchmark.chunking"),
        "Benchmark items: their importance, and whether they are embedded and chunked",
    ),
    (
        ("enrichment.entity_min_confidence",),
        "Entities extracted below this confidence are dropped",
    ),
    (
        (
            "enrichment.neighbour_limit",
            "enrichment.relation_threshold",
            "enrichment.relation_limit",
        ),
        "Links to similar memories: neighbours looked at, similarity needed, links made",
    ),
    (
        ("enrichment.contradiction_threshold", "enrichment.contradiction_negation_overlap"),
        ("Contradiction candidates: similarity needed, and word overlap for a negated restatement"),
    ),
    (
        ("enrichment.goal_threshold",),
        "Similarity that links a memory to an active goal",
    ),
    (
        ("enrichment.context_vectors",),
        "Also embed each memory with its surrounding context",
    ),
    (
        ("importance.auto_adjust", "importance.boost_threshold", "importance.decay_age_days"),
        (
            "The nightly importance job (off unattended when false), uses before a boost, days "
            "unused before a decay"
        ),
    ),
    (
        ("consolidation.auto_enabled",),
        "The nightly auto-consolidation (0.85, a few clusters)",
    ),
    (
        ("trash.auto_purge_days",),
        (
            "Memories a person put in the trash are deleted for good after this many days (0: "
            "never); what automation archived waits until a person empties the trash"
        ),
    ),
    (
        ("sentinel.report_ttl_days",),
        (
            "Sentinel, health and metrics reports stored over MCP get an expiry a week ahead once"
            " this old (0: off)"
        ),
    ),
    (
        ("retrieval_regression.enabled", "retrieval_regression.schedule"),
        "The golden-query regression run, and its schedule (cron, UTC; empty: off; read live)",
    ),
    (
        ("retrieval_regression.queries", "retrieval_regression.limit"),
        "The golden queries and how many results each compares",
    ),
    (
        (
            "retrieval_regression.min_overlap_at_10",
            "retrieval_regression.max_avg_rank_shift",
            "retrieval_regression.create_alert_memory",
        ),
        "When a query alerts, and whether an alert also stores a memory",
    ),
    (
        ("backup.max_count",),
        "Scheduled backups kept (the newest); backups made on request are never removed",
    ),
    (
        ("ai.provider", "ai.model", "ai.api_key", "ai.base_url"),
        (
            "The chat's LLM: provider (anthropic | openai), model, key (a secret, shown masked) "
            "and an OpenAI-compatible base URL (changing the provider or URL needs the key again "
            "in the same request)"
        ),
    ),
)

HELP: dict[str, str] = {key: text for keys, text in _TOGETHER for key in keys}
