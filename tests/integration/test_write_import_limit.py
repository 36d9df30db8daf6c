"""The import batch limit (``IMPORT_MAX``, 10,000 memories a call): a larger batch is refused
as a whole with a 4xx naming the field, by the gateway and by ingest itself (a gRPC caller need
not be the gateway), and nothing of it is stored."""

from __future__ import annotations

from typing import Any

import grpc
import httpx
import psycopg
import pytest

from exocortex.api.limits import IMPORT_MAX
from exocortex.core.rpc.client import open_channel
from exocortex.core.runtime.stack import Stack
from exocortex.proto.v1 import ingest_pb2, ingest_pb2_grpc

Conn = psycopg.AsyncConnection[dict[str, Any]]


async def _count(db: Conn, namespace: str) -> int:
    cur = await db.execute("SELECT count(*) AS n FROM memories WHERE namespace = %s", (namespace,))
    row = await cur.fetchone()
    assert row is not None
    return int(row["n"])


async def test_an_import_over_the_limit_is_a_clear_400(
    api: httpx.AsyncClient, stack_db: Conn, namespace: str
) -> None:
    memories = [{"content": f"note {i}", "namespace": namespace} for i in range(IMPORT_MAX + 1)]
    reply = await api.post("/api/memories/import", json={"memories": memories})
    assert reply.status_code == 400, reply.text
    problem = reply.json()
    assert problem["field"].startswith("memories"), problem
    assert str(IMPORT_MAX) in problem["detail"].replace(",", ""), problem
    assert await _count(stack_db, namespace) == 0
    # A batch within the limit goes through.
    ok = await api.post("/api/memories/import", json={"memories": memories[:2]})
    assert ok.status_code == 200, ok.text
    assert ok.json()["imported"] == 2


async def test_ingest_refuses_an_import_over_the_limit_itself(
    exo_stack: Stack, stack_db: Conn, namespace: str
) -> None:
    channel = open_channel(f"127.0.0.1:{exo_stack.config.grpc_ports['ingest']}")
    try:
        stub = ingest_pb2_grpc.IngestStub(channel)
        request = ingest_pb2.ImportMemoriesRequest(
            memories=[
                ingest_pb2.StoreMemoryRequest(content=f"note {i}", namespace=namespace)
                for i in range(IMPORT_MAX + 1)
            ]
        )
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.ImportMemories(request, timeout=60)
    finally:
        await channel.close()
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert f"at most {IMPORT_MAX} memories" in str(refused.value.details())
    assert await _count(stack_db, namespace) == 0
