"""Serves a built single-page dashboard at "/": real files as they are, and index.html for any
other non-API path so client-side routes survive a reload."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from exocortex.core.logging import get_logger

log = get_logger(__name__)

# Paths that are never the dashboard's: an unknown one is a 404 problem, not index.html.
_NOT_DASHBOARD = ("api/", "api", "health", "metrics", "docs", "redoc", "openapi.json")


class SpaFiles(StaticFiles):
    async def get_response(self, path: str, scope: Scope) -> Response:
        try:
            return await super().get_response(path, scope)
        except HTTPException as exc:
            if exc.status_code != 404 or path.startswith(_NOT_DASHBOARD):
                raise
            return await super().get_response("index.html", scope)


def mount_dashboard(app: FastAPI, directory: Path) -> None:
    if not (directory / "index.html").is_file():
        log.warning("dashboard directory has no index.html; not serving it", path=str(directory))
        return
    app.mount("/", SpaFiles(directory=directory, html=True), name="dashboard")
