"""The supervisor starts a part again when it exits on its own, and gives up (with the part's
log in the error) when it keeps exiting."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from exocortex.core.runtime.stack import MAX_RESTARTS, Stack, StackConfig, StackError


def _wait_exit(stack: Stack) -> None:
    deadline = time.monotonic() + 20
    while all(c.process.poll() is None for c in stack._children):
        assert time.monotonic() < deadline, "the part never exited"
        time.sleep(0.02)


def _restarted(stack: Stack) -> None:
    """Check the children until the exited part is started again (after its backoff)."""
    before = stack._children[0].process
    deadline = time.monotonic() + 30
    while stack._children[0].process is before:
        assert time.monotonic() < deadline, "the part was never started again"
        stack.check_children()
        time.sleep(0.02)


def test_a_part_that_exits_is_restarted_then_given_up_on(tmp_path: Path) -> None:
    stack = Stack(StackConfig(data_dir=tmp_path))
    stack.log_dir.mkdir(parents=True)
    runs = tmp_path / "runs"
    script = f"import sys; open({str(runs)!r}, 'a').write('x'); print('boom'); sys.exit(3)"
    events: list[str] = []
    stack._say = events.append
    stack._spawn("flaky", [sys.executable, "-c", script])
    try:
        for _ in range(MAX_RESTARTS):
            _wait_exit(stack)
            _restarted(stack)
        _wait_exit(stack)
        with pytest.raises(StackError) as caught:
            stack.check_children()
    finally:
        stack.stop()
    assert runs.read_text() == "x" * (MAX_RESTARTS + 1)
    assert sum("starting it again" in e for e in events) == MAX_RESTARTS
    message = str(caught.value)
    assert "flaky exited with code 3" in message
    assert "boom" in message  # the log's tail travels with the error
    assert "restarted" in (stack.log_dir / "flaky.log").read_text()


def test_a_running_part_is_left_alone(tmp_path: Path) -> None:
    stack = Stack(StackConfig(data_dir=tmp_path))
    stack.log_dir.mkdir(parents=True)
    stack._spawn("steady", [sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        pid = stack._children[0].process.pid
        stack.check_children()
        assert stack._children[0].process.pid == pid
    finally:
        stack.stop()
