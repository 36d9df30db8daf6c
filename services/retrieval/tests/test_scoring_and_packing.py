"""Pure pieces of search: boost signals, previews, token packing, streaks, graph analysis."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta

import pytest

from exocortex.core.records import EntityRecord
from exocortex.retrieval.reads.entity_repository import GraphEdge
from exocortex.retrieval.reads.graph_analysis import analyse
from exocortex.retrieval.reads.reports import streaks
from exocortex.retrieval.search import packing, scoring
from exocortex.retrieval.search.graph import entity_names

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)


def test_importance_slows_recency_decay() -> None:
    week_ago = NOW - timedelta(days=7)
    low = scoring.recency(week_ago, NOW, importance=0.0, decay=0.05)
    high = scoring.recency(week_ago, NOW, importance=1.0, decay=0.05)
    assert math.isclose(low, math.exp(-0.35))
    assert math.isclose(high, math.exp(-0.175))
    assert scoring.recency(NOW, NOW, 0.5, 0.05) == 1.0


def test_frequency_and_usefulness_saturate() -> None:
    assert scoring.frequency(0, 10) == 0.0
    assert scoring.frequency(10, 10) == 1.0
    assert 0 < scoring.frequency(3, 10) < 1
    assert scoring.frequency(5, 0) == 0.0
    assert scoring.usefulness(0) == 0.0
    assert math.isclose(scoring.usefulness(5), 1.0)
    assert scoring.usefulness(50) == 1.0


def test_settings_parse_with_fallbacks() -> None:
    cfg = scoring.ScoringSettings.from_settings(
        {"scoring.use_rrf": "false", "scoring.rrf_k": "nan", "scoring.fts_weight": "x"}
    )
    assert cfg.use_rrf is False
    assert cfg.rrf_k == 5.0
    assert cfg.fts_weight == 0.50


def test_tag_match_and_metadata_intent() -> None:
    terms = scoring.query_terms("How do we deploy Next.js apps?")
    assert "next.js" in terms
    assert scoring.tag_match(terms, ["next.js"])
    assert not scoring.tag_match(terms, ["go"])
    assert scoring.tag_match(terms, ["deployment"])  # a shared start of four characters
    assert scoring.tag_match(scoring.query_terms("ship it"), ["ship-it"])
    # A word inside another word is no match: it would lift memories for words they lack.
    new_versions = scoring.query_terms("how do we ship new versions")
    assert not scoring.tag_match(new_versions, ["relationship", "newsletter"])
    cfg = scoring.ScoringSettings(metadata_tags=("goal-progress",))
    assert scoring.wants_metadata(False, [], "show goal progress notes", cfg)
    assert scoring.wants_metadata(False, ["goal-progress"], "notes", cfg)
    assert not scoring.wants_metadata(False, [], "notes", cfg)


def test_boost_multiplier_and_legacy_score() -> None:
    cfg = scoring.ScoringSettings()
    sig = scoring.Signals(recency=1.0, frequency=0.5, usefulness=0.0, valence=0.8, tag=1.0)
    assert math.isclose(scoring.boost_multiplier(sig, cfg), 1 + 0.2 + 0.05 + 0.04)
    legacy = scoring.legacy_score(0.5, 1.0, 0.0, sig, cfg)
    assert math.isclose(legacy, 0.5 * 0.5 + 0.5 * 1.0 + 0.2 + 0.05 + 0.04 + 0.1)


def test_preview_picks_the_sentence_matching_the_query() -> None:
    text = "We met on Monday. The canary must stay green for an hour. Lunch was late."
    assert packing.preview(text, "canary green") == "The canary must stay green for an hour."
    assert packing.preview("x" * 500, "q").endswith("…")
    assert len(packing.preview("x" * 500, "q")) == 200


def test_pack_keeps_the_first_and_stops_at_the_budget() -> None:
    assert packing.pack([500, 10], lambda c: c, 100) == [500]
    assert packing.pack([40, 40, 40], lambda c: c, 100) == [40, 40]
    assert packing.pack([], lambda c: c, 100) == []


def test_streaks_count_back_from_today_or_yesterday() -> None:
    today = date(2026, 11, 29)
    days = [today - timedelta(days=d) for d in (1, 2, 3, 7, 8)]
    assert streaks(days, today) == (3, 3)
    assert streaks([*days, today], today) == (4, 4)
    assert streaks([today - timedelta(days=5)], today) == (0, 1)
    assert streaks([], today) == (0, 0)


def test_entity_names_are_words_and_phrases() -> None:
    names = entity_names("Where does Ada Lovelace work")
    assert "ada lovelace" in names
    assert "ada" in names
    assert "where does ada" in names


def test_graph_analysis_is_deterministic_and_finds_the_bridge() -> None:
    def e(i: str) -> EntityRecord:
        return EntityRecord(i, "ns", i.upper(), "concept", [], {}, NOW, NOW)

    entities = [e(x) for x in "abcdef"]
    edges = [
        GraphEdge(s, t, "relates_to", 0.7)
        for s, t in (("a", "b"), ("b", "c"), ("c", "a"), ("d", "e"), ("e", "f"), ("f", "d"))
    ] + [GraphEdge("c", "d", "relates_to", 0.7)]
    first = analyse(entities, edges, 10)
    assert first == analyse(list(reversed(entities)), list(reversed(edges)), 10)
    assert {c["name"] for c in first["centrality"][:2]} == {"C", "D"}
    assert sorted(c["size"] for c in first["communities"]) == [3, 3]
    assert first["stats"] == {
        "nodes": 6,
        "edges": 7,
        "components": 1,
        "avg_degree": round(14 / 6, 4),
        "betweenness": "exact",
    }


def test_quality_is_the_original_formula_within_zero_and_one() -> None:
    best = scoring.quality(importance=1.0, useful_count=5, access_count=20, links=5, age_days=0)
    assert best == pytest.approx(1.0)
    assert scoring.quality(
        importance=0.0, useful_count=0, access_count=0, links=0, age_days=10_000
    ) == pytest.approx(0.0)

    # Importance is the largest share (0.30), links saturate at five.
    def fresh(links: int) -> float:
        return scoring.quality(
            importance=0.5, useful_count=0, access_count=0, links=links, age_days=0.0
        )

    assert fresh(9) == fresh(5) > fresh(0) == pytest.approx(0.30)


def test_goal_relevance_from_a_goal_link_or_the_progress_tags() -> None:
    assert scoring.goal_relevance(0.0, ["goal-progress-implicit"]) == 0.7
    assert scoring.goal_relevance(0.0, ["goal-progress"]) == 1.0
    assert scoring.goal_relevance(0.7, ["notes"]) == 0.7
    assert scoring.goal_relevance(0.0, ["notes"]) == 0.0
