"""docs/settings.md and the help the product shows beside each setting (GET /api/settings/schema,
the dashboard's Settings page) say the same thing: every setting is in the docs' tables, and
each table row's sentence is the help of every setting the row names."""

from __future__ import annotations

import re
from pathlib import Path

from exocortex.core.domain.setting_help import HELP
from exocortex.core.domain.setting_schema import SCHEMA

DOC = Path(__file__).resolve().parents[2] / "docs" / "settings.md"


def _plain(cell: str) -> str:
    """A table cell as the product shows it: no code spans, links as their text."""
    cell = cell.replace("\\|", "|")
    cell = re.sub(r"`([^`]*)`", r"\1", cell)
    return re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", cell)


def _documented() -> dict[str, str]:
    found: dict[str, str] = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        for key in re.findall(r"`([^`]+)`", cells[0]):
            if key in SCHEMA:
                found[key] = _plain(cells[2])
    return found


def test_every_setting_has_help_and_is_documented() -> None:
    assert set(HELP) == set(SCHEMA)
    assert set(_documented()) == set(SCHEMA)


def test_the_help_is_what_the_docs_say() -> None:
    documented = _documented()
    differing = {k: (HELP[k], documented[k]) for k in SCHEMA if HELP[k] != documented[k]}
    assert differing == {}
