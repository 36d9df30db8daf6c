"""What a restore document (an export, or a decrypted backup) may carry: every item is held to
the rules of the live write of the same object, before anything is written.

A restore keeps ids, namespaces and timestamps exactly, so they are the part a document can
forge: ids must be ULIDs (as ``exocortex.core.ids`` makes them), namespaces follow the rule of
every write (``exocortex.api.limits.NAMESPACE_PATTERN``, and the caller's scope), text has the
REST limits and no NUL, closed vocabularies are the API's, numbers are finite and in the ranges
the columns hold, timestamps carry a zone, and an embedding is float32 bytes of the model's
dimension. The first item that breaks a rule stops the restore with a 400 naming
``<section>.<index>.<field>``; nothing has been written then.

Settings go through the typed schema of PATCH /api/settings (``setting_schema``). The ``ai.*``
settings (provider, model, base URL, API key) are never restored: they decide where the chat
sends the stored LLM key, so a document could otherwise send it to a host of its choosing.
They are skipped and reported, as are keys this version does not know (it reads none of them).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, get_args

import numpy as np

from exocortex.api import limits
from exocortex.api.vocabulary import (
    ContentType,
    ContradictionStatus,
    EntityType,
    GoalStatus,
    LinkType,
    MilestoneStatus,
    Priority,
    Source,
)
from exocortex.core import scope
from exocortex.core.domain import setting_schema
from exocortex.core.domain.secrets import MASK
from exocortex.core.errors import InvalidArgument
from exocortex.core.ids import is_ulid

# Free text without a REST bound of its own (a relationship's context, a contradiction's
# description, a consolidation's strategy) is bounded here.
CONTEXT_MAX = 20_000
# A memory's content: ingest's default (EXO_MAX_CONTENT_CHARS, read by both services).
CONTENT_MAX_DEFAULT = 200_000
LABEL_MAX = 200
EMBEDDING_DIMENSIONS_MAX = 8192
ENRICHMENT_STATUSES = ("pending", "done", "skipped")
GOAL_LINK_KINDS = ("explicit", "implicit")
_NAMESPACE = re.compile(limits.NAMESPACE_PATTERN)


@dataclass(frozen=True, slots=True)
class Model:
    """The embedding model running now: an embedding it made is kept, so it must fit it."""

    fingerprint: str
    dimensions: int


@dataclass(frozen=True, slots=True)
class SkippedSetting:
    key: str
    reason: str


class _Item:
    """One item of one section, checked field by field; errors name ``section.index.field``."""

    def __init__(self, section: str, index: int, item: Mapping[str, Any]) -> None:
        self.section = section
        self.index = index
        self.item = item

    def fail(self, name: str, message: str) -> InvalidArgument:
        where = f"{self.section}.{self.index}.{name}"
        return InvalidArgument(f"{where}: {message}", field=where)

    def present(self, name: str, required: bool) -> bool:
        if self.item.get(name) is not None:
            return True
        if required:
            raise self.fail(name, "is missing")
        return False

    def ulid(self, name: str, *, required: bool = True) -> None:
        if not self.present(name, required):
            return
        value = self.item[name]
        if not isinstance(value, str) or not is_ulid(value):
            raise self.fail(name, "must be an id as the store makes them (a 26-character ULID)")

    def namespace(self, name: str = "namespace", *, required: bool = True) -> None:
        if not self.present(name, required):
            return
        value = self.item[name]
        if (
            not isinstance(value, str)
            or len(value) > limits.NAMESPACE_MAX
            or not _NAMESPACE.match(value)
        ):
            raise self.fail(
                name,
                f"must be 1-{limits.NAMESPACE_MAX} characters of letters, digits, '.', '_', "
                "':' or '-', starting with a letter or digit",
            )
        scope.require(value, field=f"{self.section}.{self.index}.{name}")

    def text(
        self, name: str, max_chars: int, *, required: bool = False, nonempty: bool = False
    ) -> None:
        if not self.present(name, required):
            return
        value = self.item[name]
        if not isinstance(value, str):
            raise self.fail(name, "must be a string")
        if "\x00" in value:
            raise self.fail(name, "must not contain NUL characters")
        if nonempty and not value.strip():
            raise self.fail(name, "must not be empty")
        if len(value) > max_chars:
            raise self.fail(name, f"is longer than {max_chars} characters")

    def choice(self, name: str, choices: Iterable[str], *, required: bool = False) -> None:
        if not self.present(name, required):
            return
        allowed = tuple(choices)
        if self.item[name] not in allowed:
            raise self.fail(name, "must be one of " + ", ".join(allowed))

    def number(
        self,
        name: str,
        low: float = -math.inf,
        high: float = math.inf,
        *,
        integer: bool = False,
        required: bool = False,
    ) -> None:
        if not self.present(name, required):
            return
        value = self.item[name]
        if isinstance(value, bool) or not isinstance(value, int if integer else int | float):
            raise self.fail(name, "must be a whole number" if integer else "must be a number")
        if not math.isfinite(value) or not low <= value <= high:
            raise self.fail(name, f"must be a finite number from {low:g} to {high:g}")

    def boolean(self, name: str) -> None:
        if self.present(name, False) and not isinstance(self.item[name], bool):
            raise self.fail(name, "must be true or false")

    def timestamp(self, name: str, *, required: bool = False) -> None:
        if not self.present(name, required):
            return
        value = self.item[name]
        try:
            parsed = datetime.fromisoformat(value) if isinstance(value, str) else None
        except ValueError:
            parsed = None
        if parsed is None or parsed.tzinfo is None:
            raise self.fail(name, "must be an ISO 8601 time with its zone")

    def strings(self, name: str, max_count: int, max_chars: int, *, ids: bool = False) -> None:
        if not self.present(name, False):
            return
        values = self.item[name]
        if not isinstance(values, list):
            raise self.fail(name, "must be a list")
        if len(values) > max_count:
            raise self.fail(name, f"holds more than {max_count} items")
        for i, value in enumerate(values):
            if ids and not (isinstance(value, str) and is_ulid(value)):
                raise self.fail(f"{name}.{i}", "must be an id (a 26-character ULID)")
            if not isinstance(value, str) or "\x00" in value or len(value) > max_chars:
                raise self.fail(
                    f"{name}.{i}", f"must be a string of at most {max_chars} characters"
                )

    def mapping(self, name: str) -> None:
        if self.present(name, False) and not isinstance(self.item[name], dict):
            raise self.fail(name, "must be a JSON object")

    def embedding(self, model: Model | None) -> None:
        """Base64 of float32 bytes; when the model that made it runs now, the restore keeps
        it, so it must have that model's dimension (any other is embedded again)."""
        if not self.present("embedding", False):
            return
        raw = self.item["embedding"]
        try:
            data = base64.b64decode(raw, validate=True) if isinstance(raw, str) else b""
        except (binascii.Error, ValueError):
            data = b""
        if not data or len(data) % 4:
            raise self.fail("embedding", "must be base64 of float32 values")
        dimensions = len(data) // 4
        if dimensions > EMBEDDING_DIMENSIONS_MAX:
            raise self.fail("embedding", f"has more than {EMBEDDING_DIMENSIONS_MAX} dimensions")
        if not np.isfinite(np.frombuffer(data, dtype="<f4")).all():
            raise self.fail("embedding", "holds values that are not finite")
        if (
            model is not None
            and self.item.get("embedding_model") == model.fingerprint
            and dimensions != model.dimensions
        ):
            raise self.fail(
                "embedding",
                f"has {dimensions} dimensions ({len(data)} bytes); the model "
                f"{model.fingerprint} makes {model.dimensions}",
            )


def _memory(m: _Item, model: Model | None, max_content_chars: int) -> None:
    m.ulid("id")
    m.namespace()
    m.text("content", max_content_chars, required=True, nonempty=True)
    m.choice("content_type", get_args(ContentType))
    m.choice("source", get_args(Source))
    m.text("source_uri", limits.SOURCE_URI_MAX)
    m.number("importance", 0, 1)
    m.number("valence", -1, 1)
    m.boolean("is_active")
    m.boolean("is_metadata")
    for name in ("parent_id", "consolidated_into", "superseded_by"):
        m.ulid(name, required=False)
    m.number("chunk_index", 0, limits.COUNT_MAX, integer=True)
    m.text("content_hash", LABEL_MAX)
    m.text("keywords", max_content_chars)
    m.text("embedding_model", LABEL_MAX)
    for name in ("provider", "model_id", "model_name", "agent", "session_id", "conversation_id"):
        m.text(name, limits.ATTRIBUTION_MAX)
    m.mapping("metadata")
    m.choice("enrichment_status", ENRICHMENT_STATUSES)
    m.number("version", 1, 2**62, integer=True, required=True)
    m.number("useful_count", 0, 2**31 - 1, integer=True)
    m.number("access_count", 0, 2**31 - 1, integer=True)
    for name in ("created_at", "updated_at", "expires_at", "last_accessed_at"):
        m.timestamp(name)
    m.strings("tags", limits.TAGS_MAX, limits.TAG_CHARS_MAX)
    m.embedding(model)


def _memory_link(i: _Item) -> None:
    i.ulid("source_id")
    i.ulid("target_id")
    i.choice("link_type", get_args(LinkType))
    i.number("strength", 0, 1)
    i.timestamp("created_at")


def _entity(i: _Item) -> None:
    i.ulid("id")
    i.namespace()
    i.text("name", limits.ENTITY_NAME_MAX, required=True, nonempty=True)
    i.choice("type", get_args(EntityType))
    i.strings("aliases", limits.ALIASES_MAX, limits.ENTITY_NAME_MAX)
    i.strings("tags", limits.TAGS_MAX, limits.TAG_CHARS_MAX)
    i.mapping("metadata")
    i.timestamp("created_at")
    i.timestamp("updated_at")


def _memory_entity(i: _Item) -> None:
    i.ulid("memory_id")
    i.ulid("entity_id")
    i.number("relevance")


def _entity_relationship(i: _Item) -> None:
    i.ulid("id")
    i.ulid("source_entity_id")
    i.ulid("target_entity_id")
    i.ulid("memory_id", required=False)
    i.text("relationship", LABEL_MAX, required=True, nonempty=True)
    i.number("confidence")
    i.text("context", CONTEXT_MAX)
    i.timestamp("created_at")


def _goal(i: _Item) -> None:
    i.ulid("id")
    i.namespace()
    i.text("title", limits.GOAL_TITLE_MAX, required=True, nonempty=True)
    i.text("description", limits.GOAL_DESCRIPTION_MAX)
    i.choice("status", get_args(GoalStatus))
    i.choice("priority", get_args(Priority))
    i.mapping("metadata")
    for name in ("deadline", "completed_at", "created_at", "updated_at"):
        i.timestamp(name)


def _milestone(i: _Item) -> None:
    i.ulid("id")
    i.ulid("goal_id")
    i.text("title", limits.GOAL_TITLE_MAX, required=True, nonempty=True)
    i.choice("status", get_args(MilestoneStatus))
    i.number("sort_order", 0, limits.MILESTONE_ORDER_MAX, integer=True, required=True)
    for name in ("deadline", "completed_at", "created_at", "updated_at"):
        i.timestamp(name)


def _goal_link(i: _Item) -> None:
    i.ulid("goal_id")
    i.ulid("memory_id")
    i.number("relevance")
    i.choice("kind", GOAL_LINK_KINDS)
    i.timestamp("created_at")


def _contradiction(i: _Item) -> None:
    i.ulid("id")
    i.ulid("memory_a_id")
    i.ulid("memory_b_id")
    i.text("description", CONTEXT_MAX, required=True)
    i.text("kind", LABEL_MAX)
    i.number("score")
    i.choice("status", get_args(ContradictionStatus))
    i.text("resolution", limits.RESOLUTION_MAX)
    i.timestamp("created_at")
    i.timestamp("updated_at")


def _consolidation(i: _Item) -> None:
    i.ulid("id")
    i.namespace(required=False)
    i.ulid("summary_id", required=False)
    i.strings("source_ids", limits.COUNT_MAX, limits.ID_MAX, ids=True)
    i.text("strategy", LABEL_MAX, required=True)
    i.number("memories_merged", 0, limits.COUNT_MAX, integer=True, required=True)
    i.timestamp("created_at")


_RULES: dict[str, Callable[[_Item], None]] = {
    "memory_links": _memory_link,
    "entities": _entity,
    "memory_entities": _memory_entity,
    "entity_relationships": _entity_relationship,
    "goals": _goal,
    "goal_milestones": _milestone,
    "goal_links": _goal_link,
    "contradictions": _contradiction,
    "consolidations": _consolidation,
}
SECTIONS = ("memories", *_RULES, "settings")


def restorable_settings(values: Mapping[str, Any]) -> tuple[dict[str, str], list[SkippedSetting]]:
    """The settings a restore writes, and those it skips with the reason. A value of a known
    setting that the schema refuses raises ``InvalidArgument`` naming ``settings.<key>``."""
    kept: dict[str, str] = {}
    skipped: list[SkippedSetting] = []
    for key, value in values.items():
        if key.startswith("ai."):
            skipped.append(
                SkippedSetting(
                    key,
                    "ai.* settings choose where the LLM key is sent and are never restored: "
                    "set them with PATCH /api/settings",
                )
            )
            continue
        if key not in setting_schema.SCHEMA:
            skipped.append(SkippedSetting(key, "not a setting of this version"))
            continue
        field = f"settings.{key}"
        if not isinstance(value, str):
            raise InvalidArgument(f"{field}: must be a string", field=field)
        if MASK in value:
            skipped.append(SkippedSetting(key, "a masked secret"))
            continue
        try:
            setting_schema.check(key, value)
        except setting_schema.SettingError as err:
            raise InvalidArgument(f"settings.{err}", field=field) from None
        kept[key] = value
    return kept, skipped


def check_items(
    items: Iterable[tuple[str, Any]], *, model: Model | None, max_content_chars: int
) -> dict[str, int]:
    """Checks every item of a restore document in order; raises ``InvalidArgument`` at the
    first one that breaks a rule. Returns the count of items per section."""
    counts: dict[str, int] = {}
    for section, item in items:
        index = counts.get(section, 0)
        counts[section] = index + 1
        if section not in SECTIONS:
            where = f"{section}.{index}"
            raise InvalidArgument(
                f"{where}: {section!r} is not a section of an export", field=where
            )
        if not isinstance(item, dict):
            where = f"{section}.{index}"
            raise InvalidArgument(f"{where}: must be a JSON object", field=where)
        if section == "settings":
            restorable_settings(item)
        elif section == "memories":
            _memory(_Item(section, index, item), model, max_content_chars)
        else:
            _RULES[section](_Item(section, index, item))
    return counts
