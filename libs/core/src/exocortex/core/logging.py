"""Structured logging: JSON in containers, readable console output in a terminal.

A correlation id travels with each request (gRPC metadata ``x-correlation-id``, NATS header
``X-Correlation-Id``) and is bound into every log line while the request is handled.
"""

from __future__ import annotations

import logging
import sys
from contextvars import ContextVar

import structlog

from exocortex.core.ids import new_id

correlation_id: ContextVar[str] = ContextVar("correlation_id", default="")

CORRELATION_HEADER = "x-correlation-id"


def current_correlation_id(create: bool = False) -> str:
    value = correlation_id.get()
    if not value and create:
        value = new_id()
        correlation_id.set(value)
    return value


def _add_correlation_id(
    _logger: object, _name: str, event: structlog.typing.EventDict
) -> structlog.typing.EventDict:
    cid = correlation_id.get()
    if cid:
        event.setdefault("correlation_id", cid)
    return event


def configure_logging(service: str, *, fmt: str = "auto", level: str = "info") -> None:
    """Configure structlog and the stdlib root logger once per process."""
    use_json = fmt == "json" or (fmt == "auto" and not sys.stderr.isatty())
    numeric_level = logging.getLevelName(level.upper())
    if not isinstance(numeric_level, int):
        numeric_level = logging.INFO
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if use_json
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    shared: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _add_correlation_id,
    ]
    structlog.configure(
        processors=[*shared, structlog.processors.format_exc_info, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(numeric_level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    structlog.contextvars.bind_contextvars(service=service)
    # Route stdlib logging (grpc, nats, uvicorn, alembic) through the same renderer.
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processor=renderer, foreign_pre_chain=[*shared, structlog.stdlib.ExtraAdder()]
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(
        max(numeric_level, logging.INFO) if numeric_level < logging.INFO else numeric_level
    )


def get_logger(name: str | None = None) -> structlog.stdlib.BoundLogger:
    logger: structlog.stdlib.BoundLogger = structlog.get_logger(name)
    return logger
