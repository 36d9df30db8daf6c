"""The Obsidian vault: one Markdown note per memory (YAML front matter, the content as body,
wikilinks to its entities and linked memories), per entity, per goal and per contradiction, and
a dashboard of Dataview queries.

Notes are named by id (``Memories/<id>.md``), so a link survives an edit of the content; the
title is the note's alias. Incremental by default: ``.obsidian-sync-state.json`` keeps the time
of the last export (a timestamp with its zone, compared as one in SQL), and only what changed
since is rewritten. A memory archived since moves to ``Archived/``. Each note's file time is the
row's ``updated_at``. Nothing in the vault is deleted.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from exocortex.core.domain.safe_paths import UnsafeName, file_stem, safe_child
from exocortex.core.errors import Conflict
from exocortex.maintenance.backup.obsidian_repository import (
    ContradictionNote,
    EntityNote,
    GoalNote,
    MemoryNote,
    ObsidianRepository,
)

STATE_FILE = ".obsidian-sync-state.json"
NONE = "- none\n"
# The next export starts this long before the snapshot of this one: a change committed while
# the export ran is written again next time rather than missed (rewriting a note is harmless).
OVERLAP = timedelta(minutes=1)

DASHBOARD = """# Exocortex

## Recent memories
```dataview
TABLE importance, tags, updated FROM "Memories" SORT updated DESC LIMIT 50
```

## Most important
```dataview
TABLE importance, tags FROM "Memories" WHERE importance >= 0.8 SORT importance DESC
```

## Active goals
```dataview
TABLE status, priority, deadline FROM "Goals" WHERE status = "active"
```

## Open contradictions
```dataview
LIST FROM "Contradictions" WHERE status = "pending"
```
"""


@dataclass(frozen=True, slots=True)
class ObsidianReport:
    vault: str
    memories_written: int
    entities_written: int
    goals_written: int
    contradictions_written: int
    incremental: bool


def safe_name(text: str, limit: int = 100) -> str:
    """A note's name (or a part of a wikilink) from data: one safe file name component."""
    return file_stem(text, limit=limit)


def title_of(content: str) -> str:
    first = content.strip().splitlines()[0] if content.strip() else ""
    return safe_name(first, 80)


def entity_stem(name: str, namespace: str) -> str:
    return safe_name(name if namespace == "default" else f"{name} ({namespace})")


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _front_matter(fields: dict[str, Any]) -> str:
    # JSON scalars and arrays are valid YAML, and quote whatever YAML would misread.
    lines = [f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in fields.items()]
    return "---\n" + "\n".join(lines) + "\n---\n"


def _write(path: Path, text: str, updated: datetime | None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)
    if updated is not None:
        stamp = updated.timestamp()
        os.utime(path, (stamp, stamp))


def memory_note(m: MemoryNote) -> str:
    entities = [f"[[{entity_stem(e['name'], e['namespace'])}]]" for e in m.entities]
    links = [f"[[{safe_name(link['id'])}|{safe_name(link['title'], 60)}]]" for link in m.links]
    head = _front_matter(
        {
            "id": m.id,
            "aliases": [title_of(m.content)],
            "namespace": m.namespace,
            "type": m.content_type,
            "importance": m.importance,
            "valence": m.valence,
            "tags": m.tags,
            "created": _iso(m.created_at),
            "updated": _iso(m.updated_at),
            "entities": entities,
            "linked_memories": links,
        }
    )
    body = m.content.rstrip() + "\n"
    if links:
        body += "\n## Linked\n" + "".join(
            f"- {link['type']}: {text}\n" for link, text in zip(m.links, links, strict=True)
        )
    return head + "\n" + body


def entity_note(e: EntityNote) -> str:
    head = _front_matter(
        {"id": e.id, "namespace": e.namespace, "type": e.type, "updated": _iso(e.updated_at)}
    )
    relations = "".join(
        f"- {r['relationship']} [[{entity_stem(r['name'], r['namespace'])}]]\n" for r in e.relations
    )
    memories = "".join(
        f"- [[{safe_name(m['id'])}|{safe_name(m['title'], 60)}]]\n" for m in e.memories
    )
    return (
        f"{head}\n# {e.name}\n\n## Relationships\n{relations or NONE}"
        f"\n## Linked memories\n{memories or NONE}"
    )


def goal_note(g: GoalNote) -> str:
    head = _front_matter(
        {
            "id": g.id,
            "namespace": g.namespace,
            "status": g.status,
            "priority": g.priority,
            "deadline": _iso(g.deadline),
            "created": _iso(g.created_at),
            "updated": _iso(g.updated_at),
        }
    )
    checklist = "".join(f"- [{'x' if m['done'] else ' '}] {m['title']}\n" for m in g.milestones)
    return (
        f"{head}\n# {g.title}\n\n## Milestones\n{checklist or NONE}"
        f"\n{(g.description or '').rstrip()}\n"
    )


def contradiction_note(c: ContradictionNote) -> str:
    head = _front_matter(
        {
            "id": c.id,
            "status": c.status,
            "memory_a": f"[[{safe_name(c.memory_a_id)}]]",
            "memory_b": f"[[{safe_name(c.memory_b_id)}]]",
            "created": _iso(c.created_at),
            "updated": _iso(c.updated_at),
        }
    )
    resolution = f"\n## Resolution\n{c.resolution}\n" if c.resolution else ""
    a, b = safe_name(c.memory_a_id), safe_name(c.memory_b_id)
    return f"{head}\n[[{a}]] ↔ [[{b}]]\n\n{c.description}\n{resolution}"


class ObsidianExporter:
    def __init__(self, repository: ObsidianRepository, vault: Path) -> None:
        self._repo = repository
        self.vault = vault

    def _path(self, *names: str) -> Path:
        """Where a note goes: every name is made from data (ids, titles, entity names), so it
        is sanitized by the caller and checked here to stay inside the vault, links followed."""
        try:
            return safe_child(self.vault, *names)
        except UnsafeName as err:
            raise Conflict(f"the Obsidian vault is not written: {err}", field="vault") from err

    def _last_sync(self) -> datetime | None:
        try:
            raw = json.loads((self.vault / STATE_FILE).read_text(encoding="utf-8"))
            value = datetime.fromisoformat(raw["last_sync"])
        except (FileNotFoundError, KeyError, ValueError, TypeError):
            return None
        return value if value.tzinfo else value.replace(tzinfo=UTC)

    async def export(self, *, full: bool) -> ObsidianReport:
        since = None if full else self._last_sync()
        counts = {"memories": 0, "entities": 0, "goals": 0, "contradictions": 0}
        async with self._repo.snapshot(since) as snap:
            started = await snap.now()
            async for m in snap.memories():
                live = self._path("Memories", f"{safe_name(m.id)}.md")
                if m.is_active:
                    _write(live, memory_note(m), m.updated_at)
                    counts["memories"] += 1
                elif live.exists():
                    archived = self._path("Archived", live.name)
                    archived.parent.mkdir(parents=True, exist_ok=True)
                    live.replace(archived)
            async for e in snap.entities():
                stem = entity_stem(e.name, e.namespace)
                path = self._path("Entities", safe_name(e.type.title()), f"{stem}.md")
                _write(path, entity_note(e), e.updated_at)
                counts["entities"] += 1
            async for g in snap.goals():
                _write(self._path("Goals", f"{safe_name(g.title)}.md"), goal_note(g), g.updated_at)
                counts["goals"] += 1
            async for c in snap.contradictions():
                path = self._path("Contradictions", f"{safe_name(c.id)}.md")
                _write(path, contradiction_note(c), c.updated_at)
                counts["contradictions"] += 1
        if since is None or not (self.vault / "_Dashboard.md").exists():
            _write(self.vault / "_Dashboard.md", DASHBOARD, None)
        state = {"last_sync": (started - OVERLAP).isoformat()}
        _write(self.vault / STATE_FILE, json.dumps(state) + "\n", None)
        return ObsidianReport(
            vault=str(self.vault),
            memories_written=counts["memories"],
            entities_written=counts["entities"],
            goals_written=counts["goals"],
            contradictions_written=counts["contradictions"],
            incremental=since is not None,
        )
