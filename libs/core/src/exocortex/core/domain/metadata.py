"""Which memories are system artifacts (benchmarks, regression reports, goal progress) rather
than knowledge: search excludes or penalises them per ``search.metadata_mode``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

BENCHMARK_TAG = "benchmark-artifact"
# The tag of a note logged as progress on a goal.
GOAL_PROGRESS_TAG = "goal-progress"
_METADATA_MODES = {"benchmark", "progress", "regression"}
_METADATA_KINDS = ("retrieval-regression", "goal-progress", "benchmark", "alert")


def metadata_tags(settings: Mapping[str, str]) -> set[str]:
    raw = settings.get("search.metadata_tags", "")
    return {t.strip() for t in raw.split(",") if t.strip()}


def infer_is_metadata(
    *,
    explicit: bool | None,
    benchmark: bool,
    tags: Iterable[str],
    metadata: Mapping[str, Any],
    settings: Mapping[str, str],
) -> bool:
    """An explicit flag wins; otherwise benchmark items, metadata tags and metadata markers."""
    if explicit is not None:
        return explicit
    if benchmark:
        return True
    if metadata_tags(settings).intersection(tags):
        return True
    if str(metadata.get("mode", "")).lower() in _METADATA_MODES:
        return True
    kind = str(metadata.get("kind", "")).lower()
    return any(marker in kind for marker in _METADATA_KINDS)
