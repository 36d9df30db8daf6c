"""The server's own files: over the API a client sends a document's content; the server reads a
named file only inside the operator's import folder (``EXO_IMPORT_ROOT``), and never through
``..``, an absolute path elsewhere, ``~`` or a symbolic link that leads out of it."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import httpx
import psycopg
import pytest
import pytest_asyncio

from exocortex.core.rpc.client import open_channel
from exocortex.core.runtime.ports import free_port
from exocortex.core.runtime.stack import Stack
from exocortex.proto.v1 import ingest_pb2, ingest_pb2_grpc
from exocortex.testing.gateway import serve_gateway
from exocortex.testing.keyed import keys_for
from exocortex.testing.processes import listening_process

from .conftest import ADMIN, Keyed

SECTION = "This section carries enough body text to become a memory of its own, clearly. "
SECRET = "hunter2-the-operator-secret"

# Paths a caller might name to read the server's own files.
ESCAPES = [
    "/etc/passwd",
    "/etc/*",
    "~/.ssh/*",
    "~/.ssh/id_rsa",
    "../../../../etc/passwd",
    "notes/../../outside/secret.md",
]


def _transcript() -> str:
    line = {
        "type": "assistant",
        "message": {
            "content": [
                {"type": "tool_use", "name": "Edit", "input": {"file_path": "/w/kiln/a.py"}},
                {"type": "text", "text": "We decided to cache the kiln temperatures."},
            ]
        },
    }
    return json.dumps(line)


async def _stored_rows(
    db: psycopg.AsyncConnection[dict[str, Any]], namespace: str
) -> list[dict[str, Any]]:
    cur = await db.execute(
        "SELECT content, source_uri FROM memories WHERE namespace = %s", (namespace,)
    )
    return await cur.fetchall()


async def _nothing_secret_stored(db: psycopg.AsyncConnection[dict[str, Any]]) -> None:
    cur = await db.execute(
        "SELECT count(*) AS n FROM memories WHERE content LIKE %s OR content LIKE %s",
        (f"%{SECRET}%", "%root:x:0:0%"),
    )
    row = await cur.fetchone()
    assert row is not None
    assert row["n"] == 0


async def test_a_path_over_rest_is_refused_without_an_import_folder(
    keyed: Keyed, stack_db: psycopg.AsyncConnection[dict[str, Any]]
) -> None:
    for path in [*ESCAPES, "notes.md", "*.md"]:
        reply = await keyed.admin.post(
            "/api/memories/ingest", json={"files": [{"path": path}], "namespace": keyed.a}
        )
        assert reply.status_code == 400, (path, reply.text)
        assert "send the document's text as `content`" in reply.json()["detail"]
        assert reply.json()["field"] == "files.0.path"
        digest = await keyed.admin.post(
            "/api/memories/digest-session", json={"transcript_path": path, "namespace": keyed.a}
        )
        assert digest.status_code == 400, (path, digest.text)
        assert "`transcript`" in digest.json()["detail"]
    # The old shape (a path naming sent content) is refused too, not read as a path.
    mixed = await keyed.admin.post(
        "/api/memories/ingest",
        json={"files": [{"path": "/etc/passwd", "content": "x"}], "namespace": keyed.a},
    )
    assert mixed.status_code == 400
    assert await _stored_rows(stack_db, keyed.a) == []
    await _nothing_secret_stored(stack_db)


async def test_content_sent_by_the_client_is_ingested_under_its_name(
    keyed: Keyed, stack_db: psycopg.AsyncConnection[dict[str, Any]]
) -> None:
    reply = await keyed.rw.post(
        "/api/memories/ingest",
        json={
            "files": [{"name": "handbook.md", "content": f"## One\n{SECTION}\n## Two\n{SECTION}2"}],
            "namespace": keyed.a,
        },
    )
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["stored"] == 2
    assert body["files"][0]["name"] == "handbook.md"
    assert len(body["files"][0]["memory_ids"]) == 2
    rows = await _stored_rows(stack_db, keyed.a)
    assert {r["source_uri"] for r in rows} == {"handbook.md"}
    digest = await keyed.rw.post(
        "/api/memories/digest-session", json={"transcript": _transcript(), "namespace": keyed.a}
    )
    assert digest.status_code == 201, digest.text


@pytest_asyncio.fixture
async def ingest_stub(exo_stack: Stack) -> AsyncIterator[ingest_pb2_grpc.IngestStub]:
    """The stack's own ingest service, called directly as any gRPC client could."""
    channel = open_channel(exo_stack.env()["EXO_INGEST_ADDR"])
    try:
        yield ingest_pb2_grpc.IngestStub(channel)
    finally:
        await channel.close()


async def test_ingest_itself_refuses_paths_without_an_import_folder(
    ingest_stub: ingest_pb2_grpc.IngestStub,
    namespace: str,
    stack_db: psycopg.AsyncConnection[dict[str, Any]],
) -> None:
    # Defence in depth: a caller that skips the gateway gets no file either.
    for path in ESCAPES:
        with pytest.raises(grpc.aio.AioRpcError) as markdown:
            await ingest_stub.IngestMarkdown(
                ingest_pb2.IngestMarkdownRequest(
                    files=[ingest_pb2.MarkdownFile(source_uri=path)], namespace=namespace
                )
            )
        assert markdown.value.code() == grpc.StatusCode.PERMISSION_DENIED, path
        with pytest.raises(grpc.aio.AioRpcError) as digest:
            await ingest_stub.DigestSession(
                ingest_pb2.DigestSessionRequest(transcript_path=path, namespace=namespace)
            )
        assert digest.value.code() == grpc.StatusCode.PERMISSION_DENIED, path
    assert await _stored_rows(stack_db, namespace) == []
    await _nothing_secret_stored(stack_db)


@dataclass(frozen=True)
class Folders:
    root: Path
    outside: Path


@pytest.fixture
def folders(tmp_path: Path) -> Folders:
    """An import folder with a legit note, a transcript, and two symbolic links that lead out:
    one to a file, one to a directory, both holding a secret."""
    root = tmp_path / "import"
    outside = tmp_path / "outside"
    (root / "notes").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.md").write_text(f"## Secret\n{SECTION} {SECRET}\n")
    (root / "notes" / "alpha.md").write_text(f"## Alpha\n{SECTION} Alpha owls.\n")
    (root / "session.jsonl").write_text(_transcript())
    (root / "links").mkdir()
    (root / "links" / "leak.md").symlink_to(outside / "secret.md")
    (root / "links" / "passwd.md").symlink_to("/etc/passwd")
    (root / "escape").symlink_to(outside, target_is_directory=True)
    return Folders(root, outside)


@pytest.fixture
def rooted_ingest(exo_stack: Stack, folders: Folders) -> Iterator[str]:
    """A second ingest process on the stack's database and NATS whose operator set
    EXO_IMPORT_ROOT; yields its gRPC address."""
    port, metrics = free_port(), free_port()
    env = exo_stack.env() | {
        "EXO_INGEST_LISTEN": f"127.0.0.1:{port}",
        "EXO_INGEST_METRICS_PORT": str(metrics),
        "EXO_IMPORT_ROOT": str(folders.root),
    }
    with listening_process(
        [sys.executable, "-m", "exocortex.ingest"], env, port, what="the second ingest"
    ):
        yield f"127.0.0.1:{port}"


@pytest_asyncio.fixture
async def rooted(
    exo_stack: Stack, folders: Folders, rooted_ingest: str, namespace: str
) -> AsyncIterator[httpx.AsyncClient]:
    """A keyed gateway in front of that ingest, with the same import folder."""
    async with serve_gateway(
        exo_stack,
        EXO_API_KEYS=keys_for(namespace),
        EXO_INGEST_ADDR=rooted_ingest,
        EXO_IMPORT_ROOT=str(folders.root),
    ) as url:
        headers = {"Authorization": f"Bearer {ADMIN}"}
        async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60.0) as client:
            yield client


async def _ingest(client: httpx.AsyncClient, namespace: str, path: str) -> httpx.Response:
    return await client.post(
        "/api/memories/ingest", json={"files": [{"path": path}], "namespace": namespace}
    )


async def test_the_import_folder_serves_its_own_files_and_nothing_else(
    rooted: httpx.AsyncClient,
    folders: Folders,
    namespace: str,
    stack_db: psycopg.AsyncConnection[dict[str, Any]],
) -> None:
    # Escapes the gateway sees in the text of the path.
    for path in [*ESCAPES, str(folders.outside / "secret.md"), "notes/*/x.md"]:
        reply = await _ingest(rooted, namespace, path)
        assert reply.status_code == 400, (path, reply.text)
        digest = await rooted.post(
            "/api/memories/digest-session", json={"transcript_path": path, "namespace": namespace}
        )
        assert digest.status_code == 400, (path, digest.text)
    # Escapes only the file system knows of: symbolic links, found by ingest after resolving.
    for path in ["links/leak.md", "links/passwd.md", "links/*.md", "escape/secret.md"]:
        reply = await _ingest(rooted, namespace, path)
        assert reply.status_code == 403, (path, reply.text)
        assert "outside the import folder" in reply.json()["detail"]
    digest = await rooted.post(
        "/api/memories/digest-session",
        json={"transcript_path": "links/passwd.md", "namespace": namespace},
    )
    assert digest.status_code == 403, digest.text
    assert await _stored_rows(stack_db, namespace) == []
    await _nothing_secret_stored(stack_db)

    # A legit file, by relative path, by glob and by absolute path inside the folder.
    alpha = folders.root / "notes" / "alpha.md"
    for path in ["notes/alpha.md", "notes/*.md", str(alpha)]:
        reply = await _ingest(rooted, namespace, path)
        assert reply.status_code == 200, (path, reply.text)
        assert [f["name"] for f in reply.json()["files"]] == [str(alpha.resolve())]
    rows = await _stored_rows(stack_db, namespace)
    assert len(rows) == 1
    assert "Alpha owls" in rows[0]["content"]
    digest = await rooted.post(
        "/api/memories/digest-session",
        json={"transcript_path": "session.jsonl", "namespace": namespace},
    )
    assert digest.status_code == 201, digest.text
    await _nothing_secret_stored(stack_db)


async def test_ingest_with_a_folder_confines_callers_that_skip_the_gateway(
    rooted_ingest: str, namespace: str, stack_db: psycopg.AsyncConnection[dict[str, Any]]
) -> None:
    channel = open_channel(rooted_ingest)
    stub = ingest_pb2_grpc.IngestStub(channel)
    try:
        for path, code in [
            ("/etc/passwd", grpc.StatusCode.INVALID_ARGUMENT),
            ("../outside/secret.md", grpc.StatusCode.INVALID_ARGUMENT),
            ("~/.ssh/*", grpc.StatusCode.INVALID_ARGUMENT),
            ("links/leak.md", grpc.StatusCode.PERMISSION_DENIED),
            ("escape/*.md", grpc.StatusCode.PERMISSION_DENIED),
        ]:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await stub.IngestMarkdown(
                    ingest_pb2.IngestMarkdownRequest(
                        files=[ingest_pb2.MarkdownFile(source_uri=path)], namespace=namespace
                    )
                )
            assert refused.value.code() == code, path
    finally:
        await channel.close()
    assert await _stored_rows(stack_db, namespace) == []
    await _nothing_secret_stored(stack_db)
