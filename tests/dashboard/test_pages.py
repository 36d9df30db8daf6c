"""Every page of the dashboard loads with the seeded data and no console error, at desktop and
phone width (with a screenshot of each), in a real browser against a real stack."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

DESKTOP = {"width": 1280, "height": 860}
PHONE = {"width": 390, "height": 844}
SCREENSHOTS = Path(
    os.environ.get(
        "EXO_SCREENSHOT_DIR", Path(__file__).resolve().parents[2] / "dashboard" / "screenshots"
    )
)
# Fixtures from conftest.py: `seeded` (a Seeded) and `open_page` (key → page, console).
Seeded = Any
OpenPage = Any


def _pages(seeded: Seeded) -> list[tuple[str, str, str, str]]:
    """(name, path, heading, a text that only the seeded data puts there)."""
    people = seeded.memories["people"]
    return [
        ("memories", "/", "Memories", "Alice Smith works at Anthropic"),
        ("memory", f"/memory/{people}", "Memory", "Alice Smith works at Anthropic"),
        ("overview", "/overview", "Overview", "By content type"),
        ("entities", "/entities", "Entities", seeded.entity_name),
        ("entity", f"/entities/{_entity_id(seeded)}", "Entity", seeded.entity_name),
        ("graph", "/graph", "Knowledge graph", seeded.entity_name),
        ("timeline", "/timeline", "Timeline", "Bob Jones moved the heron gateway"),
        ("goals", "/goals", "Goals", seeded.goal_title),
        ("analytics", "/analytics", "Analytics", "active memories"),
        ("skills", "/skills", "Skills", "Memories tagged"),
        ("maintenance", "/maintenance", "Maintenance", "consolidat"),
        ("trash", "/trash", "Trash", "An old heron note nobody needs"),
        ("chat", "/chat", "Chat", "No language model is configured"),
        ("settings", "/settings", "Settings", "rrf_k"),
        ("health", "/status", "Health", "postgres"),
    ]


def _entity_id(seeded: Seeded) -> str:
    found = seeded.admin.get(
        "/api/entities", params={"namespace": seeded.namespace, "query": seeded.entity_name}
    ).json()["results"]
    return str(next(e["id"] for e in found if e["name"] == seeded.entity_name))


PAGE_NAMES = [
    "memories",
    "memory",
    "overview",
    "entities",
    "entity",
    "graph",
    "timeline",
    "goals",
    "analytics",
    "skills",
    "maintenance",
    "trash",
    "chat",
    "settings",
    "health",
]


@pytest.mark.parametrize("name", PAGE_NAMES)
def test_page_loads_with_data_and_no_console_errors(
    name: str, seeded: Seeded, open_page: OpenPage
) -> None:
    _, path, heading, text = next(p for p in _pages(seeded) if p[0] == name)
    page, console = open_page(seeded.admin_key)
    page.goto(path)
    expect(page.get_by_role("heading", level=1)).to_have_text(heading)
    expect(page.get_by_text(text, exact=False).first).to_be_visible()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"{name}-desktop.png", full_page=True)

    page.set_viewport_size(PHONE)
    expect(page.get_by_text(text, exact=False).first).to_be_visible()
    # Usable at phone width: nothing pushes the page sideways.
    # Charts follow their container's new width once its resize is observed (a frame or a
    # few later on a busy machine), so the page is given a moment to lay out again.
    overflow_js = "document.documentElement.scrollWidth - window.innerWidth"
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function(f"{overflow_js} <= 1", timeout=5_000)
    overflow = page.evaluate(overflow_js)
    assert overflow <= 1, f"{path} is {overflow}px wider than a {PHONE['width']}px screen"
    page.screenshot(path=SCREENSHOTS / f"{name}-phone.png", full_page=True)
    page.set_viewport_size(DESKTOP)
    assert console.errors == [], f"{path}: {console.errors}"


def test_every_page_is_reachable_from_the_navigation_by_keyboard(
    seeded: Seeded, open_page: OpenPage
) -> None:
    page, console = open_page(seeded.admin_key)
    page.goto("/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Memories")
    nav = page.get_by_role("navigation", name="Pages")
    nav.get_by_role("link", name="Goals").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", level=1)).to_have_text("Goals")
    # Tab moves on to the next link, Enter follows it.
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", level=1)).to_have_text("Analytics")
    # "/" on the memories page jumps to the search box.
    nav.get_by_role("link", name="Memories").click()
    page.locator("body").press("/")
    expect(page.get_by_role("searchbox", name="Search memories")).to_be_focused()
    assert console.errors == []


def test_theme_switch_is_remembered(seeded: Seeded, open_page: OpenPage) -> None:
    page, _ = open_page(seeded.admin_key)
    page.goto("/")
    first = page.evaluate("document.documentElement.dataset.theme")
    page.get_by_role(
        "button", name=f"Switch to {'light' if first == 'dark' else 'dark'} theme"
    ).click()
    switched = page.evaluate("document.documentElement.dataset.theme")
    assert switched != first
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    page.reload()
    expect(page.get_by_role("heading", level=1)).to_have_text("Memories")
    assert page.evaluate("document.documentElement.dataset.theme") == switched
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == background
