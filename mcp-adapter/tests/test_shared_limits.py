"""The tools' argument bounds come from the REST API's own schemas and limits: a value a tool
accepts is one the gateway accepts too (no stack needed: the schemas are compared)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from exocortex.api import limits
from exocortex.api.goals import GoalCreate, MilestonePatch
from exocortex.api.memories import MemoryCreate
from exocortex.api.search import FeedbackBody, SearchBody
from exocortex.api.writes import IngestRequest, LinkCreate
from exocortex.mcp.server import create_server
from exocortex.mcp.settings import McpSettings
from exocortex.mcp.tools.writes import MAX_INGEST_FILES


def _tool_args() -> dict[str, dict[str, Any]]:
    server = create_server(McpSettings())
    return {t.name: t.parameters["properties"] for t in server._tool_manager.list_tools()}


def _rest(model: type[BaseModel], field: str) -> dict[str, Any]:
    prop: dict[str, Any] = model.model_json_schema()["properties"][field]
    # `X | None` is `anyOf: [X, null]` in pydantic's schema: the bounds sit on X.
    return next((o for o in prop.get("anyOf", []) if o.get("type") != "null"), prop)


def _enum(prop: dict[str, Any]) -> set[str]:
    """The words a (possibly nullable, possibly compacted) enum accepts."""
    options = prop.get("anyOf", [prop])
    return {word for o in options for word in o.get("enum", [])}


def test_search_limits_stay_within_the_rest_bound() -> None:
    args = _tool_args()
    rest_max = _rest(SearchBody, "limit")["maximum"]
    assert rest_max == limits.SEARCH_LIMIT_MAX
    for tool in ("memory_search", "memory_context"):
        assert 1 <= args[tool]["limit"]["maximum"] <= rest_max, tool
    assert (
        args["memory_search"]["max_tokens"]["maximum"] == _rest(SearchBody, "max_tokens")["maximum"]
    )


def test_list_bounds_are_the_rest_ones() -> None:
    args = _tool_args()
    assert args["memory_feedback"]["ids"]["maxItems"] == _rest(FeedbackBody, "ids")["maxItems"]
    assert args["memory_store"]["tags"]["maxItems"] == _rest(MemoryCreate, "tags")["maxItems"]
    # memory_ingest checks the count itself (a glob is expanded after the call arrives).
    assert _rest(IngestRequest, "files")["maxItems"] == MAX_INGEST_FILES


def test_tool_vocabularies_are_the_rest_ones() -> None:
    args = _tool_args()
    assert _enum(args["memory_store"]["content_type"]) == set(
        _rest(MemoryCreate, "content_type")["enum"]
    )
    assert _enum(args["memory_link"]["link_type"]) == set(_rest(LinkCreate, "link_type")["enum"])
    assert _enum(args["goal_create"]["priority"]) == set(_rest(GoalCreate, "priority")["enum"])
    assert _enum(args["goal_update_milestone"]["status"]) == set(
        _rest(MilestonePatch, "status")["enum"]
    )
