"""Pure parts of dedup merge mode."""

from __future__ import annotations

from typing import Any

from exocortex.ingest.store.config import WriteConfig
from exocortex.ingest.store.merge import SEPARATOR, already_merged
from exocortex.ingest.store.prepare import Prepared


def _prepared(content: str) -> Prepared:
    return Prepared(
        content=content,
        namespace="default",
        content_type="text",
        source="api",
        source_uri=None,
        importance=0.5,
        valence=0.0,
        tags=[],
        metadata={},
        is_metadata=False,
        benchmark=False,
        expires_at=None,
        attribution={},
        digest="",
        keywords="",
    )


def test_the_semantic_floor_drops_to_the_merge_threshold_only_in_merge_mode() -> None:
    assert WriteConfig.from_settings({}).semantic_floor == 0.85
    merging = WriteConfig.from_settings({"dedup.merge_enabled": "true"})
    assert (merging.merge, merging.semantic_floor) == (True, 0.75)
    # A merge threshold above the duplicate threshold leaves no merge band.
    odd = WriteConfig.from_settings({"dedup.merge_enabled": "true", "dedup.merge_threshold": "0.9"})
    assert odd.semantic_floor == 0.85


def test_a_text_already_merged_is_recognised() -> None:
    target: dict[str, Any] = {"content": f"First part.{SEPARATOR}Second part."}
    assert already_merged(target, _prepared("Second part."))
    assert already_merged(target, _prepared("  First part. "))
    assert not already_merged(target, _prepared("Second part, changed."))
