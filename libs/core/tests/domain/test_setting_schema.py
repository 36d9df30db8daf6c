"""The typed schema of every setting: each seeded default fits it, and bad values are named."""

from __future__ import annotations

import pytest

from exocortex.core.db.settings_store import DEFAULT_SETTINGS
from exocortex.core.domain import setting_schema
from exocortex.core.domain.setting_schema import SCHEMA, SettingError, check


def refusal(key: str, value: str) -> str | None:
    """Why ``check`` refuses the value, or None when it accepts it."""
    try:
        check(key, value)
    except SettingError as refused:
        return refused.message
    return None


def test_every_seeded_default_is_declared_and_valid() -> None:
    assert len(DEFAULT_SETTINGS) > 10, "no seeded defaults to check"
    assert set(DEFAULT_SETTINGS) <= set(SCHEMA), set(DEFAULT_SETTINGS) - set(SCHEMA)
    refused = {key: refusal(key, value) for key, value in DEFAULT_SETTINGS.items()}
    assert {key: why for key, why in refused.items() if why is not None} == {}


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("scoring.rrf_k", "nan"),
        ("scoring.rrf_k", "inf"),
        ("scoring.rrf_k", "-Infinity"),
        ("scoring.rrf_k", "1e999"),
        ("scoring.rrf_k", "0"),
        ("scoring.vector_weight", "NaN"),
        ("dedup.similarity_threshold", "1.5"),
        ("backup.max_count", "2.5"),
        ("backup.max_count", "0"),
        ("dedup.max_variants", "99999999999999999999"),
        ("dedup.enabled", "yes"),
        ("tags.alias_map", "[1]"),
        ("tags.alias_map", "[" * 5000),
        ("search.metadata_mode", "sometimes"),
        ("ai.provider", "evil"),
        ("ai.base_url", "file:///etc/passwd"),
        ("ai.model", "x\x00y"),
        ("embedding.model", "m" * 201),
        ("no.such.setting", "1"),
        ("tag_alias.", "react"),
        ("tag_alias.  ", "react"),
        ("tag_alias.a\nb", "react"),
        ("tag_alias." + "t" * 300, "react"),
        ("tag_alias.k8s", "k" * 201),
        ("retrieval_regression.schedule", "every morning"),
        ("retrieval_regression.schedule", "* * *"),
    ],
)
def test_bad_values_are_refused_naming_the_key(key: str, value: str) -> None:
    with pytest.raises(SettingError) as refused:
        check(key, value)
    assert refused.value.key == key


def test_empty_clears_the_ai_settings() -> None:
    for key in ("ai.provider", "ai.model", "ai.api_key", "ai.base_url"):
        assert refusal(key, "") is None, f"{key} refuses the empty value"
    assert refusal("ai.base_url", "http://127.0.0.1:8080/") is None
    # Empty is a value of its own for these keys only: a number or a switch cannot be empty.
    assert refusal("scoring.rrf_k", "") is not None
    assert refusal("dedup.enabled", "") is not None


def test_ranges_are_described_in_the_message() -> None:
    with pytest.raises(SettingError) as refused:
        check("dedup.similarity_threshold", "2")
    assert "from 0 to 1" in refused.value.message
    assert setting_schema.SCHEMA["backup.max_count"].describe() == "integer from 1 to 1000"


@pytest.mark.parametrize("key", sorted(setting_schema.REMOVED))
def test_removed_settings_are_refused_with_the_reason(key: str) -> None:
    assert key not in SCHEMA
    assert key not in DEFAULT_SETTINGS
    assert refusal(key, "1") == setting_schema.REMOVED[key]
    assert "was removed" in setting_schema.REMOVED[key]


def test_tag_alias_keys_take_a_tag() -> None:
    assert refusal("tag_alias.k8s", "kubernetes") is None
    assert refusal("tag_alias.next.js", "nextjs") is None
    # Empty turns the alias off.
    assert refusal("tag_alias.k8s", "") is None
