"""The order memories are written in, so that whatever a memory refers to is there first."""

from __future__ import annotations

from collections import defaultdict
from typing import Any


def memory_levels(memories: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The memories in groups: each refers (by ``parent_id``, ``consolidated_into`` or
    ``superseded_by``) only to memories of earlier groups or outside the list, so a group can be
    restored all at once once the groups before it are in. A cycle (a damaged document) is cut
    where it is found."""
    by_id = {m["id"]: m for m in memories}
    level: dict[str, int] = {}

    def depth(memory_id: str) -> int:
        # Iterative, as a long chain of versions would overflow a recursive walk.
        path: list[str] = []
        on_path: set[str] = set()
        current: str | None = memory_id
        while current is not None and current not in level and current not in on_path:
            path.append(current)
            on_path.add(current)
            current = _first_missing_ref(by_id[current], by_id, level, on_path)
        while path:
            node = path.pop()
            refs = [r for r in _refs(by_id[node]) if r in by_id and r != node]
            level[node] = 1 + max((level.get(r, -1) for r in refs), default=-1)
        return level[memory_id]

    groups: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for memory in memories:
        groups[depth(memory["id"])].append(memory)
    return [groups[k] for k in sorted(groups)]


def _refs(memory: dict[str, Any]) -> list[str]:
    return [
        r for r in (memory.get("parent_id"), memory.get("consolidated_into"),
                    memory.get("superseded_by")) if r
    ]  # fmt: skip


def _first_missing_ref(
    memory: dict[str, Any], by_id: dict[str, Any], level: dict[str, int], on_path: set[str]
) -> str | None:
    for ref in _refs(memory):
        if ref in by_id and ref not in level and ref not in on_path:
            return ref
    return None
