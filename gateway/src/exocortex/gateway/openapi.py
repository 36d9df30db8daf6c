"""The OpenAPI document as clients see it: errors are problem documents answered with 400 (the
framework's default 422 shape is never sent, so it is not advertised), and every /api operation
lists the two API-key schemes."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

_UNUSED_SCHEMAS = ("HTTPValidationError", "ValidationError")


def build_openapi(app: FastAPI) -> dict[str, Any]:
    schema = get_openapi(
        title=app.title,
        version=app.version,
        description=app.description,
        routes=app.routes,
    )
    for path_item in schema.get("paths", {}).values():
        for operation in path_item.values():
            if not isinstance(operation, dict):
                continue
            operation.get("responses", {}).pop("422", None)
    components = schema.setdefault("components", {})
    for name in _UNUSED_SCHEMAS:
        components.get("schemas", {}).pop(name, None)
    return schema
