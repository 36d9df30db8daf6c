"""Tag normalisation: one spelling per concept, applied on every write and every filter."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping

from exocortex.core.domain.text import remove_private

_SEPARATORS = re.compile(r"[\s_]+")
_DASHES = re.compile(r"-{2,}")


def normalize_tag(tag: str, aliases: Mapping[str, str] | None = None) -> str:
    # Private blocks go first: lower-casing and joining words would otherwise turn
    # "<private>x</private>" into an ordinary-looking tag that carries the secret.
    value = _SEPARATORS.sub("-", remove_private(tag).strip().lower())
    value = _DASHES.sub("-", value).strip("-")
    if aliases:
        value = aliases.get(value, value)
    return value


def normalize_tags(tags: Iterable[str], aliases: Mapping[str, str] | None = None) -> list[str]:
    """Normalised, de-duplicated, order kept, empties dropped."""
    seen: dict[str, None] = {}
    for tag in tags:
        value = normalize_tag(tag, aliases)
        if value:
            seen.setdefault(value, None)
    return list(seen)


def alias_map(settings: Mapping[str, str]) -> dict[str, str]:
    """Aliases from settings: the ``tags.alias_map`` JSON object plus ``tag_alias.<from>`` keys."""
    result: dict[str, str] = {}
    raw = settings.get("tags.alias_map")
    if raw:
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError:
            parsed = {}
        if isinstance(parsed, dict):
            result.update({str(k).lower(): str(v).lower() for k, v in parsed.items()})
    for key, value in settings.items():
        if key.startswith("tag_alias.") and value:
            result[key.removeprefix("tag_alias.").lower()] = value.strip().lower()
    return result


def expand_aliases(tags: Iterable[str], aliases: Mapping[str, str]) -> list[str]:
    """For filtering: a tag matches its canonical form and every alias of it (both directions)."""
    wanted = set(normalize_tags(tags, aliases))
    for alias, canonical in aliases.items():
        if canonical in wanted:
            wanted.add(alias)
    return sorted(wanted)
