"""Tags derived from content: technologies, topics and project names (at most five)."""

from __future__ import annotations

import re

from exocortex.core.domain.tags import normalize_tag
from exocortex.core.domain.vocabulary import CASE_SENSITIVE_TECHNOLOGIES, TECHNOLOGIES

MAX_AUTO_TAGS = 5

_TOPICS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (tag, re.compile(pattern, re.IGNORECASE))
    for tag, pattern in (
        ("decision", r"\b(decided|decision|we chose|chose to|opted for|going with|settled on)\b"),
        ("bug", r"\b(bug|crash(es|ed)?|stack ?trace|regression|exception|fails? with)\b"),
        ("fix", r"\b(fixed|the fix|workaround|resolved by|patched)\b"),
        ("architecture", r"\b(architecture|design doc|data model|schema|component diagram)\b"),
        ("performance", r"\b(latency|throughput|p95|p99|slow(er)?|faster|benchmark(s|ed)?)\b"),
        ("security", r"\b(vulnerabilit\w*|cve-\d+|authentication|authori[sz]ation|secret)\b"),
        ("testing", r"\b(unit tests?|integration tests?|test suite|pytest|vitest|flaky)\b"),
        ("deployment", r"\b(deploy(ed|ment|ing)?|release[ds]?|rollout|ci/cd|pipeline)\b"),
        ("refactor", r"\b(refactor(ed|ing)?|clean ?up|restructur\w+)\b"),
        ("learning", r"\b(learned|lesson|til|turns out|discovered|insight)\b"),
        ("todo", r"\b(todo|next steps?|follow[- ]up|remaining work)\b"),
    )
)
_TECH = re.compile(
    r"(?<![\w.])("
    + "|".join(re.escape(t) for t in sorted(TECHNOLOGIES, key=len, reverse=True))
    + r")(?![\w])",
    re.IGNORECASE,
)
_TECH_CASED = re.compile(r"\b(" + "|".join(CASE_SENSITIVE_TECHNOLOGIES) + r")\b")
_PROJECT = re.compile(
    r"\b(?:project|working on|repo(?:sitory)?)\s+[\"'`]?([A-Za-z][\w.-]{2,40})",
)
_NOT_PROJECT = frozenset({"the", "this", "that", "our", "my", "a", "an", "it", "which"})


def _project_names(content: str) -> list[str]:
    names = []
    for match in _PROJECT.finditer(content):
        name = match.group(1).rstrip(".-")
        if name.lower() not in _NOT_PROJECT:
            names.append(name)
    return names


def auto_tags(content: str, existing: list[str] | None = None) -> list[str]:
    """Up to five new tags (normalised), most specific first: topics, technologies, projects."""
    have = set(existing or [])
    found: dict[str, None] = {}
    for tag, pattern in _TOPICS:
        if pattern.search(content):
            found.setdefault(tag, None)
    counts: dict[str, int] = {}
    for match in _TECH.finditer(content):
        name = TECHNOLOGIES[match.group(1).lower()]
        counts[name] = counts.get(name, 0) + 1
    for match in _TECH_CASED.finditer(content):
        counts[match.group(1)] = counts.get(match.group(1), 0) + 1
    for name, _ in sorted(counts.items(), key=lambda kv: -kv[1]):
        found.setdefault(normalize_tag(name), None)
    for name in _project_names(content):
        found.setdefault(normalize_tag(name), None)
    return [t for t in found if t and t not in have][:MAX_AUTO_TAGS]
