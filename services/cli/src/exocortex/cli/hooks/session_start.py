#!/usr/bin/env python3
"""SessionStart hook: orient an agent at the start of a session from Exocortex, over REST.

Claude Code, Codex and Gemini CLI run it when a session starts (`exo hooks install <client>`
writes their config). It reads the hook's JSON on stdin (``cwd``), names the project after the
working folder, and asks the gateway for the project's snapshot (recent memories of the last
7 days, decisions, open threads, active goals with their milestones) and the pending
contradictions, both at once. It prints one JSON object whose
``hookSpecificOutput.additionalContext`` the client adds to the session.

Standard library only and started without site packages (``python3 -S``), so it costs tens of
milliseconds. When the stack is down, slow, or answers anything unexpected, it prints nothing
and exits 0: an orientation must never stand in a session's way.

Gateway and key: EXO_URL / EXO_API_KEY, else exo's config file (EXO_CONFIG, else
$XDG_CONFIG_HOME/exocortex/config.toml); EXO_HOOK_NAMESPACE picks a namespace.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

DEFAULT_URL = "http://127.0.0.1:3210"
TIMEOUT_SECONDS = 2.0
DAYS = 7
PREVIEW_CHARS = 160
CONTRADICTIONS_SHOWN = 3


def _config() -> tuple[str, str | None]:
    url, key = os.environ.get("EXO_URL"), os.environ.get("EXO_API_KEY")
    if not url or not key:
        explicit = os.environ.get("EXO_CONFIG")
        base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
        path = Path(explicit) if explicit else Path(base) / "exocortex" / "config.toml"
        try:
            import tomllib

            data = tomllib.loads(path.read_text())
        except (OSError, ValueError, ImportError):
            data = {}
        url = url or (data.get("url") if isinstance(data.get("url"), str) else None)
        key = key or (data.get("api_key") if isinstance(data.get("api_key"), str) else None)
    root = (url or DEFAULT_URL).rstrip("/").removesuffix("/api")
    return root, key or None


def _get(root: str, key: str | None, path: str, params: dict[str, Any]) -> Any:
    query = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
    request = urllib.request.Request(f"{root}{path}?{query}")
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as reply:
        return json.loads(reply.read())


def _line(item: dict[str, Any]) -> str:
    text = " ".join(str(item.get("preview") or item.get("content") or "").split())
    if len(text) > PREVIEW_CHARS:
        text = text[: PREVIEW_CHARS - 1] + "…"
    return f"- {text} ({item.get('id')})"


def orientation(project: str, snapshot: dict[str, Any], pending: list[dict[str, Any]]) -> str:
    """The text the agent starts with; empty when Exocortex knows nothing of the project."""
    parts: list[str] = []
    for title, key in (
        (f"Recent memories of {project} (last {DAYS} days)", "recent"),
        ("Decisions", "decisions"),
        ("Open threads", "open_threads"),
    ):
        rows = snapshot.get(key) or []
        if rows:
            parts.append(f"{title}:\n" + "\n".join(_line(r) for r in rows))
    goals = snapshot.get("goals") or []
    if goals:
        lines = []
        for goal in goals:
            milestones = goal.get("milestones") or []
            done = sum(1 for m in milestones if m.get("status") == "completed")
            counted = f", milestones {done}/{len(milestones)}" if milestones else ""
            about = f"priority {goal.get('priority')}{counted}; {goal.get('id')}"
            lines.append(f"- {goal.get('title')} ({about})")
        parts.append("Active goals:\n" + "\n".join(lines))
    if pending:
        shown = "\n".join(
            f"- {c.get('memory_a_preview', '')[:80]!r} vs {c.get('memory_b_preview', '')[:80]!r}"
            for c in pending[:CONTRADICTIONS_SHOWN]
        )
        more = len(pending) - CONTRADICTIONS_SHOWN
        parts.append(
            f"Pending contradictions: {len(pending)}"
            + (f" (showing {CONTRADICTIONS_SHOWN})" if more > 0 else "")
            + f"\n{shown}\nResolve them with memory_contradictions."
        )
    if not parts:
        return ""
    head = (
        f"Exocortex memory for {project} (search it with memory_search; store decisions and a "
        "summary with memory_store):"
    )
    return "\n\n".join([head, *parts])


def main() -> int:
    try:
        event = json.loads(sys.stdin.read() or "{}")
    except ValueError:
        event = {}
    cwd = event.get("cwd") if isinstance(event, dict) else None
    project = Path(cwd if isinstance(cwd, str) and cwd else os.getcwd()).name
    if not project:
        return 0
    root, key = _config()
    namespace = os.environ.get("EXO_HOOK_NAMESPACE") or None
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            snapshot = pool.submit(
                _get,
                root,
                key,
                "/api/snapshot",
                {"project": project, "namespace": namespace, "days": DAYS},
            )
            contradictions = pool.submit(
                _get,
                root,
                key,
                "/api/contradictions",
                {"status": "pending", "namespace": namespace, "limit": 50},
            )
            found, pending = snapshot.result(), contradictions.result()
        text = orientation(project, found, pending if isinstance(pending, list) else [])
    except Exception:  # the stack is down, slow or answered oddly: say nothing, never fail
        return 0
    if text:
        answer = {
            "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}
        }
        sys.stdout.write(json.dumps(answer) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
