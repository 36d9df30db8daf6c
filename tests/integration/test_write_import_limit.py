"""The import batch limits: the gateway's ``EXO_MAX_IMPORT_BATCH`` (1,000 memories a request by
default) and the hard ceiling of every caller (``IMPORT_MAX``, 10,000, held by the request schema
and by ingest itself, as a gRPC caller need not be the gateway). A batch over a limit is refused
as a whole with a 400 naming ``memories`` and saying what to do, and nothing of it is stored."""

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
from exocortex.testing.gateway import serve_gateway

Conn = psycopg.AsyncConnection[dict[str, Any]]


async def _count(db: Conn, namespace: str) -> int:
    cur = await db.execute("SELECT count(*) AS n FROM memories WHERE namespace = %s", (namespace,))
    row = await cur.fetchone()
    assert row is not None
    return int(row["n"])


async def test_an_import_over_the_gateways_batch_limit_is_a_clear_400(
    api: httpx.AsyncClient, stack_db: Conn, namespace: str
) -> None:
    memories = [{"content": f"note {i}", "namespace": namespace} for i in range(1_001)]
    reply = await api.post("/api/memories/import", json={"memories": memories})
    assert reply.status_code == 400, reply.text
    problem = reply.json()
    assert problem["field"] == "memories", problem
    assert "at most 1000 memories per import request; split the import" in problem["detail"]
    assert await _count(stack_db, namespace) == 0


async def test_the_batch_limit_is_set_by_exo_max_import_batch(
    exo_stack: Stack, stack_db: Conn, namespace: str
) -> None:
    memories = [{"content": f"limit note {i}", "namespace": namespace} for i in range(4)]
    async with (
        serve_gateway(exo_stack, EXO_MAX_IMPORT_BATCH="3") as url,
        httpx.AsyncClient(base_url=url, timeout=60.0) as client,
    ):
        over = await client.post("/api/memories/import", json={"memories": memories})
        assert over.status_code == 400, over.text
        assert "at most 3 memories" in over.json()["detail"]
        assert await _count(stack_db, namespace) == 0
        within = await client.post("/api/memories/import", json={"memories": memories[:3]})
        assert within.status_code == 200, within.text
        assert within.json()["imported"] == 3
    assert await _count(stack_db, namespace) == 3


async def test_an_import_over_the_ceiling_is_a_clear_400(
    api: httpx.AsyncClient, stack_db: Conn, namespace: str
) -> None:
    memories = [{"content": f"note {i}", "namespace": namespace} for i in range(IMPORT_MAX + 1)]
    reply = await api.post("/api/memories/import", json={"memories": memories})
    assert reply.status_code == 400, reply.text
    problem = reply.json()
    assert problem["field"].startswith("memories"), problem
    assert str(IMPORT_MAX) in problem["detail"].replace(",", ""), problem
    assert await _count(stack_db, namespace) == 0


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
