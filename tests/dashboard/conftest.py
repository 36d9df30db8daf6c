"""The dashboard in a real browser (Debian's chromium driven by Playwright) against a real
stack: one keyed gateway serving dashboard/dist in front of the session's services, one browser
for the module, a fresh namespace of seeded data."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Page,
    expect,
    sync_playwright,
)

from exocortex.core.runtime.ports import free_port
from exocortex.core.runtime.stack import Stack
from exocortex.testing.processes import listening_process

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "dashboard"
DIST = DASHBOARD / "dist"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
DESKTOP = {"width": 1280, "height": 860}
# A page waits on a real stack that shares two cores with everything else.
expect.set_options(timeout=20_000)

ADMIN_KEY = "dash-admin-0123456789abcdef"
READ_ONLY_KEY = "dash-ro-0123456789abcdef"
SCOPED_KEY = "dash-scoped-0123456789abcdef"


def _install_chromium() -> Path | None:
    """Debian's chromium, installed with apt when it is missing and this user may."""
    if CHROMIUM.exists():
        return CHROMIUM
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        return None
    env = os.environ | {"DEBIAN_FRONTEND": "noninteractive"}
    for step in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium"]):
        subprocess.run(step, env=env, check=False, capture_output=True, timeout=900)
    return CHROMIUM if CHROMIUM.exists() else None


@pytest.fixture(scope="session")
def chromium() -> Path:
    found = _install_chromium()
    if found is None:
        pytest.skip(f"{CHROMIUM} is missing and apt-get could not install Debian's chromium")
    return found


@pytest.fixture(scope="session")
def dashboard_dist() -> Path:
    """The built dashboard; built here when `make install` has not (needs Node and npm)."""
    if not (DIST / "index.html").is_file():
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("dashboard/dist is not built and npm is missing: run `make install`")
        subprocess.run(
            [sys.executable, str(DASHBOARD / "scripts" / "openapi.py")], check=True, timeout=120
        )
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=DASHBOARD, check=True)
        subprocess.run([npm, "run", "build"], cwd=DASHBOARD, check=True, timeout=900)
    return DIST


@dataclass
class Seeded:
    """What the module's gateway holds for the browser to find."""

    url: str
    namespace: str
    other_namespace: str
    admin: httpx.Client
    admin_key: str = ADMIN_KEY
    read_only_key: str = READ_ONLY_KEY
    scoped_key: str = SCOPED_KEY
    memories: dict[str, str] = field(default_factory=dict)  # label → id
    archived_id: str = ""
    goal_title: str = ""
    entity_name: str = "Anthropic"


MEMORIES = {
    "decision": "We chose Postgres with pgvector for the heron store: Alice wants one database",
    "people": "Alice Smith works at Anthropic with Bob Jones on the heron project",
    "tooling": "Bob Jones moved the heron gateway to FastAPI at Anthropic",
    # Enrichment reads a relationship here (Anthropic uses Kubernetes): the entity has a
    # neighbourhood to draw.
    "platform": "Anthropic uses Kubernetes for the heron gateway",
}


def _store(client: httpx.Client, namespace: str, content: str, **extra: object) -> str:
    reply = client.post("/api/memories", json={"content": content, "namespace": namespace, **extra})
    assert reply.status_code in (200, 201), reply.text
    return str(reply.json()["id"])


def _wait_for_entity(client: httpx.Client, namespace: str, name: str) -> None:
    """Enrichment finds entities a moment after the store: wait for the one the tests walk to."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = client.get("/api/entities", params={"namespace": namespace, "query": name})
        names = [e["name"] for e in found.json().get("results", [])]
        if name in names:
            return
        time.sleep(0.5)
    pytest.fail(f"enrichment did not find the entity {name!r} within 120 s")


@pytest.fixture(scope="module")
def seeded(exo_stack: Stack, dashboard_dist: Path) -> Iterator[Seeded]:
    namespace = f"dash-{uuid.uuid4().hex[:8]}"
    other = f"{namespace}-other"
    port = free_port()
    keys = f"{ADMIN_KEY}:rw:*,{READ_ONLY_KEY}:ro:*,{SCOPED_KEY}:rw:{namespace}"
    env = exo_stack.env() | {
        "EXO_GATEWAY_PORT": str(port),
        "EXO_GATEWAY_HOST": "127.0.0.1",
        "EXO_API_KEYS": keys,
        "EXO_GATEWAY_DASHBOARD_DIR": str(dashboard_dist),
    }
    with listening_process(
        [sys.executable, "-m", "exocortex.gateway"], env, port, what="the dashboard's gateway"
    ):
        url = f"http://127.0.0.1:{port}"
        headers = {"Authorization": f"Bearer {ADMIN_KEY}"}
        with httpx.Client(base_url=url, headers=headers, timeout=60.0) as admin:
            seeded = Seeded(url, namespace, other, admin)
            for label, content in MEMORIES.items():
                kind = "decision" if label == "decision" else "note"
                seeded.memories[label] = _store(
                    admin, namespace, content, tags=["heron", label], content_type=kind
                )
            linked = admin.post(
                f"/api/memories/{seeded.memories['people']}/links",
                json={"target_id": seeded.memories["decision"], "link_type": "related"},
            )
            assert linked.status_code in (200, 201), linked.text
            seeded.archived_id = _store(admin, namespace, "An old heron note nobody needs")
            assert admin.post(f"/api/memories/{seeded.archived_id}/archive").status_code == 200
            _store(admin, other, "A heron memory in another namespace, hidden from scoped keys")
            seeded.goal_title = "Ship the heron dashboard"
            goal = admin.post(
                "/api/goals", json={"title": seeded.goal_title, "namespace": namespace}
            ).json()
            admin.post(f"/api/goals/{goal['id']}/milestones", json={"title": "Pages render"})
            _wait_for_entity(admin, namespace, seeded.entity_name)
            yield seeded


@pytest.fixture(scope="module")
def browser(chromium: Path) -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


class Console:
    """Console errors and uncaught exceptions of one page."""

    def __init__(self, page: Page) -> None:
        self.errors: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.errors.append(f"uncaught: {exc}"))

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(message.text)


OpenPage = Callable[..., tuple[Page, Console]]


@pytest.fixture(scope="module")
def open_page(browser: Browser, seeded: Seeded) -> Iterator[OpenPage]:
    """Opens pages on the module's browser; each context is closed after the module."""
    contexts: list[BrowserContext] = []

    def opener(key: str | None, *, namespace: bool = True) -> tuple[Page, Console]:
        page, console = _new_page(browser, seeded, key, namespace=namespace)
        contexts.append(page.context)
        return page, console

    yield opener
    for context in contexts:
        context.close()


def _new_page(
    browser: Browser, seeded: Seeded, key: str | None, *, namespace: bool = True
) -> tuple[Page, Console]:
    """A fresh browser context (its own sessionStorage) signed in with ``key`` and looking at
    the seeded namespace."""
    context = browser.new_context(viewport=DESKTOP, base_url=seeded.url)
    script = ""
    if key:
        script += f"sessionStorage.setItem('exocortex.apiKey', {key!r});"
    if namespace:
        script += f"sessionStorage.setItem('exocortex.namespace', {seeded.namespace!r});"
    if script:
        context.add_init_script(
            f"if (!sessionStorage.getItem('exocortex.init')) {{{script}"
            "sessionStorage.setItem('exocortex.init', '1');}"
        )
    page = context.new_page()
    page.set_default_timeout(20_000)
    return page, Console(page)
