"""Turning a JSON backup (``GET /api/export``) into files a person reads: one Markdown file, or
an Obsidian vault (a note per memory, entity and goal, joined by wiki links)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from exocortex.core.domain.safe_paths import file_stem, safe_child

Tick = Callable[[int], None]
VAULT_FOLDER = "Exocortex"


def live_memories(backup: dict[str, Any]) -> list[dict[str, Any]]:
    """Active root memories (chunks are parts of their memory; archived ones are left out)."""
    return [
        m for m in backup.get("memories", []) if not m.get("parent_id") and m.get("is_active", True)
    ]


def markdown(backup: dict[str, Any], tick: Tick) -> str:
    """One document: a ``##`` section per memory, so ``exo import`` reads it back."""
    lines = [f"# Exocortex export ({backup.get('exported_at', '')})", ""]
    for memory in live_memories(backup):
        tags = " ".join(f"#{t}" for t in memory.get("tags", []))
        lines += [
            f"## {str(memory['created_at'])[:16]} · {memory['content_type']} · {memory['id']}",
            "",
            f"namespace: {memory['namespace']}" + (f" · tags: {tags}" if tags else ""),
            "",
            memory["content"].strip(),
            "",
        ]
        tick(1)
    return "\n".join(lines)


@dataclass
class VaultReport:
    written: int = 0
    unchanged: int = 0


def _safe(name: str) -> str:
    """A file name Obsidian and every OS accept, made from data (an id, a title, a name)."""
    return file_stem(str(name), limit=120)


def _frontmatter(pairs: Iterable[tuple[str, Any]]) -> list[str]:
    lines = ["---"]
    for key, value in pairs:
        if value is None or value == "" or value == []:
            continue
        if isinstance(value, list):
            lines.append(f"{key}:")
            lines += [f'  - "{v!s}"' for v in value]
        elif isinstance(value, int | float | bool):
            lines.append(f"{key}: {str(value).lower() if isinstance(value, bool) else value}")
        else:
            escaped = str(value).replace("\\", "\\\\").replace('"', '\\"')
            lines.append(f'{key}: "{escaped}"')
    return [*lines, "---", ""]


def _write(path: Path, text: str, report: VaultReport) -> None:
    """Only changed notes are rewritten, so a vault under sync sees the real changes."""
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        report.unchanged += 1
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    report.written += 1


def obsidian(backup: dict[str, Any], vault: Path, tick: Tick) -> VaultReport:
    root = vault / VAULT_FOLDER
    report = VaultReport()
    memories = live_memories(backup)
    entity_names = {e["id"]: _safe(e["name"]) for e in backup.get("entities", [])}
    links: dict[str, list[str]] = defaultdict(list)
    for link in backup.get("memory_links", []):
        links[link["source_id"]].append(f"- {link['link_type']}: [[{_safe(link['target_id'])}]]")
    mentions: dict[str, list[str]] = defaultdict(list)
    for me in backup.get("memory_entities", []):
        if me["entity_id"] in entity_names:
            mentions[me["memory_id"]].append(me["entity_id"])
    by_entity: dict[str, list[str]] = defaultdict(list)
    for memory in memories:
        body = _frontmatter(
            [
                ("id", memory["id"]),
                ("namespace", memory["namespace"]),
                ("type", memory["content_type"]),
                ("tags", memory.get("tags", [])),
                ("importance", memory.get("importance")),
                ("source", memory.get("source")),
                ("source_uri", memory.get("source_uri")),
                ("created", str(memory["created_at"])),
                ("updated", str(memory.get("updated_at", ""))),
            ]
        )
        body += [memory["content"].strip(), ""]
        if links.get(memory["id"]):
            body += ["## Links", *links[memory["id"]], ""]
        if mentions.get(memory["id"]):
            body += [
                "## Mentions",
                *(f"- [[{entity_names[e]}]]" for e in mentions[memory["id"]]),
                "",
            ]
            for entity_id in mentions[memory["id"]]:
                by_entity[entity_id].append(memory["id"])
        # Every name below comes from the document: sanitized, then checked to stay in the vault.
        _write(safe_child(root, "memories", f"{_safe(memory['id'])}.md"), "\n".join(body), report)
        tick(1)
    for entity in backup.get("entities", []):
        body = _frontmatter(
            [
                ("id", entity["id"]),
                ("type", entity.get("type")),
                ("aliases", entity.get("aliases", [])),
                ("tags", entity.get("tags", [])),
            ]
        )
        body += [f"# {entity['name']}", ""]
        body += [f"- [[{_safe(memory_id)}]]" for memory_id in by_entity.get(entity["id"], [])]
        path = safe_child(root, "entities", f"{entity_names[entity['id']]}.md")
        _write(path, "\n".join(body) + "\n", report)
    milestones: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for milestone in backup.get("goal_milestones", []):
        milestones[milestone["goal_id"]].append(milestone)
    for goal in backup.get("goals", []):
        body = _frontmatter(
            [
                ("id", goal["id"]),
                ("status", goal.get("status")),
                ("priority", goal.get("priority")),
                ("deadline", goal.get("deadline")),
            ]
        )
        body += [f"# {goal['title']}", "", (goal.get("description") or "").strip(), ""]
        for ms in milestones.get(goal["id"], []):
            body.append(f"- [{'x' if ms.get('status') == 'completed' else ' '}] {ms['title']}")
        name = f"{_safe(goal['title'])} ({_safe(str(goal['id'])[-6:])}).md"
        _write(safe_child(root, "goals", name), "\n".join(body) + "\n", report)
    return report
