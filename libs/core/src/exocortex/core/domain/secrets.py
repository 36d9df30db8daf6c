"""Which settings are secrets, and how they are shown: never in full, anywhere (API responses,
exports, logs)."""

from __future__ import annotations

import re
from collections.abc import Mapping

SECRET_KEY = re.compile(r"api[_-]?key|token|secret|password", re.IGNORECASE)
MASK = "••••"


def is_secret(key: str) -> bool:
    return bool(SECRET_KEY.search(key))


def mask_value(value: str) -> str:
    """``sk-abcdef`` → ``sk••••ef``; four characters or fewer → ``••••``."""
    if len(value) <= 4:
        return MASK
    return f"{value[:2]}{MASK}{value[-2:]}"


def mask_settings(values: Mapping[str, str]) -> dict[str, str]:
    return {k: mask_value(v) if is_secret(k) and v else v for k, v in sorted(values.items())}
