"""Process lifecycle shared by every service: signals → a stop event, metrics endpoint, and the
event loop it all runs on."""

from __future__ import annotations

import asyncio
import importlib.util
import signal
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from prometheus_client import start_http_server

from exocortex.core.config import CommonSettings, EventLoop
from exocortex.core.logging import configure_logging, get_logger
from exocortex.core.reference_env import note_aliases

S = TypeVar("S", bound=CommonSettings)
T = TypeVar("T")

log = get_logger(__name__)


def serve_metrics(port: int, host: str = "127.0.0.1") -> None:
    """Expose /metrics on ``host``:``port`` (0 disables it)."""
    if port:
        start_http_server(port, addr=host)
        log.info("metrics listening", host=host, port=port)


def event_loop(wanted: EventLoop) -> EventLoop:
    """The loop to run: uvloop unless the standard one is asked for or uvloop is not installed
    (it has no Windows build).

    Why uvloop: a search crosses five event loops (HTTP in, gRPC, Postgres, NATS) and each hop's
    callbacks run in C there instead of Python. Alternating runs at 100k memories: sequential
    p50/p95 25.1/34.3 and 26.0/34.0 ms against 28.7/38.0 and 30.4/39.6 ms on asyncio's loop.
    """
    if wanted == "uvloop" and importlib.util.find_spec("uvloop") is None:
        log.warning("uvloop is not installed; running on asyncio's event loop")
        return "asyncio"
    return wanted


def run_loop(main: Coroutine[Any, Any, T], loop: EventLoop = "uvloop") -> T:
    """``asyncio.run(main)`` on the event loop ``loop`` names (see `event_loop`)."""
    if event_loop(loop) == "uvloop":
        import uvloop

        return uvloop.run(main)
    return asyncio.run(main)


def run_until_signalled(
    main: Callable[[asyncio.Event], Awaitable[None]], loop: EventLoop = "uvloop"
) -> None:
    """Run ``main(stop)`` until it returns; SIGINT/SIGTERM set ``stop`` for a graceful exit."""

    async def _runner() -> None:
        stop = asyncio.Event()
        running = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            running.add_signal_handler(sig, stop.set)
        await main(stop)

    run_loop(_runner(), loop)


def run_service(name: str, settings: S, run: Callable[[S, asyncio.Event], Awaitable[None]]) -> None:
    """The whole of every service's ``__main__``: log set-up, then ``run`` until signalled."""
    configure_logging(name, fmt=settings.log_format, level=settings.log_level)
    note_aliases(settings, log)

    async def _main(stop: asyncio.Event) -> None:
        await run(settings, stop)

    run_until_signalled(_main, settings.event_loop)
