"""A second gateway, in-process, in front of the session stack's services: for tests that need
gateway settings the stack's own gateway does not have (API keys, CORS, limits, a dashboard),
without starting another stack."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import uvicorn

from exocortex.cli.stack import Stack
from exocortex.core.runtime.ports import free_port
from exocortex.gateway.app import create_app
from exocortex.gateway.settings import GatewaySettings


def gateway_settings(stack: Stack, **env: str) -> GatewaySettings:
    """Settings as the stack's gateway gets them, with ``env`` (EXO_* names) on top."""
    values = {k: v for k, v in stack.env().items() if k.startswith("EXO_")}
    values.update(env)
    with pytest.MonkeyPatch.context() as patch:
        for key, value in values.items():
            patch.setenv(key, value)
        return GatewaySettings()


@asynccontextmanager
async def serve_gateway(stack: Stack, **env: str) -> AsyncIterator[str]:
    """Serve a gateway built from ``env`` on a free loopback port; yields its base URL."""
    port = free_port()
    settings = gateway_settings(stack, EXO_GATEWAY_PORT=str(port), **env)
    config = uvicorn.Config(
        create_app(settings), host="127.0.0.1", port=port, log_config=None, lifespan="on"
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
            raise RuntimeError("the gateway stopped during start-up")
        await asyncio.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
