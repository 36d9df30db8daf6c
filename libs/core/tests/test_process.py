"""The event loop every service runs on, and its stop on SIGTERM."""

from __future__ import annotations

import importlib.util
import signal
import subprocess
import sys
import textwrap

import pytest

from exocortex.core import process

_SERVICE = textwrap.dedent(
    """
    import asyncio, sys
    from exocortex.core.process import run_until_signalled

    async def main(stop):
        print(type(asyncio.get_running_loop()).__module__, flush=True)
        await stop.wait()
        print("stopped", flush=True)

    run_until_signalled(main, sys.argv[1])
    """
)


@pytest.mark.parametrize(("wanted", "module"), [("uvloop", "uvloop"), ("asyncio", "asyncio")])
def test_a_service_runs_on_the_loop_asked_for_and_stops_on_sigterm(
    wanted: str, module: str
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", _SERVICE, wanted], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().strip()
        assert first.startswith(module), first
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 0
    assert rest.strip() == "stopped"


def test_without_uvloop_installed_the_standard_loop_is_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "uvloop" else real(name, *a)
    )
    assert process.event_loop("uvloop") == "asyncio"
    assert process.event_loop("asyncio") == "asyncio"


def test_uvloop_is_the_default() -> None:
    assert process.event_loop("uvloop") == "uvloop"
    assert process.CommonSettings().event_loop == "uvloop"
