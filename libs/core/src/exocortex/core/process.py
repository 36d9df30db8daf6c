"""Process lifecycle shared by every service: signals → a stop event, metrics endpoint."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable
from typing import TypeVar

from prometheus_client import start_http_server

from exocortex.core.config import CommonSettings
from exocortex.core.logging import configure_logging, get_logger

S = TypeVar("S", bound=CommonSettings)

log = get_logger(__name__)


def serve_metrics(port: int, host: str = "0.0.0.0") -> None:
    """Expose /metrics on ``port`` (0 disables it)."""
    if port:
        start_http_server(port, addr=host)
        log.info("metrics listening", port=port)


def run_until_signalled(main: Callable[[asyncio.Event], Awaitable[None]]) -> None:
    """Run ``main(stop)`` until it returns; SIGINT/SIGTERM set ``stop`` for a graceful exit."""

    async def _runner() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await main(stop)

    asyncio.run(_runner())


def run_service(name: str, settings: S, run: Callable[[S, asyncio.Event], Awaitable[None]]) -> None:
    """The whole of every service's ``__main__``: log set-up, then ``run`` until signalled."""
    configure_logging(name, fmt=settings.log_format, level=settings.log_level)

    async def _main(stop: asyncio.Event) -> None:
        await run(settings, stop)

    run_until_signalled(_main)
