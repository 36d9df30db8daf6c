"""A killed server that nobody has reaped yet is dead to a supervisor: treating the zombie as
alive made a restart adopt it and wait for a port that never opened. Postgres itself refuses to
start while it lingers, so a restart waits for it to be reaped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from exocortex.core.runtime.postgres import EmbeddedPostgres
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


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_postgres_waits_until_its_killed_predecessor_is_reaped(tmp_path: Path) -> None:
    # Postgres will not start while the pid in its lock file exists, zombie or not.
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    data_dir = tmp_path / "postgres"
    data_dir.mkdir()
    (data_dir / "postmaster.pid").write_text(f"{child.pid}\n{data_dir}\n")
    os.kill(child.pid, signal.SIGKILL)
    reaper = threading.Timer(0.5, child.wait)
    reaper.start()
    started = time.monotonic()
    try:
        EmbeddedPostgres(data_dir, port=5432)._wait_for_unreaped_server(timeout=10)
    finally:
        reaper.join()
    waited = time.monotonic() - started
    assert 0.4 < waited < 5, f"returned after {waited:.1f}s"
