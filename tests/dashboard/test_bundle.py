"""The first load stays small: the script index.html loads (with any chunk it preloads) holds
the shell and the list pages within the budget docs/dashboard.md states, and the heavy or
rarely opened pages are chunks of their own, fetched only when opened."""

from __future__ import annotations

import re
from pathlib import Path

# Bytes of JavaScript (before compression) for the shell and the list pages.
FIRST_LOAD_BUDGET = 275_000
LAZY_PAGES = (
    "Overview",
    "Analytics",
    "Graph",
    "Maintenance",
    "Skills",
    "MemoryDetail",
    "EntityDetail",
    "Settings",
    "SettingsData",
    "Chat",
    "Health",
)


def _first_load(dist: Path) -> list[Path]:
    """The scripts the browser fetches before the first page shows."""
    html = (dist / "index.html").read_text(encoding="utf-8")
    sources = re.findall(r'<script[^>]*\bsrc="/(assets/[^"]+\.js)"', html)
    preloads = re.findall(r'<link[^>]*rel="modulepreload"[^>]*href="/(assets/[^"]+\.js)"', html)
    return [dist / path for path in (*sources, *preloads)]


def test_the_first_load_stays_within_the_budget(dashboard_dist: Path) -> None:
    scripts = _first_load(dashboard_dist)
    assert scripts, "index.html loads no script from /assets"
    size = sum(path.stat().st_size for path in scripts)
    assert size <= FIRST_LOAD_BUDGET, (
        f"the first load is {size} bytes of JavaScript, over the {FIRST_LOAD_BUDGET} budget: "
        "load the new page lazily (src/main.tsx)"
    )


def test_heavy_and_rarely_opened_pages_are_chunks_of_their_own(dashboard_dist: Path) -> None:
    first = {path.name for path in _first_load(dashboard_dist)}
    chunks = {path.name for path in (dashboard_dist / "assets").glob("*.js")}
    for page in LAZY_PAGES:
        own = {name for name in chunks if re.fullmatch(rf"{page}-[\w-]+\.js", name)}
        assert own, f"{page} is not a chunk of its own"
        assert not own & first, f"{page} is loaded before the first page shows"
