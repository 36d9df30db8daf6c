"""FastAPI dependencies."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from exocortex.gateway.backends import Backends


# async on purpose: FastAPI runs a plain `def` dependency on its thread pool, a hand-off per
# request for what is an attribute read.
async def get_backends(request: Request) -> Backends:
    backends: Backends = request.app.state.backends
    return backends


BackendsDep = Annotated[Backends, Depends(get_backends)]
