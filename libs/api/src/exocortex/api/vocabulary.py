"""The closed sets of words the API accepts (field names and values follow the seed's API)."""

from __future__ import annotations

from typing import Literal

ContentType = Literal["text", "note", "decision", "conversation", "summary"]
Source = Literal["manual", "cli", "api", "mcp", "browser", "import", "consolidation", "digest"]
LinkType = Literal["related", "elaborates", "contradicts", "supersedes", "supports", "derived_from"]
DedupAction = Literal["created", "skipped", "superseded", "merged"]

GoalStatus = Literal["active", "completed", "stalled", "abandoned"]
Priority = Literal["low", "medium", "high", "critical"]
MilestoneStatus = Literal["pending", "in_progress", "completed"]
EntityType = Literal["person", "project", "technology", "organization", "concept"]

JobScope = Literal["namespace", "global"]
RunStatus = Literal["running", "succeeded", "failed"]
ContradictionStatus = Literal["pending", "resolved", "dismissed"]
HealthStatus = Literal["ok", "warn", "critical"]
TimeBucket = Literal["week", "month"]

ProducerKind = Literal["model", "agent"]
Granularity = Literal["month", "week"]
GapSeverity = Literal["critical", "warning", "info"]
