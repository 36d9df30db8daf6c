"""Serves the built dashboard (``dashboard/dist``) at "/": real files as they are, and
index.html for any other path that is not the API's, so client-side routes survive a reload.

Caching: the build names every file under ``assets/`` by a hash of its content, so those are
cached for a year and never revalidated; everything else (index.html above all, which names
the current hashes) is ``no-cache``, so a new build is seen on the next load."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from exocortex.core.logging import get_logger

log = get_logger(__name__)

# First path segments that are never the dashboard's: an unknown one there is the API's 404
# problem, not index.html.
NOT_DASHBOARD = frozenset({"api", "health", "metrics", "docs", "redoc", "openapi.json"})
# Where the build puts its content-hashed files.
HASHED_DIR = "assets"
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"


def _first_segment(path: str) -> str:
    return path.lstrip("/").split("/", 1)[0]


class SpaFiles(StaticFiles):
    async def get_response(self, path: str, scope: Scope) -> Response:
        segment = _first_segment(path)
        try:
            response = await super().get_response(path, scope)
        except HTTPException as exc:
            # A missing hashed file stays a 404: index.html in its place would be cached as
            # JavaScript for a year.
            if exc.status_code != 404 or segment in NOT_DASHBOARD or segment == HASHED_DIR:
                raise
            response = await super().get_response("index.html", scope)
            response.headers["Cache-Control"] = REVALIDATE
            return response
        hashed = segment == HASHED_DIR and response.status_code in (200, 304)
        response.headers["Cache-Control"] = IMMUTABLE if hashed else REVALIDATE
        return response


def checkout_dashboard() -> Path | None:
    """dashboard/dist of the source checkout this gateway runs from (`make install` builds
    it), so `exo up` serves the UI without configuration; None when it is not built."""
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "dashboard" / "dist"
        if (candidate / "index.html").is_file():
            return candidate
        if (parent / ".git").exists():
            break
    return None


def mount_dashboard(app: FastAPI, directory: Path) -> None:
    if not (directory / "index.html").is_file():
        log.warning("dashboard directory has no index.html; not serving it", path=str(directory))
        return
    app.mount("/", SpaFiles(directory=directory, html=True), name="dashboard")
