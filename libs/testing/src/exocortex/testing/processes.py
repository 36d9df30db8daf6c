"""A server process started for one test: ready once its port accepts connections."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

import pytest


@contextmanager
def listening_process(
    argv: Sequence[str],
    env: Mapping[str, str],
    port: int,
    *,
    what: str,
    start_timeout: float = 60.0,
    stop_timeout: float = 15.0,
) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``argv``, wait until 127.0.0.1:``port`` accepts connections (failing the test with
    the tail of its stderr if it exits or times out first), then stop it (SIGTERM, then
    SIGKILL after ``stop_timeout``)."""
    process = subprocess.Popen(
        list(argv), env=dict(env), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + start_timeout
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    err = process.stderr.read().decode() if process.stderr else ""
                    pytest.fail(f"{what} did not start: {err[-2000:]}")
                time.sleep(0.1)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=stop_timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
