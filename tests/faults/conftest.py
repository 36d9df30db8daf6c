"""Fault tests run the stack as ``exo up`` does, including its supervision loop, so a part
killed here is found and started again by the same code that looks after a user's stack."""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from exocortex.core.runtime.stack import Stack

# How often ``exo up`` looks at its children (see exocortex.cli.main.up).
CHECK_INTERVAL_SECONDS = 0.5


@dataclass
class Supervisor:
    """``exo up``'s loop in a thread: ``check_children`` twice a second. ``paused`` holds it
    (a supervisor that is slow to act), so a test can keep a part down while it looks."""

    stack: Stack
    paused: threading.Event = field(default_factory=threading.Event)
    errors: list[BaseException] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def _run(self) -> None:
        while not self._stop.wait(CHECK_INTERVAL_SECONDS):
            if self.paused.is_set():
                continue
            try:
                self.stack.check_children()
            except BaseException as exc:  # surfaced by the test, like exo up's exit
                self.errors.append(exc)
                return


@contextmanager
def supervised(stack: Stack) -> Iterator[Supervisor]:
    supervisor = Supervisor(stack)
    thread = threading.Thread(target=supervisor._run, name="supervisor", daemon=True)
    thread.start()
    try:
        yield supervisor
    finally:
        supervisor._stop.set()
        thread.join(timeout=60)
    assert not supervisor.errors, f"the supervisor gave up: {supervisor.errors[0]}"


@pytest.fixture
def supervise() -> Callable[[Stack], AbstractContextManager[Supervisor]]:
    """``supervise(stack)``: run ``exo up``'s supervision loop while the block runs."""
    return supervised


@pytest.fixture
def data_dir() -> Iterator[Path]:
    """A stack's data directory, outside pytest's temporary root. Run as root, embedded
    Postgres runs as its own account, which must be able to reach its data directory; a pytest
    run started meanwhile resets that root to mode 0700, and the server's own ``pg_ctl`` could
    then no longer reach it."""
    with tempfile.TemporaryDirectory(prefix="exo-faults-", ignore_cleanup_errors=True) as parent:
        yield Path(parent) / "data"
