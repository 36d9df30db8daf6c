"""A server process started for one test: ready once its port accepts connections."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO

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
    log_path: Path | None = None,
) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``argv``, wait until 127.0.0.1:``port`` accepts connections (failing the test with
    the tail of its output if it exits or times out first), then stop it (SIGTERM, then
    SIGKILL after ``stop_timeout``).

    Without ``log_path`` only stderr is kept, in a pipe read on failure: enough for a process
    that logs little. A process that logs per request needs ``log_path`` (its stdout and
    stderr go there), or a full pipe would stall it."""
    with ExitStack() as files:
        log: IO[bytes] | None = None
        if log_path is not None:
            log = files.enter_context(log_path.open("ab"))
        process = subprocess.Popen(
            list(argv),
            env=dict(env),
            stdout=log or subprocess.DEVNULL,
            stderr=log or subprocess.PIPE,
        )
        try:
            _wait_listening(process, port, what, start_timeout, log_path)
            yield process
        finally:
            process.terminate()
            try:
                process.wait(timeout=stop_timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_listening(
    process: subprocess.Popen[bytes],
    port: int,
    what: str,
    timeout: float,
    log_path: Path | None,
) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"{what} did not start: {_output_tail(process, log_path)}")
            time.sleep(0.1)


def _output_tail(process: subprocess.Popen[bytes], log_path: Path | None) -> str:
    if log_path is not None:
        return log_path.read_text(errors="replace")[-2000:]
    return process.stderr.read().decode(errors="replace")[-2000:] if process.stderr else ""
