from exocortex.core.domain.autotags import MAX_AUTO_TAGS, auto_tags
from exocortex.core.domain.entities import (
    CONFIDENCE_SETTING,
    MIN_CONFIDENCE,
    extract_entities,
    min_confidence,
)
from exocortex.core.domain.keywords import MAX_KEYWORD_CHARS, generate_keywords, memory_keywords


def test_topics_and_technologies_become_tags() -> None:
    tags = auto_tags("We decided to use PostgreSQL instead of MongoDB for the data model.")
    assert "decision" in tags
    assert "postgresql" in tags
    assert "architecture" in tags


def test_lowercase_common_words_are_not_technologies() -> None:
    tags = auto_tags("Let us go for a walk; the rust on the gate needs paint.")
    assert "go" not in tags
    assert "rust" not in tags
    assert "go" in auto_tags("The service is written in Go.")


def test_existing_tags_are_not_repeated_and_at_most_five() -> None:
    text = (
        "Bug: the deploy of our Python FastAPI service on Kubernetes crashed; we fixed the "
        "latency regression in Redis and refactored the pytest suite. TODO: docs."
    )
    tags = auto_tags(text, existing=["bug"])
    assert "bug" not in tags
    assert len(tags) == MAX_AUTO_TAGS


def test_project_names() -> None:
    assert "atlas" in auto_tags("Today I was working on Atlas again.")


def test_keywords_lead_with_entities_and_tags_then_frequent_terms() -> None:
    text = "Caching layer design. The caching layer keeps hot queries; caching helps latency."
    keywords = generate_keywords(text, tags=["perf-tuning"], entity_names=["Redis"])
    words = keywords.split()
    assert words[:3] == ["redis", "perf", "tuning"]
    assert "caching" in words
    assert "the" not in words


def test_keywords_are_bounded() -> None:
    text = " ".join(f"term{i}word" for i in range(200))
    assert len(generate_keywords(text)) <= MAX_KEYWORD_CHARS


def test_keywords_do_not_depend_on_the_order_tags_were_given_in() -> None:
    text = "The deploy pipeline caches wheels between runs."
    assert generate_keywords(text, tags=["ci", "build-cache"]) == generate_keywords(
        text, tags=["build-cache", "ci"]
    )


def test_memory_keywords_name_the_entities_enrichment_keeps() -> None:
    text = "Ada Lovelace moved the billing queue onto RabbitMQ at Acme Labs."
    found = extract_entities(text)
    kept = [e.name for e in found if e.confidence >= 0.5]
    assert "RabbitMQ" in kept
    assert memory_keywords(text, ["billing"], 0.5) == generate_keywords(text, ["billing"], kept)
    # Above every entity's confidence, none is named.
    assert memory_keywords(text, ["billing"], 1.0) == generate_keywords(text, ["billing"])


def test_entity_confidence_setting_falls_back_and_clamps() -> None:
    assert min_confidence({}) == MIN_CONFIDENCE
    assert min_confidence({CONFIDENCE_SETTING: "0.8"}) == 0.8
    assert min_confidence({CONFIDENCE_SETTING: "high"}) == MIN_CONFIDENCE
    assert min_confidence({CONFIDENCE_SETTING: "nan"}) == MIN_CONFIDENCE
    assert min_confidence({CONFIDENCE_SETTING: "7"}) == 1.0
    assert min_confidence({CONFIDENCE_SETTING: "-1"}) == 0.0
