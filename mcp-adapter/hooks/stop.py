#!/usr/bin/env python3
"""Claude Code Stop hook: remind the agent, once, to store a summary of a substantial session.

Off by default; enable it in ~/.claude/settings.json (see docs/mcp.md). Claude Code passes the
hook a JSON object on stdin with ``transcript_path`` and ``stop_hook_active``. When the
transcript is large (EXO_STOP_HOOK_MIN_BYTES, default 50 KB) and the session never called an
Exocortex store or digest tool, the hook answers ``{"decision": "block", "reason": ...}`` so the
agent stores a summary first. It never blocks twice in a row (``stop_hook_active``), and any
problem reading its input lets the session stop: a reminder must never trap an agent.

Standard library only, so any python3 can run it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

DEFAULT_MIN_BYTES = 50_000
# Tool names as Claude Code shows MCP tools: mcp__<server>__<tool>.
SUMMARY_TOOLS = ("memory_store", "memory_digest_session", "goal_log")
REASON = (
    "Before you stop: this was a substantial session and nothing was stored in Exocortex. "
    "Store a short summary with memory_store (what changed, decisions and why, open threads; "
    "tags such as the project name and 'session-summary'), or call memory_digest_session with "
    "this session's transcript_path (a local Exocortex MCP server) or its text as transcript "
    "(a remote one). Then stop."
)


def stored_a_summary(transcript: Path) -> bool:
    with transcript.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            if '"tool_use"' not in line:
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            for block in (entry.get("message") or {}).get("content") or []:
                name = block.get("name", "") if isinstance(block, dict) else ""
                if block.get("type") == "tool_use" and name.endswith(SUMMARY_TOOLS):
                    return True
    return False


def decide(event: dict[str, Any], min_bytes: int = DEFAULT_MIN_BYTES) -> dict[str, str] | None:
    """The hook's answer: a block with the reminder, or None to let the session stop."""
    if event.get("stop_hook_active"):
        return None
    path = event.get("transcript_path")
    if not path:
        return None
    transcript = Path(path).expanduser()
    try:
        if transcript.stat().st_size < min_bytes or stored_a_summary(transcript):
            return None
    except OSError:
        return None
    return {"decision": "block", "reason": REASON}


def main() -> int:
    try:
        event = json.load(sys.stdin)
        min_bytes = int(os.environ.get("EXO_STOP_HOOK_MIN_BYTES", DEFAULT_MIN_BYTES))
    except ValueError:
        return 0
    answer = decide(event, min_bytes) if isinstance(event, dict) else None
    if answer:
        print(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
