"""FastAPI dependencies."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from exocortex.gateway.backends import Backends


def get_backends(request: Request) -> Backends:
    backends: Backends = request.app.state.backends
    return backends


BackendsDep = Annotated[Backends, Depends(get_backends)]
