"""Shrink the JSON Schemas pydantic generates, without changing what they accept.

An agent pays for ``tools/list`` in context tokens on every session. Pydantic's schemas repeat a
``title`` per property, spell ``X | None`` as ``anyOf: [X, {type: null}]`` and list
``default: null``; none of that tells the model anything it needs.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer

_SCHEMA_MAPS = ("properties", "$defs", "patternProperties")


def compact(schema: Any, *, output: bool = False) -> Any:
    """Output schemas also lose defaults and descriptions: programs read them, models do not."""
    if isinstance(schema, list):
        return [compact(item, output=output) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" or (key == "default" and (value is None or output)):
            continue
        if output and key == "description" and isinstance(value, str):
            continue
        if key == "additionalProperties" and value is True:
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: compact(sub, output=output) for name, sub in value.items()}
        else:
            out[key] = compact(value, output=output)
    return _merge_nullable(out)


def _merge_nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``anyOf: [{type: T, ...}, {type: null}]`` → ``{type: [T, null], ...}``."""
    options = schema.get("anyOf")
    if not isinstance(options, list) or len(options) != 2 or {"type": "null"} not in options:
        return schema
    other = next(o for o in options if o != {"type": "null"})
    kind = other.get("type")
    if not isinstance(kind, str) or "enum" in other:
        return schema
    merged = {k: v for k, v in schema.items() if k != "anyOf"}
    merged.update(other)
    merged["type"] = [kind, "null"]
    return merged


def compact_tools(server: MCPServer) -> None:
    for tool in server._tool_manager.list_tools():
        tool.parameters = compact(tool.parameters)
        meta = tool.fn_metadata
        if meta.output_schema is not None:
            meta.output_schema = compact(meta.output_schema, output=True)
