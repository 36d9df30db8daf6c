"""Children of the supervisor run niced when asked, and die with it when it is killed."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="parent-death signal is Linux")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        with open(f"/proc/{pid}/stat") as stat:
            # A zombie (exited, not yet reaped) counts as gone.
            return stat.read().split()[2] != "Z"
    except (ProcessLookupError, FileNotFoundError):
        return False


def test_a_child_is_niced_and_dies_with_a_killed_supervisor() -> None:
    supervisor = textwrap.dedent(
        """
        import subprocess, sys, time
        from exocortex.core.runtime.stack import _child_setup
        child = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(60)"],
            preexec_fn=_child_setup(7),
        )
        print(child.pid, flush=True)
        time.sleep(60)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", supervisor], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child_pid = int(parent.stdout.readline())
    try:
        parent_nice = os.getpriority(os.PRIO_PROCESS, parent.pid)
        assert os.getpriority(os.PRIO_PROCESS, child_pid) - parent_nice == 7
        parent.kill()  # no chance to clean up
        parent.wait()
        deadline = time.monotonic() + 10
        while _alive(child_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(child_pid)
    finally:
        if _alive(child_pid):
            os.kill(child_pid, 9)
