"""A killed server that nobody has reaped yet is dead to a supervisor: treating the zombie as
alive made a restart adopt it and wait for a port that never opened."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from exocortex.core.runtime.processes import process_alive


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_a_killed_unreaped_process_is_not_alive() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert process_alive(child.pid)
        os.kill(child.pid, signal.SIGKILL)
        # Not waited for: it stays a zombie, which kill(pid, 0) alone reports as running.
        deadline = time.monotonic() + 10
        while process_alive(child.pid):
            assert time.monotonic() < deadline, "a zombie was reported alive"
            time.sleep(0.05)
        os.kill(child.pid, 0)  # still there as a zombie
    finally:
        child.kill()
        child.wait()
    assert not process_alive(child.pid)
