"""Input rules for stored memories. The gateway validates shapes; this is the authority on
values, so every entry point (REST, MCP through REST, imports) gets the same answers."""

from __future__ import annotations

import json
import re
from typing import Any, get_args

from exocortex.api.limits import NAMESPACE_MAX, NAMESPACE_PATTERN, TAG_CHARS_MAX, TAGS_MAX
from exocortex.api.vocabulary import ContentType, Source
from exocortex.core import scope
from exocortex.core.domain.text import strip_private_field, strip_private_json
from exocortex.core.errors import InvalidArgument, TooLarge

# The API's vocabularies and limits (exocortex.api), checked again for every entry point.
CONTENT_TYPES: tuple[str, ...] = get_args(ContentType)
SOURCES: tuple[str, ...] = get_args(Source)
_NAMESPACE = re.compile(NAMESPACE_PATTERN)
MAX_TAGS = TAGS_MAX


def check_namespace(namespace: str) -> str:
    value = namespace.strip() or "default"
    if len(value) > NAMESPACE_MAX or not _NAMESPACE.match(value):
        raise InvalidArgument(
            f"namespace must be 1-{NAMESPACE_MAX} characters of letters, digits, '.', '_', ':' "
            "or '-', starting with a letter or digit",
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
        if len(tag) > TAG_CHARS_MAX:
            raise InvalidArgument(f"a tag is at most {TAG_CHARS_MAX} characters", field=f"tags.{i}")
