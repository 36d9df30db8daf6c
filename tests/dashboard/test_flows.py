"""What people do in the dashboard, end to end in a real browser: find a memory stored through
the API, edit it, archive it, restore it from the trash; walk the graph to an entity and on to
a memory; and what a key may not do it cannot see."""

from __future__ import annotations

import re
import time
import uuid
from typing import Any

import httpx
from playwright.sync_api import expect

# Fixtures from conftest.py: `seeded` (a Seeded) and `open_page` (key → page, console).
Seeded = Any
OpenPage = Any


def test_store_find_edit_archive_restore(seeded: Seeded, open_page: OpenPage) -> None:
    word = f"quokka{uuid.uuid4().hex[:6]}"
    stored = seeded.admin.post(
        "/api/memories",
        json={"content": f"The {word} migration runs every night", "namespace": seeded.namespace},
    ).json()
    # Enrichment rewrites a new memory's tags a moment after the store; once (on a busy
    # machine) an edit made while it ran was lost, so the edit here waits for it.
    _wait_enriched(seeded, stored["id"])
    page, console = open_page(seeded.admin_key)
    page.goto("/")
    page.get_by_role("searchbox", name="Search memories").fill(word)
    page.keyboard.press("Enter")
    hit = page.locator(f'[data-memory-id="{stored["id"]}"]')
    expect(hit).to_be_visible()
    expect(hit.get_by_text("score")).to_be_visible()  # the score breakdown is shown
    hit.get_by_role("link").click()

    expect(page.get_by_role("heading", level=1)).to_have_text("Memory")
    page.get_by_role("button", name="Edit").click()
    page.get_by_label("Content").fill(f"The {word} migration runs every hour")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_text(f"The {word} migration runs every hour")).to_be_visible()
    assert _content(seeded, stored["id"]).endswith("hour")

    page.get_by_role("button", name="Archive").click()
    expect(page.get_by_text("This memory is archived")).to_be_visible()
    assert seeded.admin.get(f"/api/memories/{stored['id']}").json()["is_active"] is False

    page.get_by_role("navigation", name="Pages").get_by_role("link", name="Trash").click()
    row = page.locator(f'[data-memory-id="{stored["id"]}"]')
    # The trash says who put it there: a person, so the purge clock applies.
    expect(row.locator('[data-archived-by="person"]')).to_contain_text("by a person")
    row.get_by_role("button", name="Restore").click()
    expect(row).to_have_count(0)
    assert seeded.admin.get(f"/api/memories/{stored['id']}").json()["is_active"] is True
    assert console.errors == []


def _wait_enriched(seeded: Seeded, memory_id: str) -> None:
    deadline = time.monotonic() + 60
    while seeded.admin.get(f"/api/memories/{memory_id}").json()["enrichment_status"] == "pending":
        assert time.monotonic() < deadline, "enrichment did not finish within 60 s"
        time.sleep(0.3)


def _content(seeded: Seeded, memory_id: str) -> str:
    """The stored content once reads have caught up with the write (at most 10 s)."""
    deadline = time.monotonic() + 10
    while True:
        content = str(seeded.admin.get(f"/api/memories/{memory_id}").json()["content"])
        if content.endswith("hour") or time.monotonic() > deadline:
            return content
        time.sleep(0.2)


def test_bulk_tag_from_the_memory_list(seeded: Seeded, open_page: OpenPage) -> None:
    tag = f"bulk-{uuid.uuid4().hex[:6]}"
    page, console = open_page(seeded.admin_key)
    page.goto("/")
    for label in ("decision", "tooling"):
        page.get_by_label(f"Select memory {seeded.memories[label]}").check()
    page.get_by_label("Tag to add").fill(tag)
    page.get_by_role("button", name="Add tag").click()
    expect(page.get_by_role("status")).to_contain_text("Tagged 2 memories")
    for label in ("decision", "tooling"):
        assert tag in seeded.admin.get(f"/api/memories/{seeded.memories[label]}").json()["tags"]
    assert tag not in seeded.admin.get(f"/api/memories/{seeded.memories['people']}").json()["tags"]
    assert console.errors == []


def test_walk_the_graph_to_an_entity_and_on_to_a_memory(
    seeded: Seeded, open_page: OpenPage
) -> None:
    page, console = open_page(seeded.admin_key)
    page.goto("/graph")
    expect(page.locator("canvas").first).to_be_visible()
    page.locator(".centrality").get_by_role("link", name=seeded.entity_name).click()
    expect(page.get_by_role("heading", level=2, name=seeded.entity_name)).to_be_visible()
    page.get_by_role("link", name="Alice Smith works at Anthropic").first.click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Memory")
    expect(page.get_by_text("with Bob Jones on the heron project")).to_be_visible()
    assert console.errors == []


def test_the_key_is_asked_once_and_kept_for_the_session(
    seeded: Seeded, open_page: OpenPage
) -> None:
    page, _ = open_page(None)
    page.goto("/")
    page.get_by_label("API key").fill("not-a-real-key-0123456789")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("not valid")
    page.get_by_label("API key").fill(seeded.admin_key)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Memories")
    page.reload()
    expect(page.get_by_role("heading", level=1)).to_have_text("Memories")
    assert seeded.admin_key not in page.url
    assert page.evaluate("sessionStorage.getItem('exocortex.apiKey')") == seeded.admin_key
    assert page.evaluate("localStorage.length") == 0 or seeded.admin_key not in str(
        page.evaluate("JSON.stringify(localStorage)")
    )


def test_a_read_only_key_sees_no_write_buttons(seeded: Seeded, open_page: OpenPage) -> None:
    page, console = open_page(seeded.read_only_key)
    page.goto("/")
    expect(page.get_by_text("Alice Smith works at Anthropic").first).to_be_visible()
    expect(page.get_by_text("read-only")).to_be_visible()
    expect(page.get_by_role("button", name="New memory")).to_have_count(0)
    expect(page.get_by_role("checkbox")).to_have_count(0)

    page.goto(f"/memory/{seeded.memories['people']}")
    expect(page.get_by_text("Alice Smith works at Anthropic").first).to_be_visible()
    for name in ("Edit", "Archive", "Restore"):
        expect(page.get_by_role("button", name=name)).to_have_count(0)
    # Its link is shown, but neither removed nor made.
    expect(page.locator(f'[data-linked-id="{seeded.memories["decision"]}"]')).to_be_visible()
    expect(page.get_by_role("button", name=re.compile("^Remove link"))).to_have_count(0)
    expect(page.get_by_role("form", name="Link to another memory")).to_have_count(0)
    page.goto("/trash")
    expect(page.get_by_text("An old heron note nobody needs")).to_be_visible()
    expect(page.get_by_role("button", name="Restore")).to_have_count(0)
    page.goto("/goals")
    expect(page.get_by_text(seeded.goal_title)).to_be_visible()
    expect(page.get_by_role("button", name="Add goal")).to_have_count(0)
    page.get_by_role("button", name=seeded.goal_title).click()
    expect(page.get_by_text("Pages render")).to_be_visible()
    for name in ("Edit goal", "Delete goal"):
        expect(page.get_by_role("button", name=name)).to_have_count(0)
    page.goto("/settings")
    expect(page.get_by_text("rrf_k")).to_be_visible()
    # Each setting says what it does, read out with its field.
    purge = page.locator("#setting-trash\\.auto_purge_days")
    expect(purge).to_have_accessible_description(re.compile("deleted for good"))
    expect(page.get_by_role("button", name="Save")).to_have_count(0)
    expect(page.get_by_role("button", name="Download JSON export")).to_be_visible()
    for name in ("Re-embed", "Preview import", "Apply import"):
        expect(page.get_by_role("button", name=name)).to_have_count(0)
    # Backups are listed for a key of every namespace, but only a writer makes or uses one.
    backups = page.get_by_role("region", name="Backups")
    expect(backups).to_contain_text("Encrypted backups of every namespace")
    expect(backups.locator('[aria-busy="true"]')).to_have_count(0)  # the list has loaded
    expect(backups.get_by_role("alert")).to_have_count(0)
    expect(backups.get_by_role("button")).to_have_count(0)
    expect(backups.get_by_label("Passphrase")).to_have_count(0)
    page.goto("/analytics")
    expect(page.get_by_role("heading", name="Producer quality")).to_be_visible()
    expect(page.get_by_role("button", name="Run auto-consolidation now")).to_have_count(0)
    assert console.errors == []


def test_a_namespace_scoped_key_sees_only_its_namespace(
    seeded: Seeded, open_page: OpenPage
) -> None:
    page, console = open_page(seeded.scoped_key, namespace=False)
    page.goto("/")
    expect(page.get_by_text("Alice Smith works at Anthropic").first).to_be_visible()
    options = page.get_by_label("Namespace").locator("option").all_inner_texts()
    assert options[1:] == [seeded.namespace]
    expect(page.get_by_text("hidden from scoped keys")).to_have_count(0)
    # A backup holds every namespace: a scoped key is told so instead of being refused.
    page.goto("/settings")
    backups = page.get_by_role("region", name="Backups")
    expect(backups).to_contain_text("only a key for all namespaces can see them")
    expect(backups.get_by_role("button")).to_have_count(0)
    assert console.errors == []


def test_resolve_a_contradiction_keeping_the_newer_memory(
    seeded: Seeded, open_page: OpenPage
) -> None:
    namespace = seeded.namespace
    old = seeded.admin.post(
        "/api/memories",
        json={"content": "The heron API timeout is 30 seconds.", "namespace": namespace},
    ).json()["id"]
    new = seeded.admin.post(
        "/api/memories",
        json={"content": "The heron API timeout is 60 seconds.", "namespace": namespace},
    ).json()["id"]
    detected = seeded.admin.post("/api/contradictions/detect", json={"namespace": namespace})
    assert detected.status_code == 200, detected.text
    pending = seeded.admin.get("/api/contradictions", params={"namespace": namespace}).json()
    pair = next(c for c in pending if {c["memory_a_id"], c["memory_b_id"]} == {old, new})
    keep = "A" if pair["memory_a_id"] == new else "B"

    page, console = open_page(seeded.admin_key)
    page.goto("/maintenance")
    card = page.locator(f'[data-contradiction-id="{pair["id"]}"]')
    expect(card).to_contain_text("30 seconds")
    card.get_by_role("button", name=f"Keep {keep}").click()
    expect(card).to_have_count(0)
    resolved = seeded.admin.get(f"/api/contradictions/{pair['id']}").json()
    assert resolved["status"] == "resolved"
    loser = seeded.admin.get(f"/api/memories/{old}").json()
    assert loser["is_active"] is False
    assert loser["superseded_by"] == new
    assert console.errors == []


def test_whoami_tells_each_key_what_it_may_do(seeded: Seeded) -> None:
    def who(key: str) -> dict[str, object]:
        reply = seeded.admin.get("/api/whoami", headers={"Authorization": f"Bearer {key}"})
        assert reply.status_code == 200, reply.text
        return dict(reply.json())

    admin, read_only, scoped = (
        who(k) for k in (seeded.admin_key, seeded.read_only_key, seeded.scoped_key)
    )
    assert (admin["can_write"], admin["namespaces"], admin["keys_required"]) == (True, None, True)
    assert (read_only["can_write"], read_only["namespaces"]) == (False, None)
    assert (scoped["can_write"], scoped["namespaces"]) == (True, [seeded.namespace])
    assert len({admin["name"], read_only["name"], scoped["name"]}) == 3
    assert all(seeded.admin_key not in str(v) for v in admin.values())
    anonymous = httpx.get(f"{seeded.url}/api/whoami")
    assert anonymous.status_code == 401
