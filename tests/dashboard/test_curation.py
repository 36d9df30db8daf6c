"""Curating in one sitting, in a real browser against a real stack: the skills page, bulk
importance and bulk trash with undo, keyboard shortcuts on the memory list, a goal edited and
deleted, an entity retyped. Each flow checks the stored result through the API, that the page
fits a 390 px screen, and that no console error was logged."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

from playwright.sync_api import Dialog, Page, expect

from exocortex.testing.wait import until

# Fixtures from conftest.py: `seeded` (a Seeded) and `open_page` (key → page, console).
Seeded = Any
OpenPage = Any

PHONE = {"width": 390, "height": 844}


def _store(seeded: Seeded, content: str, **extra: object) -> str:
    reply = seeded.admin.post(
        "/api/memories", json={"content": content, "namespace": seeded.namespace, **extra}
    )
    assert reply.status_code in (200, 201), reply.text
    memory_id = str(reply.json()["id"])
    # Enrichment rewrites a new memory's tags a moment after the store: wait it out, so what
    # the page shows and what the test changes are not overwritten behind its back.
    until(
        lambda: (
            seeded.admin.get(f"/api/memories/{memory_id}").json()["enrichment_status"] != "pending"
        ),
        what=f"enrichment of {memory_id} finished",
        seconds=120,
    )
    return memory_id


def _memory(seeded: Seeded, memory_id: str) -> dict[str, Any]:
    reply = seeded.admin.get(f"/api/memories/{memory_id}")
    assert reply.status_code == 200, reply.text
    return dict(reply.json())


def _accept_next_dialog(page: Page, messages: list[str]) -> None:
    def accept(dialog: Dialog) -> None:
        messages.append(dialog.message)
        dialog.accept()

    page.once("dialog", accept)


def _assert_fits_phone(page: Page) -> None:
    page.set_viewport_size(PHONE)
    overflow_js = "document.documentElement.scrollWidth - window.innerWidth"
    page.wait_for_function(f"{overflow_js} <= 1", timeout=20_000)
    assert page.evaluate(overflow_js) <= 1


def test_skills_page_lists_skill_memories_with_votes_and_filters_by_tag(
    seeded: Seeded, open_page: OpenPage
) -> None:
    word = uuid.uuid4().hex[:6]
    python_skill = _store(
        seeded,
        f"To profile a slow {word} script, run it under cProfile and sort by cumulative time",
        tags=["skill", f"python-{word}"],
        metadata={"helpful": 4, "harmful": 1},
    )
    sql_skill = _store(
        seeded,
        f"To find the slow {word} query, read EXPLAIN ANALYZE from the bottom up",
        tags=["skill", f"sql-{word}"],
    )
    page, console = open_page(seeded.admin_key)
    page.goto("/")
    page.get_by_role("navigation", name="Pages").get_by_role("link", name="Skills").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Skills")
    python_row = page.locator(f'[data-memory-id="{python_skill}"]')
    sql_row = page.locator(f'[data-memory-id="{sql_skill}"]')
    expect(python_row).to_contain_text("4 helpful")
    expect(python_row).to_contain_text("1 harmful")
    expect(sql_row).to_contain_text("0 helpful")
    # A memory without the skill tag is not a skill.
    expect(page.get_by_text("Alice Smith works at Anthropic")).to_have_count(0)

    # The tag filter is reached and pressed by keyboard.
    chip = page.get_by_role("group", name="Filter skills by tag").get_by_role(
        "button", name=f"python-{word}"
    )
    chip.focus()
    page.keyboard.press("Enter")
    expect(chip).to_have_attribute("aria-pressed", "true")
    expect(sql_row).to_have_count(0)
    expect(python_row).to_be_visible()
    page.keyboard.press("Enter")
    expect(sql_row).to_be_visible()

    _assert_fits_phone(page)
    expect(python_row).to_be_visible()
    assert console.errors == []


def test_bulk_importance_then_trash_with_undo_by_keyboard_at_phone_width(
    seeded: Seeded, open_page: OpenPage
) -> None:
    tag = f"sitting-{uuid.uuid4().hex[:6]}"
    # Stored first, so it is last in the list, out of the way of j and x.
    low = _store(seeded, f"The {tag} review left the printer queue alone", tags=[tag])
    ids = [
        _store(seeded, f"The {tag} review found the cache cold on Mondays", tags=[tag]),
        _store(seeded, f"The {tag} review moved the backups to Sunday night", tags=[tag]),
    ]
    page, console = open_page(seeded.admin_key)
    page.set_viewport_size(PHONE)
    page.goto(f"/?tag={tag}")
    for memory_id in ids:
        expect(page.locator(f'[data-memory-id="{memory_id}"]')).to_be_visible()

    # j walks the list, x selects the focused memory.
    page.locator("body").press("j")
    page.keyboard.press("x")
    page.keyboard.press("j")
    page.keyboard.press("x")
    bulk = page.get_by_role("region", name="Bulk actions")
    expect(bulk).to_contain_text("2 selected")
    for memory_id in ids:
        expect(page.get_by_label(f"Select memory {memory_id}")).to_be_checked()

    bulk.get_by_label("New importance").fill("0.85")
    bulk.get_by_role("button", name="Set importance").click()
    expect(page.get_by_role("status")).to_contain_text("Set importance 0.85 on 2 memories")
    for memory_id in ids:
        assert _memory(seeded, memory_id)["importance"] == 0.85

    # The importance filter keeps them (kept in the URL) and drops the rest.
    low_row = page.locator(f'[data-memory-id="{low}"]')
    expect(low_row).to_be_visible()
    assert _memory(seeded, low)["importance"] < 0.75
    page.get_by_label("Importance").select_option("0.75")
    expect(page).to_have_url(f"{seeded.url}/?tag={tag}&importance=0.75")
    expect(low_row).to_have_count(0)
    for memory_id in ids:
        expect(page.locator(f'[data-memory-id="{memory_id}"]')).to_be_visible()

    for memory_id in ids:
        page.get_by_label(f"Select memory {memory_id}").check()
    asked: list[str] = []
    _accept_next_dialog(page, asked)
    bulk.get_by_role("button", name="Move to trash").click()
    expect(page.get_by_role("status")).to_contain_text("Moved 2 memories to the trash")
    assert len(asked) == 1
    assert "trash" in asked[0]
    for memory_id in ids:
        expect(page.locator(f'[data-memory-id="{memory_id}"]')).to_have_count(0)
        assert _memory(seeded, memory_id)["is_active"] is False

    page.get_by_role("status").get_by_role("button", name="Undo").click()
    expect(page.get_by_role("status")).to_contain_text("Restored 2 memories")
    for memory_id in ids:
        expect(page.locator(f'[data-memory-id="{memory_id}"]')).to_be_visible()
        assert _memory(seeded, memory_id)["is_active"] is True
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1
    assert console.errors == []


def test_trash_asked_and_refused_changes_nothing(seeded: Seeded, open_page: OpenPage) -> None:
    tag = f"keep-{uuid.uuid4().hex[:6]}"
    memory_id = _store(seeded, f"The {tag} note must survive a cancelled trash", tags=[tag])
    page, console = open_page(seeded.admin_key)
    page.set_viewport_size(PHONE)
    page.goto(f"/?tag={tag}")
    page.get_by_label(f"Select memory {memory_id}").check()
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.get_by_role("button", name="Move to trash").click()
    expect(page.get_by_role("region", name="Bulk actions")).to_contain_text("1 selected")
    assert _memory(seeded, memory_id)["is_active"] is True
    # Escape clears the selection.
    page.locator("body").press("Escape")
    expect(page.get_by_role("region", name="Bulk actions")).to_have_count(0)
    _assert_fits_phone(page)
    assert console.errors == []


def test_edit_a_goals_description_and_deadline_then_delete_it(
    seeded: Seeded, open_page: OpenPage
) -> None:
    title = f"Tidy the heron runbooks {uuid.uuid4().hex[:6]}"
    created = seeded.admin.post("/api/goals", json={"title": title, "namespace": seeded.namespace})
    assert created.status_code in (200, 201), created.text
    goal_id = created.json()["id"]

    page, console = open_page(seeded.admin_key)
    page.goto("/goals")
    page.get_by_role("button", name=title).click()
    page.get_by_role("button", name="Edit goal").click()
    form = page.get_by_role("form", name="Edit goal")
    form.get_by_label("Description").fill("Every runbook says who to page")
    form.get_by_label("Deadline").fill("2027-03-01")
    form.get_by_role("button", name="Save goal").click()
    expect(page.locator(".goal-description")).to_have_text("Every runbook says who to page")
    expect(page.get_by_role("form", name="Edit goal")).to_have_count(0)
    # Read back once the API's reads have caught up with the write, as the page's did.
    goal = until(
        lambda: seeded.admin.get(f"/api/goals/{goal_id}").json(),
        what="the goal's new description reads back",
        seconds=30,
        accept=lambda g: g["description"] == "Every runbook says who to page",
    )
    assert str(goal["deadline"]).startswith("2027-03-01")

    _assert_fits_phone(page)
    asked: list[str] = []
    _accept_next_dialog(page, asked)
    page.get_by_role("button", name="Delete goal").click()
    expect(page.get_by_role("button", name=title)).to_have_count(0)
    assert len(asked) == 1
    assert title in asked[0]
    assert seeded.admin.get(f"/api/goals/{goal_id}").status_code == 404
    assert console.errors == []


def test_retype_an_entity(seeded: Seeded, open_page: OpenPage) -> None:
    name = f"Heron Pipeline {uuid.uuid4().hex[:6]}"
    created = seeded.admin.post(
        "/api/entities", json={"name": name, "type": "concept", "namespace": seeded.namespace}
    )
    assert created.status_code in (200, 201), created.text
    entity_id = created.json()["id"]

    page, console = open_page(seeded.admin_key)
    page.goto(f"/entities/{entity_id}")
    expect(page.get_by_role("heading", level=2, name=name)).to_be_visible()
    page.get_by_role("button", name="Edit").click()
    form = page.get_by_role("form", name="Edit entity")
    form.get_by_label("Type").select_option("project")
    form.get_by_role("button", name="Save").click()
    # The form closes once the gateway answered the change (the select shows "project" before).
    expect(form).to_have_count(0)
    expect(page.locator(".card").get_by_text("project", exact=True)).to_be_visible()
    assert seeded.admin.get(f"/api/entities/{entity_id}").json()["type"] == "project"
    _assert_fits_phone(page)
    assert console.errors == []


def test_embedding_health_and_a_re_embed_followed_to_its_end(
    seeded: Seeded, open_page: OpenPage
) -> None:
    page, console = open_page(seeded.admin_key)
    page.goto("/settings")
    health = page.get_by_role("region", name="Embedding health")
    expect(health.get_by_text("embedded", exact=True)).to_be_visible()
    expect(health).to_contain_text("Current model:")
    health.get_by_role("button", name="Re-embed").focus()
    page.keyboard.press("Enter")
    run = health.locator(".job-run")
    expect(run.get_by_role("progressbar", name="Re-embed progress")).to_be_visible()
    expect(run).to_have_attribute("data-status", "succeeded", timeout=180_000)
    run_id = run.get_attribute("data-run-id")
    assert run_id is not None
    stored = seeded.admin.get(f"/api/maintenance/jobs/runs/{run_id}").json()
    assert (stored["job"], stored["status"]) == ("repair", "succeeded")
    assert stored["params"]["reembed"] is True
    expect(run).to_contain_text("processed")  # the finished run's report is shown
    _assert_fits_phone(page)
    assert console.errors == []


def test_download_a_json_export(seeded: Seeded, open_page: OpenPage) -> None:
    page, console = open_page(seeded.admin_key)
    page.goto("/settings")
    export = page.get_by_role("region", name="Export")
    with page.expect_download() as download_info:
        export.get_by_role("button", name="Download JSON export").click()
    download = download_info.value
    assert download.suggested_filename.startswith(f"exocortex-export-{seeded.namespace}-")
    document = json.loads(Path(download.path()).read_text(encoding="utf-8"))
    assert document["version"] == 2
    ids = {m["id"] for m in document["memories"]}
    assert seeded.memories["people"] in ids
    assert {m["namespace"] for m in document["memories"]} == {seeded.namespace}
    expect(export.get_by_role("status")).to_contain_text(
        f"Exported {len(document['memories'])} memories"
    )
    _assert_fits_phone(page)
    assert console.errors == []


def test_an_export_import_is_previewed_in_a_dry_run_then_applied(
    seeded: Seeded, open_page: OpenPage, tmp_path: Path
) -> None:
    lost = _store(seeded, f"The heron {uuid.uuid4().hex[:6]} ledger lives on the NAS")
    reply = seeded.admin.get("/api/export", params={"namespace": seeded.namespace})
    assert reply.status_code == 200, reply.text
    backup = tmp_path / "export.json"
    backup.write_text(reply.text, encoding="utf-8")
    assert seeded.admin.delete(f"/api/memories/{lost}").status_code == 200
    assert seeded.admin.get(f"/api/memories/{lost}").status_code == 404

    page, console = open_page(seeded.admin_key)
    page.goto("/settings")
    section = page.get_by_role("region", name="Import")
    section.get_by_label("JSON file").set_input_files(str(backup))
    expect(section.get_by_label("JSON to import")).not_to_have_value("")
    section.get_by_role("button", name="Preview import").click()
    preview = section.get_by_role("status", name="Preview (dry run): nothing changed yet")
    expect(preview.locator('tr[data-section="memories"] td').nth(1)).to_have_text("1")  # created
    assert seeded.admin.get(f"/api/memories/{lost}").status_code == 404  # a dry run

    section.get_by_role("button", name="Apply import").click()
    applied = section.get_by_role("status", name="Imported")
    expect(applied.locator('tr[data-section="memories"] td').nth(1)).to_have_text("1")
    back = seeded.admin.get(f"/api/memories/{lost}")
    assert back.status_code == 200
    assert "ledger lives on the NAS" in back.json()["content"]
    _assert_fits_phone(page)
    assert console.errors == []


def test_a_list_of_new_memories_is_previewed_then_imported(
    seeded: Seeded, open_page: OpenPage
) -> None:
    word = f"egret{uuid.uuid4().hex[:6]}"
    items = [
        {"content": f"The {word} sensor reports every minute", "namespace": seeded.namespace},
        {"content": f"The {word} sensor battery lasts a year", "namespace": seeded.namespace},
    ]
    page, console = open_page(seeded.admin_key)
    page.goto("/settings")
    section = page.get_by_role("region", name="Import")
    section.get_by_label("JSON to import").fill(json.dumps({"memories": items}))
    section.get_by_role("button", name="Preview import").click()
    preview = section.get_by_label("Import preview")
    expect(preview).to_contain_text(f"2 new memories into {seeded.namespace}")
    expect(preview).to_contain_text(f"The {word} sensor battery lasts a year")
    assert _recent_with(seeded, word) == 0  # nothing stored by the preview

    section.get_by_role("button", name="Apply import").click()
    expect(section.get_by_role("status")).to_contain_text("Imported 2 memories")
    assert _recent_with(seeded, word) == 2

    # A broken document is refused with its reason, and nothing is offered to apply.
    section.get_by_label("JSON to import").fill('{"memories": [{"text": "no content"}]}')
    section.get_by_role("button", name="Preview import").click()
    expect(section.get_by_role("alert")).to_contain_text(
        'memories.0: each memory needs a "content"'
    )
    expect(section.get_by_role("button", name="Apply import")).to_be_disabled()
    _assert_fits_phone(page)
    assert console.errors == []


def _recent_with(seeded: Seeded, word: str) -> int:
    reply = seeded.admin.get(
        "/api/memories/recent", params={"namespace": seeded.namespace, "limit": "100"}
    )
    assert reply.status_code == 200, reply.text
    return sum(word in m["content"] for m in reply.json()["results"])


def test_memory_detail_shows_its_link_graph_and_a_word_diff_against_the_newer_memory(
    seeded: Seeded, open_page: OpenPage
) -> None:
    old = _store(seeded, "The egret API timeout is 30 seconds.")
    new = _store(seeded, "The egret API timeout is 90 seconds.")
    detected = seeded.admin.post("/api/contradictions/detect", json={"namespace": seeded.namespace})
    assert detected.status_code == 200, detected.text
    pending = seeded.admin.get("/api/contradictions", params={"namespace": seeded.namespace})
    pair = next(c for c in pending.json() if {c["memory_a_id"], c["memory_b_id"]} == {old, new})
    resolved = seeded.admin.patch(
        f"/api/contradictions/{pair['id']}", json={"status": "resolved", "keep_id": new}
    )
    assert resolved.status_code == 200, resolved.text
    assert _memory(seeded, old)["superseded_by"] == new
    decision = seeded.memories["decision"]
    linked = seeded.admin.post(
        f"/api/memories/{old}/links", json={"target_id": decision, "link_type": "elaborates"}
    )
    assert linked.status_code in (200, 201), linked.text

    page, console = open_page(seeded.admin_key)
    page.goto(f"/memory/{old}")
    banner = page.locator(".superseded")
    expect(banner).to_contain_text("Superseded by")
    changes = banner.get_by_label("Word changes")
    expect(changes.locator("del")).to_have_text("30")
    expect(changes.locator("ins")).to_have_text("90")
    expect(changes).to_contain_text("The egret API timeout is")

    graph = page.get_by_role("group", name="Links of this memory")
    node = graph.get_by_role("link", name="elaborates: We chose Postgres")
    expect(node).to_be_visible()
    _assert_fits_phone(page)
    node.focus()
    page.keyboard.press("Enter")
    expect(page).to_have_url(f"{seeded.url}/memory/{decision}")
    expect(page.get_by_text("We chose Postgres with pgvector").first).to_be_visible()
    assert console.errors == []


def test_entity_neighbourhood_graph_leads_to_a_neighbour(
    seeded: Seeded, open_page: OpenPage
) -> None:
    _store(seeded, "Anthropic uses Kubernetes for real-time event streaming")
    found = seeded.admin.get(
        "/api/entities", params={"namespace": seeded.namespace, "query": seeded.entity_name}
    ).json()["results"]
    entity_id = next(e["id"] for e in found if e["name"] == seeded.entity_name)

    def neighbours() -> list[str]:
        reply = seeded.admin.get(f"/api/entities/{entity_id}/relationships").json()
        return [r["entity"]["name"] for r in reply["results"]]

    until(
        lambda: "Kubernetes" in neighbours(),
        what="enrichment related Anthropic to Kubernetes",
        seconds=120,
    )
    page, console = open_page(seeded.admin_key)
    page.goto(f"/entities/{entity_id}")
    graph = page.get_by_role("group", name="Neighbourhood of this entity")
    node = graph.get_by_role("link", name="uses: Kubernetes")
    expect(node).to_be_visible()
    expect(graph.locator(".node-label.center")).to_have_text(seeded.entity_name)
    _assert_fits_phone(page)
    node.focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", level=2, name="Kubernetes")).to_be_visible()
    assert console.errors == []


def test_analytics_producer_quality_regression_and_consolidation_run_now(
    seeded: Seeded, open_page: OpenPage
) -> None:
    agent = f"curator-{uuid.uuid4().hex[:6]}"
    for topic in ("tides", "winds", "moons"):
        _store(seeded, f"The {agent} notes on {topic} are filed weekly", agent=agent)
    ran = seeded.admin.post(
        "/api/maintenance/jobs/retrieval-regression/run",
        json={"params": {"queries": ["heron database choice"]}, "wait_seconds": 120},
    )
    assert ran.status_code == 200, ran.text
    latest = seeded.admin.get("/api/retrieval-regression/latest").json()
    assert latest["run_id"] is not None

    page, console = open_page(seeded.admin_key)
    page.goto("/analytics")
    producers = page.get_by_role("region", name="Producer quality")
    producers.get_by_role("button", name="by agent").click()
    expect(producers.get_by_role("button", name="by agent")).to_have_attribute(
        "aria-pressed", "true"
    )
    row = producers.get_by_role("row").filter(has_text=agent)
    expect(row.get_by_role("cell").nth(1)).to_have_text("3")

    regression = page.get_by_role("region", name="Retrieval regression")
    expect(regression).to_contain_text(f"Run {latest['run_id']}")
    expect(regression.get_by_role("row").filter(has_text="heron database choice")).to_be_visible()
    expect(regression).to_contain_text("golden queries")

    consolidation = page.get_by_role("region", name="Consolidation")
    consolidation.get_by_role("button", name="Run auto-consolidation now").click()
    run = consolidation.locator(".job-run")
    expect(run).to_have_attribute("data-status", "succeeded", timeout=180_000)
    run_id = run.get_attribute("data-run-id")
    assert run_id is not None
    stored = seeded.admin.get(f"/api/maintenance/jobs/runs/{run_id}").json()
    assert (stored["job"], stored["status"]) == ("auto-consolidation", "succeeded")
    _assert_fits_phone(page)
    assert console.errors == []


TOPICS = (
    "sourdough starter feeding",
    "quarterly tax filing",
    "guitar string gauges",
    "bicycle chain wear",
    "orchid watering",
    "kayak roll practice",
    "chess endgame study",
    "espresso grind size",
    "winter tyre pressure",
    "beekeeping hive checks",
    "marathon taper weeks",
    "oil painting varnish",
    "sailing knot drills",
    "compost heap turning",
    "piano scale fingering",
    "mountain hut booking",
    "passport renewal forms",
    "telescope collimation",
    "pottery kiln firing",
    "dog vaccination dates",
    "roof gutter cleaning",
    "wine cellar humidity",
    "solar panel cleaning",
    "violin rosin choice",
    "aquarium nitrate tests",
    "cross-stitch patterns",
    "chimney sweep visits",
    "birdwatching logbook",
    "sushi rice seasoning",
    "ski wax temperature",
    "tomato seedling hardening",
    "bookbinding glue",
    "fencing parry drills",
    "kombucha second ferment",
)


def test_the_memory_list_goes_on_as_it_is_scrolled(seeded: Seeded, open_page: OpenPage) -> None:
    tag = f"scroll-{uuid.uuid4().hex[:6]}"
    items = [
        {"content": f"Notes on {topic}", "namespace": seeded.namespace, "tags": [tag]}
        for topic in TOPICS
    ]
    imported = seeded.admin.post("/api/memories/import", json={"memories": items})
    assert imported.status_code == 200, imported.text
    # Near-duplicates would be folded into one memory: count what the list really holds.
    listed = seeded.admin.get(
        "/api/memories/recent", params={"namespace": seeded.namespace, "tags": tag, "limit": "100"}
    ).json()
    total = listed["total"]
    assert total > 25, f"only {total} distinct memories were stored"

    page, console = open_page(seeded.admin_key)
    page.set_viewport_size(PHONE)
    page.goto(f"/?tag={tag}")
    rows = page.locator("ul.memory-list > li")
    expect(page.get_by_text(f"{total} memories, newest first")).to_be_visible()
    expect(rows).to_have_count(25)
    page.get_by_role("button", name="Load more").scroll_into_view_if_needed()
    expect(rows).to_have_count(total)
    expect(page.get_by_role("button", name="Load more")).to_have_count(0)
    _assert_fits_phone(page)
    assert console.errors == []


def _import_tagged(seeded: Seeded, namespace: str, tag: str) -> int:
    """Imports one memory a topic under ``tag``; answers how many distinct ones were stored."""
    items = [
        {"content": f"A checklist for {topic}", "namespace": namespace, "tags": [tag]}
        for topic in TOPICS
    ]
    imported = seeded.admin.post("/api/memories/import", json={"memories": items})
    assert imported.status_code == 200, imported.text
    # Near-duplicates would be folded into one memory: count what the list really holds.
    listed = seeded.admin.get(
        "/api/memories/recent", params={"namespace": namespace, "tags": tag, "limit": "100"}
    ).json()
    return int(listed["total"])


def test_k_walks_back_up_the_list_and_m_loads_more(seeded: Seeded, open_page: OpenPage) -> None:
    tag = f"keys-{uuid.uuid4().hex[:6]}"
    # A namespace of their own, so the scrolling test's notes on the same topics are not taken
    # for near-duplicates of these; the page looks at every namespace, narrowed by the tag.
    total = _import_tagged(seeded, f"{seeded.namespace}-keys", tag)
    assert total > 25, f"only {total} distinct memories were stored"

    page, console = open_page(seeded.admin_key, namespace=False)
    page.goto(f"/?tag={tag}")
    rows = page.locator("ul.memory-list > li")
    expect(rows).to_have_count(25)
    links = page.locator("a.memory-content")
    page.locator("body").press("j")
    page.keyboard.press("j")
    expect(links.nth(1)).to_be_focused()
    page.keyboard.press("k")
    expect(links.nth(0)).to_be_focused()
    page.keyboard.press("x")  # k moved the focus: x selects the first memory, not the second
    first_id = rows.nth(0).locator("[data-memory-id]").get_attribute("data-memory-id")
    expect(page.get_by_label(f"Select memory {first_id}")).to_be_checked()
    expect(page.get_by_role("region", name="Bulk actions")).to_contain_text("1 selected")
    page.keyboard.press("m")
    expect(rows).to_have_count(total)
    _assert_fits_phone(page)
    assert console.errors == []


def test_a_maintenance_job_run_now_is_followed_to_its_end(
    seeded: Seeded, open_page: OpenPage
) -> None:
    page, console = open_page(seeded.admin_key)
    page.goto("/maintenance")
    row = page.get_by_role("row").filter(has=page.get_by_role("cell", name="graph", exact=True))
    row.get_by_role("button", name="Run now").click()
    run = page.locator(".job-run")
    expect(run).to_contain_text("graph · run #")
    expect(run).to_have_attribute("data-status", "succeeded", timeout=180_000)
    run_id = run.get_attribute("data-run-id")
    assert run_id is not None
    stored = seeded.admin.get(f"/api/maintenance/jobs/runs/{run_id}").json()
    assert (stored["job"], stored["status"], stored["namespace"]) == (
        "graph",
        "succeeded",
        seeded.namespace,
    )
    _assert_fits_phone(page)
    assert console.errors == []


def _links_of(seeded: Seeded, memory_id: str) -> list[dict[str, Any]]:
    reply = seeded.admin.get(f"/api/memories/{memory_id}/links")
    assert reply.status_code == 200, reply.text
    return list(reply.json()["links"])


def test_a_link_is_made_to_a_memory_found_by_search_then_removed_after_asking(
    seeded: Seeded, open_page: OpenPage
) -> None:
    word = f"plover{uuid.uuid4().hex[:6]}"
    source = _store(seeded, f"The {word} survey starts at the north jetty")
    target_text = f"The {word} tide tables are kept in the boathouse drawer"
    target = _store(seeded, target_text)

    page, console = open_page(seeded.admin_key)
    page.goto(f"/memory/{source}")
    form = page.get_by_role("form", name="Link to another memory")
    form.get_by_label("Find the memory to link to").fill(f"{word} tide tables boathouse")
    form.get_by_label("Find the memory to link to").press("Enter")
    # The memory itself is never offered as its own target.
    form.get_by_role("radio", name=target_text).check()
    expect(form.get_by_role("radio", name=f"The {word} survey starts")).to_have_count(0)
    form.get_by_label("Link type").select_option("supports")
    form.get_by_label("Strength").fill("0.8")
    form.get_by_role("button", name="Add link").click()
    expect(form.get_by_role("status")).to_contain_text("Linked (supports)")
    row = page.locator(f'ul.links [data-linked-id="{target}"]')
    expect(row).to_contain_text("supports")
    expect(page.get_by_role("group", name="Links of this memory")).to_be_visible()
    made = until(
        lambda: [link for link in _links_of(seeded, source) if link["memory_id"] == target],
        what="the new link reads back",
        seconds=30,
        accept=bool,
    )
    assert (made[0]["link_type"], made[0]["direction"]) == ("supports", "outgoing")
    assert abs(made[0]["strength"] - 0.8) < 1e-6

    _assert_fits_phone(page)
    remove = row.get_by_role("button", name=f"Remove link to The {word} tide tables")
    # Refused: the link stays.
    page.once("dialog", lambda dialog: dialog.dismiss())
    remove.click()
    expect(row).to_be_visible()
    assert any(link["memory_id"] == target for link in _links_of(seeded, source))
    asked: list[str] = []
    _accept_next_dialog(page, asked)
    remove.click()
    expect(row).to_have_count(0)
    assert len(asked) == 1
    assert "only the link goes" in asked[0]
    until(
        lambda: all(link["memory_id"] != target for link in _links_of(seeded, source)),
        what="the removed link is gone",
        seconds=30,
    )
    assert _memory(seeded, target)["is_active"] is True  # both memories stay
    assert console.errors == []


BACKUP_PASSPHRASE = "a heron backup passphrase"


def test_a_backup_is_created_listed_and_verified(seeded: Seeded, open_page: OpenPage) -> None:
    page, console = open_page(seeded.admin_key)
    page.goto("/settings")
    section = page.get_by_role("region", name="Backups")
    section.get_by_label("Passphrase").fill(BACKUP_PASSPHRASE)
    section.get_by_role("button", name="Create backup").click()
    created = section.get_by_role("status").filter(has_text="Created exocortex-")
    expect(created).to_be_visible(timeout=180_000)
    found = re.search(r"Created (\S+\.exobak)", created.inner_text())
    assert found is not None
    name = found.group(1)
    listed = seeded.admin.get("/api/backups").json()["backups"]
    assert name in [b["name"] for b in listed]
    row = section.locator(f'tr[data-backup="{name}"]')
    expect(row).to_contain_text("on request")

    _assert_fits_phone(page)
    row.get_by_role("button", name="Verify").click()
    verified = section.get_by_role("status", name=f"Verification of {name}")
    expect(verified).to_contain_text(f"{name} verified", timeout=180_000)
    expect(verified).to_contain_text("memories")

    # A dry run of the restore reports against the live store: every memory it holds is here.
    row.get_by_role("button", name="Preview restore").click()
    preview = section.get_by_role("status", name=f"Preview of restoring {name} (dry run)")
    memories = preview.locator('tr[data-section="memories"] td')
    expect(memories.nth(1)).to_have_text("0", timeout=180_000)  # created
    expect(memories.nth(2)).not_to_have_text("0")  # skipped: already present

    # Restoring asks first, saying what it does; refused, nothing starts.
    asked: list[str] = []

    def refuse(dialog: Dialog) -> None:
        asked.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", refuse)
    row.get_by_role("button", name="Restore", exact=True).click()
    expect(preview).to_be_visible()
    assert len(asked) == 1
    assert "cannot be undone" in asked[0]
    expect(section.locator("[data-working]")).to_have_count(0)
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1
    assert console.errors == []
