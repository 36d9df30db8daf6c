"""Summarising a coding-agent session transcript (JSONL, one event per line) into one memory.

Kept: actions that change something or fetch something (edits, writes, shell commands, web
fetches and searches, notebook edits, unknown tools by name). Dropped: read-only tools, planning
and team tools, and this product's own tools. Consecutive identical actions collapse into one.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from exocortex.core.domain.text import remove_private, strip_private_field, strip_private_json

_READ_ONLY = frozenset(
    {
        "Read", "Glob", "Grep", "LS", "TodoRead", "TodoWrite", "Task", "TaskCreate",
        "TaskUpdate", "TaskList", "TaskGet", "TaskOutput", "AskUserQuestion", "EnterPlanMode",
        "ExitPlanMode", "EnterWorktree", "ExitWorktree", "TeamCreate", "SendMessage", "Skill",
        "BashOutput", "KillShell",
    }
)  # fmt: skip
_OWN_TOOL_PREFIXES = ("mcp__exocortex__",)
_GENERIC_DIRS = frozenset({"src", "lib", "dist", "packages", "node_modules", "tests", "app"})
_FACT_CUES = (
    ("decision", re.compile(r"\b(decided|we'll go with|chose|instead of|opted)\b", re.I)),
    ("discovery", re.compile(r"\b(found that|turns out|the (root )?cause|discovered)\b", re.I)),
    ("architecture", re.compile(r"\b(architecture|design|the approach|pattern)\b", re.I)),
    ("learning", re.compile(r"\b(learned|lesson|note to self|remember that|gotcha)\b", re.I)),
)
MAX_FACTS = 10


@dataclass
class Digest:
    project: str | None
    files: list[str] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    commands: int = 0
    tools: int = 0
    facts: list[tuple[str, str]] = field(default_factory=list)

    def render(self, day: date) -> str:
        lines = [
            f"Session {day.isoformat()}" + (f" (project: {self.project})" if self.project else "")
        ]
        if self.files:
            lines.append("Files: " + ", ".join(os.path.basename(f) for f in self.files[:30]))
        lines.append(
            f"Stats: {len(self.files)} files changed | {self.commands} commands | "
            f"{self.tools} tools"
        )
        if self.actions:
            lines.append("Actions:")
            lines.extend(f"- {a}" for a in self.actions[:40])
        if self.facts:
            lines.append("Key takeaways:")
            lines.extend(f"- [{kind}] {text}" for kind, text in self.facts)
        return "\n".join(lines)


def _action(name: str, data: dict[str, Any]) -> str | None:
    if name in _READ_ONLY or name.startswith(_OWN_TOOL_PREFIXES):
        return None
    if name in ("Write", "Edit", "MultiEdit", "NotebookEdit"):
        path = str(data.get("file_path") or data.get("notebook_path") or "")
        return f"{name} {path}".strip()
    if name == "Bash":
        return f"Bash: {str(data.get('command', ''))[:150]}"
    if name == "WebFetch":
        return f"WebFetch {data.get('url', '')}"
    if name == "WebSearch":
        return f"WebSearch {data.get('query', '')}"
    return name


def _project(files: list[str]) -> str | None:
    dirs = [os.path.dirname(f) for f in files if f.startswith("/")]
    if not dirs:
        return None
    common = os.path.commonpath(dirs)
    for part in reversed([p for p in common.split("/") if p]):
        if part not in _GENERIC_DIRS:
            return part
    return None


def _facts(texts: list[str]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    seen: list[set[str]] = []
    for text in texts:
        for sentence in re.split(r"(?<=[.!?])\s+", text):
            sentence = sentence.strip()
            if len(sentence) <= 15 or len(sentence) > 300:
                continue
            for kind, cue in _FACT_CUES:
                if cue.search(sentence):
                    words = set(sentence.lower().split())
                    if any(len(words & s) / max(1, len(words)) > 0.7 for s in seen):
                        break
                    seen.append(words)
                    out.append((kind, sentence))
                    break
            if len(out) >= MAX_FACTS:
                return out
    return out


def digest_transcript(jsonl: str, project: str | None = None) -> Digest:
    """Parse the transcript (malformed lines skipped) and build the digest.

    Private blocks go before anything is picked: from the raw text first (a block may span
    events, and an unclosed one hides the rest of the session), then from every string of each
    decoded event (JSON may spell the tags as ``\\u003c`` escapes)."""
    files: dict[str, None] = {}
    actions: list[str] = []
    texts: list[str] = []
    commands = tools = 0
    for line in remove_private(jsonl).splitlines():
        try:
            entry = strip_private_json(json.loads(line))
        except (json.JSONDecodeError, ValueError):
            continue
        if not isinstance(entry, dict) or entry.get("type") != "assistant":
            continue
        content = (entry.get("message") or {}).get("content") or []
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            if block.get("type") != "tool_use":
                continue
            name = str(block.get("name", ""))
            raw_input = block.get("input")
            data: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}
            summary = _action(name, data)
            if summary is None:
                continue
            tools += 1
            if name == "Bash":
                commands += 1
            if name in ("Write", "Edit", "MultiEdit", "NotebookEdit"):
                path = str(data.get("file_path") or data.get("notebook_path") or "")
                if path:
                    files.setdefault(path, None)
            if not actions or actions[-1] != summary:
                actions.append(summary)
    file_list = list(files)
    return Digest(
        project=(strip_private_field(project) if project else None) or _project(file_list),
        files=file_list,
        actions=actions,
        commands=commands,
        tools=tools,
        facts=_facts(texts),
    )
