"""Fault tests run the stack as ``exo up`` does, including its supervision loop, so a part
killed here is found and started again by the same code that looks after a user's stack."""

from __future__ import annotations

import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from exocortex.core.runtime.stack import Stack, StackConfig

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


# One stack for the tests that kill its parts (each used to start its own: about 20 s apiece).
# Durable commits, as `exo up` runs it: a store acknowledged just before Postgres is killed must
# survive. Started at the first test that asks for it, stopped after the last one (counted at
# collection), so it is not kept running through the rest of the session.
FAULT_STACK_ENV = {"EXO_STORE_WAIT_MS": "1000"}
HEALTHY_WITHIN_SECONDS = 120.0


@dataclass
class _FaultStack:
    users: int = 0
    stack: Stack | None = None
    folder: tempfile.TemporaryDirectory[str] | None = None

    def get(self) -> Stack:
        if self.stack is None:
            # Outside pytest's temporary root, as for ``data_dir``.
            self.folder = tempfile.TemporaryDirectory(
                prefix="exo-faults-", ignore_cleanup_errors=True
            )
            config = StackConfig.with_free_ports(
                Path(self.folder.name) / "data", postgres_fsync=True, extra_env=FAULT_STACK_ENV
            )
            self.stack = Stack(config, on_event=print)
            self.stack.start(timeout=300)
        self._healthy(self.stack)
        return self.stack

    @staticmethod
    def _healthy(stack: Stack) -> None:
        """Whatever the previous test left down is started again (as ``exo up`` would) and the
        stack answers healthy before the next test has it."""
        deadline = time.monotonic() + HEALTHY_WITHIN_SECONDS
        last = ""
        with httpx.Client(base_url=stack.gateway_url, timeout=5) as client:
            while time.monotonic() < deadline:
                stack.check_children()
                try:
                    reply = client.get("/health")
                    if reply.status_code == 200:
                        return
                    last = reply.text
                except httpx.TransportError as exc:
                    last = repr(exc)
                time.sleep(CHECK_INTERVAL_SECONDS)
        raise AssertionError(f"the fault stack is not healthy again: {last}")

    def release(self) -> None:
        self.users -= 1
        if self.users <= 0:
            self.close()

    def close(self) -> None:
        if self.stack is not None:
            self.stack.stop()
            self.stack = None
        if self.folder is not None:
            self.folder.cleanup()
            self.folder = None


_fault_stack = _FaultStack()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    _fault_stack.users = sum(
        1 for item in items if "fault_stack" in getattr(item, "fixturenames", ())
    )


@pytest.fixture
def fault_stack() -> Iterator[Stack]:
    """The shared stack of the fault tests, healthy, every part running."""
    try:
        yield _fault_stack.get()
    finally:
        _fault_stack.release()


@pytest.fixture(scope="session", autouse=True)
def _fault_stack_stopped() -> Iterator[None]:
    """Stopped at the end of the session whatever happened (a run cut short)."""
    yield
    _fault_stack.close()
