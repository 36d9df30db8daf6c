"""Text inside ``<private>`` blocks is kept by nothing: written through every entry point and in
every user text field, a secret is afterwards in no Postgres row, no file of the stack (indexes,
NATS store, logs), no NATS message and no keyword index entry; search finds none of it.

Each secret is a unique lower-case word, so a keyword index would hold it whole. Controls (the
same shapes, outside private blocks) prove each check can see a word where it was stored.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import nats
import psycopg
import pytest_asyncio
from nats.aio.msg import Msg
from psycopg import sql
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from exocortex.core.runtime.postgres import EmbeddedPostgres
from exocortex.core.runtime.stack import Stack
from exocortex.testing.rest import wait_enriched

Db = psycopg.AsyncConnection[dict[str, Any]]


@dataclass
class Secrets:
    """One unique word per place a secret is written, by label (a leak names its place)."""

    words: dict[str, str] = field(default_factory=dict)

    def __call__(self, label: str) -> str:
        word = f"zq{label.replace('-', '')}{uuid.uuid4().hex[:10]}".lower()
        self.words[label] = word
        return word


@dataclass
class Tap:
    """Every NATS message on the stack's server while the test runs (subject, headers, body)."""

    seen: list[bytes] = field(default_factory=list)

    async def handle(self, msg: Msg) -> None:
        headers = json.dumps(msg.headers or {}).encode()
        self.seen.append(msg.subject.encode() + b"\n" + headers + b"\n" + msg.data)

    def holding(self, words: dict[str, str]) -> dict[str, str]:
        blob = b"\n".join(self.seen).lower()
        return {label: w for label, w in words.items() if w.encode() in blob}


@pytest_asyncio.fixture
async def tap(exo_stack: Stack) -> AsyncIterator[Tap]:
    tapped = Tap()
    nc = await nats.connect(exo_stack.nats_url, name="privacy-tap")
    await nc.subscribe(">", cb=tapped.handle)
    await nc.flush()
    try:
        yield tapped
    finally:
        await nc.drain()


def private(word: str, shape: str = "plain") -> str:
    """``word`` hidden in one shape of private block."""
    return {
        "plain": f"<private>{word}</private>",
        "nested": f"<private>outer <private>inner</private> {word}</private>",
        "attributes": f"<private class=\"secret\" data-x='1'>{word}</private>",
        "whitespace": f"<private >{word}</private >",
        "case": f"<PRIVATE>{word}</Private>",
        "multiline": f"<private>\nline one\n{word}\nline three\n</private>",
        "unclosed": f"<private>{word} and the rest",
    }[shape]


async def rows_holding(db: Db, words: dict[str, str]) -> dict[str, str]:
    """Words found in the text of any row of any table of the stack database."""
    cur = await db.execute(
        "SELECT table_name FROM information_schema.tables "
        "WHERE table_schema = 'public' AND table_type = 'BASE TABLE'"
    )
    tables = [r["table_name"] for r in await cur.fetchall()]
    assert "memories" in tables
    assert "search_misses" in tables
    pattern = "|".join(words.values())
    found: dict[str, str] = {}
    for table in tables:
        query = sql.SQL("SELECT t::text AS row FROM {} t WHERE t::text ~* %s").format(
            sql.Identifier(table)
        )
        cur = await db.execute(query, (pattern,))
        text = "\n".join(r["row"] for r in await cur.fetchall()).lower()
        found.update({label: w for label, w in words.items() if w in text})
    return found


def files_holding(roots: list[Path], words: dict[str, str]) -> dict[str, str]:
    """Words found in the bytes of any file under the roots (the model cache is skipped)."""
    found: dict[str, str] = {}
    needles = {label: w.encode() for label, w in words.items()}
    for root in roots:
        for path in root.rglob("*"):
            if not path.is_file() or "models" in path.relative_to(root).parts:
                continue
            try:
                data = path.read_bytes().lower()
            except OSError:
                continue  # removed while walking (a rotated segment)
            found.update({label: w for label, w in words.items() if needles[label] in data})
    return found


def logs_holding(stack: Stack, words: dict[str, str]) -> dict[str, str]:
    logs = list(stack.log_dir.glob("*.log"))
    assert logs, f"no logs in {stack.log_dir}"
    return files_holding([stack.log_dir], words)


async def keyword_hits(api: httpx.AsyncClient, namespace: str, word: str) -> list[str]:
    """Ids of memories the keyword side matched for the word (a vector hit alone is not one)."""
    reply = await api.post(
        "/api/memories/search",
        json={"query": word, "namespace": namespace, "limit": 50, "include_metadata": True},
    )
    assert reply.status_code == 200, reply.text
    return [r["memory"]["id"] for r in reply.json()["results"] if r["fts_score"] > 0]


async def tagged(api: httpx.AsyncClient, namespace: str, tag: str) -> int:
    reply = await api.post(
        "/api/memories/search",
        json={"query": "notes", "namespace": namespace, "tags": [tag], "include_metadata": True},
    )
    assert reply.status_code == 200, reply.text
    return len(reply.json()["results"])


def transcript(*texts: str, command: str) -> str:
    def event(block: dict[str, object]) -> str:
        return json.dumps({"type": "assistant", "message": {"content": [block]}})

    lines = [event({"type": "text", "text": t}) for t in texts]
    lines.append(event({"type": "tool_use", "name": "Bash", "input": {"command": command}}))
    return "\n".join(lines)


async def ok(reply: httpx.Response, status: int = 200) -> dict[str, Any]:
    assert reply.status_code == status, reply.text
    body: dict[str, Any] = reply.json()
    return body


async def write_everything(
    api: httpx.AsyncClient, ns: str, s: Secrets, control: Secrets
) -> list[str]:
    """Every write path with a secret in each of its text fields; returns the memory ids."""
    ids: list[str] = []
    topics = {
        "plain": "The deploy pipeline runs on merge to main",
        "nested": "Grafana dashboards moved to the ops folder",
        "attributes": "The staging database is refreshed nightly",
        "whitespace": "Feature flags are read from the settings table",
        "case": "The billing export runs every Monday morning",
        "multiline": "On-call rotations change on Wednesdays",
        "unclosed": "Backups are copied to the second region",
    }
    for shape, topic in topics.items():
        body = await ok(
            await api.post(
                "/api/memories",
                json={
                    "content": f"{topic} {control(f'content-{shape}')}. "
                    f"{private(s(f'content-{shape}'), shape)}",
                    "namespace": ns,
                },
            ),
            201,
        )
        ids.append(body["id"])

    body = await ok(
        await api.post(
            "/api/memories",
            json={
                "content": f"Release checklist lives in the wiki {control('fields')}.",
                "namespace": ns,
                "tags": ["release", private(s("tag")), f"ops{private(s('tag-part'), 'case')}"],
                "metadata": {
                    "ticket": f"T-9 {private(s('meta-value'))}",
                    private(s("meta-key")): "kept?",
                    "nested": {"list": [private(s("meta-deep"), "attributes")]},
                },
                "source_uri": f"https://wiki.example/{private(s('source-uri'))}release",
                "agent": f"coder{private(s('agent'))}",
                "session_id": private(s("session-id")),
                "conversation_id": f"c-1{private(s('conversation-id'), 'unclosed')}",
                "provider": f"acme{private(s('provider'))}",
                "model_id": f"m-1{private(s('model-id'))}",
                "model_name": f"big{private(s('model-name'))}",
            },
        ),
        201,
    )
    fields_id = body["id"]
    ids.append(fields_id)

    await ok(
        await api.patch(
            f"/api/memories/{fields_id}",
            json={
                "content": f"Release checklist lives in the wiki {control.words['fields']}, "
                f"page two {control('patch')}. "
                f"{private(s('patch-content'), 'nested')}",
                "tags": ["release", private(s("patch-tag"))],
                "metadata": {"owner": f"ops {private(s('patch-meta'))}"},
                "source_uri": f"https://wiki.example/{private(s('patch-uri'))}two",
                "agent": private(s("patch-agent")),
            },
        )
    )

    body = await ok(
        await api.post(
            "/api/memories/import",
            json={
                "memories": [
                    {
                        "content": f"Imported: the CDN caches for an hour {control('import')} "
                        f"{private(s('import-content'), 'whitespace')}",
                        "namespace": ns,
                        "tags": [private(s("import-tag"))],
                        "metadata": {"from": private(s("import-meta"))},
                    }
                ]
            },
        )
    )
    ids.extend(r["id"] for r in body["results"] if r["id"])

    document = (
        f"## Setup\nInstall the CLI first {control('markdown')} and then "
        f"<private>begin {s('markdown-span')}\n\n## Keys\nstill inside {s('markdown-span')}"
        f"</private> and this is public again after the block.\n\n"
        f"## Usage\nRun the sync every hour; it is idempotent and cheap enough. "
        f"{private(s('markdown-tail'), 'unclosed')}\n\n## Secrets\n{s('markdown-unclosed')}"
    )
    body = await ok(
        await api.post(
            "/api/memories/ingest",
            json={
                "files": [
                    {"name": f"handbook{private(s('markdown-name'))}.md", "content": document}
                ],
                "namespace": ns,
            },
        )
    )
    ids.extend(i for f in body["files"] for i in f["memory_ids"])

    session = transcript(
        f"We decided to rotate the tokens weekly {control('digest')}.",
        f"We decided to keep {private(s('digest-text'))} out of the repo.",
        f"Turns out the cause was <private>{s('digest-span')}. We decided on that.",
        f"We decided {s('digest-span')} stays.</private> The approach is sound.",
        command=f"ls {private(s('digest-command'))}",
    )
    body = await ok(
        await api.post(
            "/api/memories/digest-session",
            json={
                "transcript": session,
                "namespace": ns,
                "project": f"atlas{private(s('digest-project'))}",
                "agent": private(s("digest-agent")),
            },
        ),
        201,
    )
    ids.append(body["memory"]["id"])

    goal = await ok(
        await api.post(
            "/api/goals",
            json={
                "namespace": ns,
                "title": f"Ship v2 {control('goal')} {private(s('goal-title'), 'case')}",
                "description": f"Because {private(s('goal-description'), 'nested')}",
                "metadata": {"why": private(s("goal-meta"))},
            },
        ),
        201,
    )
    goal_id = goal["id"]
    await ok(
        await api.patch(
            f"/api/goals/{goal_id}",
            json={"title": f"Ship v2 {control.words['goal']} {private(s('goal-retitle'))}"},
        )
    )
    await ok(
        await api.post(
            f"/api/goals/{goal_id}/milestones",
            json={"title": f"Design review {private(s('milestone-title'), 'attributes')}"},
        ),
        201,
    )
    progress = await ok(
        await api.post(
            f"/api/goals/{goal_id}/progress",
            json={
                "content": f"Finished the API review {private(s('progress'))}",
                "tags": [private(s("progress-tag"))],
            },
        ),
        201,
    )
    ids.append(progress["memory"]["id"])

    entity = await ok(
        await api.post(
            "/api/entities",
            json={
                "namespace": ns,
                "name": f"Atlas {control('entity')} {private(s('entity-name'))}",
                "aliases": ["atl", private(s("entity-alias")), f"AT{private(s('alias-part'))}"],
                "tags": [private(s("entity-tag"))],
                "metadata": {"note": private(s("entity-meta"))},
            },
        ),
        201,
    )
    await ok(
        await api.patch(
            f"/api/entities/{entity['id']}",
            json={
                "name": f"Atlas {control.words['entity']} project {private(s('entity-rename'))}",
                "aliases": [f"atlas-{private(s('entity-realias'), 'whitespace')}"],
            },
        )
    )
    return ids


async def test_private_text_reaches_no_row_file_message_log_or_index(
    api: httpx.AsyncClient,
    exo_stack: Stack,
    postgres_server: EmbeddedPostgres,
    stack_db: Db,
    namespace: str,
    tap: Tap,
) -> None:
    secret, control = Secrets(), Secrets()
    ids = await write_everything(api, namespace, secret, control)

    # A search whose query is partly private, in a namespace with nothing: a recorded miss.
    empty = f"{namespace}-empty"
    miss = control("miss")
    reply = await api.post(
        "/api/memories/search",
        json={"query": f"{miss} {private(secret('query'), 'unclosed')}", "namespace": empty},
    )
    assert (await ok(reply))["count"] == 0

    # Let the enrichment worker and the search recorder finish with all of it.
    for memory_id in dict.fromkeys(ids):
        await wait_enriched(api, memory_id)
    for _ in range(300):
        cur = await stack_db.execute(
            "SELECT query FROM search_misses WHERE namespace = %s", (empty,)
        )
        recorded = [r["query"] for r in await cur.fetchall()]
        if recorded:
            break
        await asyncio.sleep(0.1)
    assert recorded == [miss], recorded

    words = secret.words
    # The stack's files: its data directory (indexes, NATS store, logs) and the Postgres
    # data directory (tables and write-ahead log).
    roots = [exo_stack.config.data_dir, Path(postgres_server.data_dir)]
    # Each check sees what was stored in the open: every control word is in a row; the miss
    # (the one event that carries text) is on NATS and in the stream's files; the rows' words
    # are in Postgres's files.
    assert set(await rows_holding(stack_db, control.words)) == set(control.words)
    assert "miss" in tap.holding(control.words)
    assert {"miss", "fields"} <= set(files_holding(roots, control.words))

    assert await rows_holding(stack_db, words) == {}
    assert tap.holding(words) == {}
    assert logs_holding(exo_stack, words) == {}
    assert files_holding(roots, words) == {}

    # Last (these searches are recorded themselves): the keyword index holds no secret word
    # and no secret tag, while it does hold the control words.
    assert await keyword_hits(api, namespace, control.words["fields"])
    assert await tagged(api, namespace, "release") > 0
    for label, word in words.items():
        assert await keyword_hits(api, namespace, word) == [], label
    for label in ("tag", "tag-part", "patch-tag", "import-tag", "progress-tag"):
        assert await tagged(api, namespace, words[label]) == 0, label


async def test_a_required_field_left_empty_by_private_blocks_is_refused_by_name(
    api: httpx.AsyncClient, namespace: str
) -> None:
    word = Secrets()("refused")
    hidden = f"<private>{word}</private>"
    cases: list[tuple[str, str, dict[str, Any], str]] = [
        ("POST", "/api/memories", {"content": hidden, "namespace": namespace}, "content"),
        ("POST", "/api/goals", {"title": hidden, "namespace": namespace}, "title"),
        ("POST", "/api/entities", {"name": hidden, "namespace": namespace}, "name"),
        ("POST", "/api/memories/search", {"query": hidden, "namespace": namespace}, "query"),
    ]
    for method, path, body, name in cases:
        reply = await api.request(method, path, json=body)
        assert reply.status_code == 400, (path, reply.text)
        assert reply.json()["field"] == name, (path, reply.text)
        assert word not in reply.text


CHAT_KEYS = ("ai.api_key", "ai.provider", "ai.model", "ai.base_url")


@pytest_asyncio.fixture
async def ai_settings(api: httpx.AsyncClient) -> AsyncIterator[None]:
    """Settings are global: clear the AI keys before and after."""
    await api.patch("/api/settings", json=dict.fromkeys(CHAT_KEYS, ""))
    yield
    await api.patch("/api/settings", json=dict.fromkeys(CHAT_KEYS, ""))


async def test_chat_sends_no_private_text_to_the_llm(
    api: httpx.AsyncClient, namespace: str, ai_settings: None, httpserver: HTTPServer
) -> None:
    secret = Secrets()
    seen: list[bytes] = []

    def handler(request: Request) -> Response:
        seen.append(request.get_data())
        body = {"choices": [{"message": {"content": "It is NATS [1]"}}]}
        return Response(json.dumps(body), content_type="application/json")

    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(handler)
    await ok(
        await api.post(
            "/api/memories",
            json={
                "content": f"The event bus is NATS JetStream. {private(secret('memory'))}",
                "namespace": namespace,
            },
        ),
        201,
    )
    await ok(
        await api.patch(
            "/api/settings",
            json={
                "ai.api_key": "sk-test-123456",
                "ai.provider": "openai",
                "ai.base_url": httpserver.url_for("/"),
            },
        )
    )
    reply = await api.post(
        "/api/chat",
        json={
            "message": f"Which event bus do we use? {private(secret('message'), 'nested')}",
            "namespace": namespace,
            "history": [
                {"role": "user", "content": private(secret("history-user"))},
                {"role": "assistant", "content": f"Hello {private(secret('history'), 'case')}"},
            ],
        },
    )
    assert (await ok(reply))["response"] == "It is NATS [1]"
    assert len(seen) == 1
    sent = json.loads(seen[0])
    assert "The event bus is NATS JetStream." in sent["messages"][0]["content"]
    assert sent["messages"][1:] == [
        {"role": "assistant", "content": "Hello"},
        {"role": "user", "content": "Which event bus do we use?"},
    ]
    assert not [label for label, w in secret.words.items() if w.encode() in seen[0].lower()]
