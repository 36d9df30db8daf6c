"""Writing the SessionStart hook into an agent client's config: Claude Code
(~/.claude/settings.json), Codex (~/.codex/hooks.json, with `codex_hooks` turned on in
~/.codex/config.toml) and Gemini CLI (~/.gemini/settings.json). Whatever was there is copied to
`<file>.bak-<time>` first and kept; the hook is added beside the config's other hooks, once."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HOOK_SCRIPT = Path(__file__).resolve().parent / "session_start.py"
MARKER = "exocortex"  # in the command (the script's path), to find our entry again
CLIENTS = ("claude-code", "codex", "gemini")


class HookConfigError(ValueError):
    """The client's config cannot be read as what it should be; nothing was written."""


@dataclass
class Installed:
    client: str
    path: Path
    backup: Path | None
    added: bool
    notes: list[str] = field(default_factory=list)


def hook_command() -> str:
    """This Python without site packages (the script needs the standard library only)."""
    return f"{shlex.quote(sys.executable)} -S {shlex.quote(str(HOOK_SCRIPT))}"


def default_path(client: str, home: Path) -> Path:
    return {
        "claude-code": home / ".claude" / "settings.json",
        "codex": home / ".codex" / "hooks.json",
        "gemini": home / ".gemini" / "settings.json",
    }[client]


def _entry(client: str, command: str) -> dict[str, Any]:
    if client == "gemini":
        # Gemini CLI counts hook timeouts in milliseconds.
        hook = {"name": "exocortex-orient", "type": "command", "command": command, "timeout": 5000}
        return {"matcher": "*", "hooks": [hook]}
    hook = {"type": "command", "command": command, "timeout": 10}
    return {"matcher": "startup|resume|clear|compact", "hooks": [hook]}


def _read_json(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except ValueError as err:
        raise HookConfigError(f"{path} is not JSON ({err}); fix it first") from None
    if not isinstance(data, dict):
        raise HookConfigError(f"{path} does not hold a JSON object")
    return data


def _backup(path: Path, stamp: str) -> Path | None:
    if not path.exists():
        return None
    copy = path.with_name(f"{path.name}.bak-{stamp}")
    shutil.copy2(path, copy)
    return copy


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


def _has_hook(entries: list[Any]) -> bool:
    return any(
        MARKER in str(hook.get("command", ""))
        for entry in entries
        if isinstance(entry, dict)
        for hook in entry.get("hooks") or []
        if isinstance(hook, dict)
    )


def install(client: str, path: Path, *, command: str | None = None) -> Installed:
    """Adds the SessionStart hook to ``path`` (a backup of what was there first)."""
    if client not in CLIENTS:
        raise HookConfigError(f"unknown client {client!r}: one of {', '.join(CLIENTS)}")
    stamp = datetime.now(UTC).strftime("%Y%m%d%H%M%S")
    data = _read_json(path)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise HookConfigError(f"{path}: 'hooks' is not an object")
    entries = hooks.setdefault("SessionStart", [])
    if not isinstance(entries, list):
        raise HookConfigError(f"{path}: 'hooks.SessionStart' is not a list")
    result = Installed(client, path, None, added=False)
    if not _has_hook(entries):
        entries.append(_entry(client, command or hook_command()))
        result.backup = _backup(path, stamp)
        _write(path, json.dumps(data, indent=2) + "\n")
        result.added = True
    if client == "codex":
        result.notes += _codex_feature(path.parent / "config.toml", stamp)
    return result


def _codex_feature(config: Path, stamp: str) -> list[str]:
    """Codex runs hooks only with `codex_hooks = true` under [features] in its config.toml."""
    text = config.read_text(encoding="utf-8") if config.exists() else ""
    if "codex_hooks" in text:
        return []
    if "[features]" in text:
        return [f"add `codex_hooks = true` under [features] in {config} (Codex runs hooks then)"]
    backup = _backup(config, stamp)
    _write(config, text + ("\n" if text and not text.endswith("\n") else "") + FEATURES)
    note = f"turned on codex_hooks in {config}"
    return [note + (f" (backup {backup})" if backup else "")]


FEATURES = "\n[features]\ncodex_hooks = true\n"
