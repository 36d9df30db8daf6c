"""Input rules for stored memories. The gateway validates shapes; this is the authority on
values, so every entry point (REST, MCP through REST, imports) gets the same answers."""

from __future__ import annotations

import json
import re
from typing import Any

from exocortex.core import scope
from exocortex.core.domain.text import strip_private_field, strip_private_json
from exocortex.core.errors import InvalidArgument, TooLarge

CONTENT_TYPES = ("text", "note", "decision", "conversation", "summary")
SOURCES = ("manual", "cli", "api", "mcp", "browser", "import", "consolidation", "digest")
_NAMESPACE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")
MAX_TAGS = 50


def check_namespace(namespace: str) -> str:
    value = namespace.strip() or "default"
    if not _NAMESPACE.match(value):
        raise InvalidArgument(
            "namespace must be 1-128 characters of letters, digits, '.', '_', ':' or '-', "
            "starting with a letter or digit",
            field="namespace",
        )
    # Every write names its namespace through here: the caller's key must allow it.
    return scope.require(value)


def check_content(content: str, max_chars: int) -> None:
    if not content.strip():
        raise InvalidArgument("content must not be empty", field="content")
    if len(content) > max_chars:
        raise TooLarge(
            f"content is {len(content)} characters; the limit is {max_chars}", field="content"
        )


def check_choice(value: str, choices: tuple[str, ...], field: str) -> str:
    if value not in choices:
        raise InvalidArgument(f"{field} must be one of: {', '.join(choices)}", field=field)
    return value


def check_range(value: float, low: float, high: float, field: str) -> float:
    if not low <= value <= high:
        raise InvalidArgument(f"{field} must be between {low} and {high}", field=field)
    return value


def parse_metadata(raw: str) -> dict[str, Any]:
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InvalidArgument("metadata must be a JSON object", field="metadata") from exc
    if not isinstance(value, dict):
        raise InvalidArgument("metadata must be a JSON object", field="metadata")
    # Every metadata write (memories, goals, entities) comes through here.
    cleaned: dict[str, Any] = strip_private_json(value)
    return cleaned


def optional_text(value: str) -> str | None:
    """A free-text field that may be absent (source uri, attribution): without its private
    blocks, trimmed, None when nothing public is left."""
    return strip_private_field(value) or None


def required_text(value: str, field: str) -> str:
    """A free-text field that must say something once its private blocks are gone."""
    cleaned = strip_private_field(value)
    if not cleaned and value.strip():
        raise InvalidArgument(
            f"{field} is empty after removing <private> blocks; give some public text",
            field=field,
        )
    return cleaned


def check_tags(tags: list[str]) -> None:
    if len(tags) > MAX_TAGS:
        raise InvalidArgument(f"at most {MAX_TAGS} tags per memory", field="tags")
    for i, tag in enumerate(tags):
        if len(tag) > 100:
            raise InvalidArgument("a tag is at most 100 characters", field=f"tags.{i}")
