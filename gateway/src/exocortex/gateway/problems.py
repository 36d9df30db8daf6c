"""Every 4xx/5xx is an RFC 9457 problem document. The seed's clients read ``error``, so it is
kept alongside ``detail`` with the same text."""

from __future__ import annotations

from typing import Any

import grpc
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from exocortex.core.errors import ExoError
from exocortex.core.logging import get_logger
from exocortex.core.rpc.errors import from_rpc_error

log = get_logger(__name__)

STATUS_BY_CODE = {
    "invalid_argument": 400,
    "not_found": 404,
    "conflict": 409,
    "too_large": 413,
    "permission_denied": 403,
    "unavailable": 503,
    "bad_gateway": 502,
    "internal": 500,
}
TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    413: "Content Too Large",
    415: "Unsupported Media Type",
    421: "Misdirected Request",
    422: "Unprocessable Content",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
}


class FieldError(BaseModel):
    field: str
    message: str


class Problem(BaseModel):
    """An RFC 9457 problem document (`application/problem+json`)."""

    type: str = "about:blank"
    title: str = Field(examples=["Bad Request"])
    status: int = Field(examples=[400])
    detail: str = Field(
        description="What went wrong and what to fix.", examples=["content: Field required"]
    )
    error: str = Field(description="The same text as `detail` (seed clients read `error`).")
    field: str | None = Field(
        default=None, description="The request field at fault, dotted.", examples=["content"]
    )
    errors: list[FieldError] | None = Field(
        default=None, description="Every invalid field, for validation errors."
    )


def _doc(description: str) -> dict[str, Any]:
    return {
        "model": Problem,
        "description": description,
        "content": {
            "application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}
        },
    }


# Declared on every /api route, so the OpenAPI document lists the error answers clients get.
PROBLEM_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: _doc("Invalid JSON, or a field is invalid (`field` names it)"),
    401: _doc("No API key, or an unknown one"),
    403: _doc("The API key may not do this (read-only, or another namespace)"),
    404: _doc("Unknown id"),
    409: _doc("Conflicts with existing data"),
    413: _doc("Request body or a field is too large"),
    503: _doc("A backing service is unavailable; retry shortly"),
}


def problem(
    status: int, detail: str, *, field: str = "", extra: dict[str, Any] | None = None
) -> JSONResponse:
    body: dict[str, Any] = {
        "type": "about:blank",
        "title": TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
        "error": detail,
    }
    if field:
        body["field"] = field
    if extra:
        body.update(extra)
    return JSONResponse(body, status_code=status, media_type="application/problem+json")


def _field_path(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path")]
    # A body that may be one of several models (e.g. an import request or an export document)
    # has the member's class name in its error location; clients name fields, not models, and
    # every field of the API is snake_case, so a CamelCase first part is that class name.
    if len(parts) > 1 and loc[:1] == ("body",) and parts[0][:1].isupper():
        parts = parts[1:]
    return ".".join(parts)


def install(app: FastAPI) -> None:
    @app.exception_handler(ExoError)
    async def _exo(_request: Request, exc: ExoError) -> JSONResponse:
        return problem(STATUS_BY_CODE.get(exc.code, 500), exc.message, field=exc.field)

    @app.exception_handler(grpc.aio.AioRpcError)
    async def _rpc(_request: Request, exc: grpc.aio.AioRpcError) -> JSONResponse:
        error = from_rpc_error(exc)
        if error.code == "internal":
            log.error("backend call failed", code=exc.code().name)
        return problem(STATUS_BY_CODE.get(error.code, 500), error.message, field=error.field)

    @app.exception_handler(RequestValidationError)
    async def _validation(_request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = []
        for err in exc.errors():
            if err.get("type") == "json_invalid":
                return problem(400, "Invalid JSON in request body")
            field = _field_path(tuple(err.get("loc", ())))
            errors.append({"field": field, "message": err.get("msg", "invalid")})
        first = errors[0] if errors else {"field": "", "message": "invalid request"}
        detail = f"{first['field']}: {first['message']}" if first["field"] else first["message"]
        return problem(400, detail, field=first["field"], extra={"errors": errors})

    @app.exception_handler(StarletteHTTPException)
    async def _http(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail, field = exc.detail, ""
        if isinstance(detail, dict):
            detail, field = detail.get("detail", ""), detail.get("field", "")
        response = problem(exc.status_code, str(detail), field=str(field))
        for name, value in (exc.headers or {}).items():
            response.headers[name] = value
        return response

    @app.exception_handler(Exception)
    async def _unhandled(_request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error")
        return problem(500, "internal error; the server log has the details")
