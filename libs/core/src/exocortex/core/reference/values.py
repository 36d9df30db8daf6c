"""Reading the reference's values: its UTC time text, JSON kept as text, 0/1 flags, and the
limits a value must fit here (a longer one is cut, or its row left out, and reported)."""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import UTC, datetime
from typing import Any

from exocortex.api.limits import NAMESPACE_MAX, NAMESPACE_PATTERN
from exocortex.core.reference.model import LeftOut

DEFAULT_NAMESPACE = "default"


class Report:
    """What does not come across (or not as it was), counted by kind and reason."""

    def __init__(self) -> None:
        self._counts: Counter[tuple[str, str]] = Counter()

    def add(self, kind: str, reason: str, n: int = 1) -> None:
        self._counts[(kind, reason)] += n

    def items(self) -> list[LeftOut]:
        return [LeftOut(k, n, r) for (k, r), n in sorted(self._counts.items())]


def when(value: Any) -> str | None:
    """The reference's UTC text (``2026-01-02 03:04:05.678``, a date, or ISO with ``Z``) as
    ISO 8601 with its zone; None when absent or unreadable."""
    if value is None or value == "":
        return None
    text = str(value).strip().replace(" ", "T", 1)
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.isoformat()


def parsed_json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return None
    return value


def mapping(value: Any) -> dict[str, Any]:
    parsed = parsed_json(value)
    if parsed is None:
        return {}
    return parsed if isinstance(parsed, dict) else {"value": parsed}


def strings(value: Any) -> list[str]:
    parsed = parsed_json(value)
    if not isinstance(parsed, list):
        return []
    return [str(v) for v in parsed if v is not None and str(v).strip()]


def number(value: Any, default: float, low: float, high: float) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return default
    if number != number:  # NaN
        return default
    return min(max(number, low), high)


def count(value: Any) -> int:
    try:
        return max(int(value), 0)
    except (TypeError, ValueError):
        return 0


def flag(value: Any, default: bool) -> bool:
    if value is None:
        return default
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true")
    return bool(value)


def choice(value: Any, allowed: tuple[str, ...], default: str) -> str:
    return value if value in allowed else default


def text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).replace("\x00", "")
    return text or None


def clip(value: Any, limit: int, report: Report, kind: str, name: str) -> str | None:
    """Text within the limit a live write sets here; a longer one is cut (and reported)."""
    clean = text(value)
    if clean is None or len(clean) <= limit:
        return clean
    report.add(kind, f"{name} longer than {limit} characters (cut)")
    return clean[:limit]


def labels(values: list[str], report: Report, kind: str, *, most: int, chars: int) -> list[str]:
    """Tags or aliases within the count and length a live write allows (the rest reported)."""
    clean = sorted({t.strip()[:chars] for t in values if t and t.strip()})
    if any(len(t.strip()) > chars for t in values if t):
        report.add(kind, f"a tag or alias longer than {chars} characters (cut)")
    if len(clean) > most:
        report.add(kind, f"more than {most} tags or aliases (the first {most} kept)")
    return clean[:most]


_NAMESPACE = re.compile(NAMESPACE_PATTERN)
_NOT_NAMESPACE = re.compile(r"[^A-Za-z0-9._:-]+")


def namespace(value: Any, given: str | None, report: Report, kind: str) -> str:
    """``given`` (``-n``), else the row's namespace, made to fit this project's rule."""
    if given:
        return given
    name = str(value or "").strip() or DEFAULT_NAMESPACE
    if len(name) <= NAMESPACE_MAX and _NAMESPACE.match(name):
        return name
    fixed = _NOT_NAMESPACE.sub("-", name).strip("-._:")[:NAMESPACE_MAX] or DEFAULT_NAMESPACE
    report.add(kind, f"namespace {name!r} does not fit the rule here (stored as {fixed!r})")
    return fixed
