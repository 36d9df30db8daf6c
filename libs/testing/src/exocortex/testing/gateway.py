"""A second gateway in front of the session stack's services: for tests that need gateway
settings the stack's own gateway does not have (API keys, CORS, limits, a dashboard), without
starting another stack.

It runs as its own process (``python -m exocortex.gateway``), as in production: the harness is a
library and knows the gateway by module name only."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import ExitStack, asynccontextmanager

from exocortex.core.runtime.ports import free_port
from exocortex.core.runtime.stack import Stack
from exocortex.testing.processes import listening_process


def gateway_env(stack: Stack, **env: str) -> dict[str, str]:
    """The environment the stack's gateway gets, with ``env`` (EXO_* names) on top."""
    return {**stack.env(), **env}


@asynccontextmanager
async def serve_gateway(stack: Stack, **env: str) -> AsyncIterator[str]:
    """Serve a gateway built from ``env`` on a free loopback port; yields its base URL."""
    port = free_port()
    child_env = gateway_env(stack, EXO_GATEWAY_HOST="127.0.0.1", EXO_GATEWAY_PORT=str(port), **env)
    gateway = listening_process(
        [sys.executable, "-m", "exocortex.gateway"],
        child_env,
        port,
        what="the gateway",
        log_path=stack.log_dir / f"gateway-{port}.log",
    )
    with ExitStack() as running:
        # Waiting for the port blocks: off the event loop, which the test's clients share.
        await asyncio.to_thread(running.enter_context, gateway)
        yield f"http://127.0.0.1:{port}"
