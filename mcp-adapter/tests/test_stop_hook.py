"""The optional Claude Code stop hook, run as Claude Code runs it: a script fed JSON on stdin."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HOOK = Path(__file__).parents[1] / "hooks" / "stop.py"


def run_hook(event: dict[str, object], *, min_bytes: int = 1000) -> str:
    done = subprocess.run(
        [sys.executable, str(HOOK)],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        env={"EXO_STOP_HOOK_MIN_BYTES": str(min_bytes)},
        check=True,
        timeout=30,
    )
    return done.stdout


def transcript(tmp_path: Path, *tools: str) -> Path:
    path = tmp_path / "session.jsonl"
    entries = [
        {"type": "user", "message": {"content": "x" * 2000}},
        *(
            {"type": "assistant", "message": {"content": [{"type": "tool_use", "name": t}]}}
            for t in tools
        ),
    ]
    path.write_text("\n".join(json.dumps(e) for e in entries) + "\n")
    return path


def test_blocks_a_long_session_without_a_summary(tmp_path: Path) -> None:
    path = transcript(tmp_path, "Edit", "Bash")
    answer = json.loads(run_hook({"transcript_path": str(path), "stop_hook_active": False}))
    assert answer["decision"] == "block"
    assert "memory_store" in answer["reason"]


def test_lets_a_session_that_stored_a_summary_stop(tmp_path: Path) -> None:
    path = transcript(tmp_path, "Edit", "mcp__exocortex__memory_store")
    assert run_hook({"transcript_path": str(path)}) == ""


def test_never_blocks_twice_or_on_short_or_unreadable_sessions(tmp_path: Path) -> None:
    path = transcript(tmp_path, "Edit")
    assert run_hook({"transcript_path": str(path), "stop_hook_active": True}) == ""
    assert run_hook({"transcript_path": str(path)}, min_bytes=10**9) == ""
    assert run_hook({"transcript_path": str(tmp_path / "missing.jsonl")}) == ""
    assert run_hook({}) == ""
