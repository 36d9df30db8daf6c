"""A crash of embedded Postgres heals: ``exo up`` starts it again on the same port and data,
stores work again, and every store acknowledged before or after the crash is kept. A service
started while Postgres is down waits for it, reporting itself as starting meanwhile."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from exocortex.core.runtime.stack import Stack
from exocortex.testing.wait import until

pytestmark = pytest.mark.e2e

Supervise = Callable[[Stack], AbstractContextManager[Any]]
CONVERGE_SECONDS = 60.0


def _postmaster_pid(data_dir: Path) -> int:
    return int((data_dir / "postmaster.pid").read_text().split("\n", 1)[0])


def _grpc_health(addr: str) -> str:
    """The server's overall health status name, or ``UNREACHABLE`` when nothing answers."""
    with grpc.insecure_channel(addr) as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=""), timeout=2
            )
        except grpc.RpcError:
            return "UNREACHABLE"
    return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))


def test_killed_postgres_is_restarted_and_nothing_acknowledged_is_lost(
    fault_stack: Stack, supervise: Supervise
) -> None:
    # The shared fault stack commits durably, as `exo up` runs it: an acknowledged store must
    # survive the crash.
    stack = fault_stack
    with (
        supervise(stack) as supervisor,
        httpx.Client(base_url=stack.gateway_url, timeout=30) as client,
    ):
        postgres = stack.embedded_postgres
        assert postgres is not None
        port = postgres.port
        acknowledged: list[str] = []
        for n in range(3):
            reply = client.post(
                "/api/memories", json={"content": f"Before the crash, note {n}: valve {n} shut."}
            )
            assert reply.status_code == 201, reply.text
            acknowledged.append(reply.json()["id"])

        old_pid = _postmaster_pid(postgres.data_dir)
        os.kill(old_pid, signal.SIGKILL)
        killed = time.monotonic()
        failed = 0
        stored: dict[str, Any] | None = None
        while time.monotonic() - killed < CONVERGE_SECONDS:
            answer: httpx.Response | None
            try:
                answer = client.post(
                    "/api/memories",
                    json={"content": "After the crash: the boiler pressure is checked weekly."},
                )
            except httpx.TransportError:
                answer = None
            if answer is not None and answer.status_code == 201:
                stored = answer.json()
                break
            failed += 1
            time.sleep(0.25)
        assert stored is not None, f"no store succeeded {CONVERGE_SECONDS:.0f}s after the crash"
        stores_back = time.monotonic() - killed
        acknowledged.append(str(stored["id"]))

        new_pid = _postmaster_pid(postgres.data_dir)
        assert new_pid != old_pid, "postgres was not started again"
        assert postgres.port == port

        # Searchable again too: the projector reads rows from the restarted server.
        while time.monotonic() - killed < CONVERGE_SECONDS:
            found = client.post(
                "/api/memories/search", json={"query": "how often is the boiler pressure checked?"}
            )
            if found.status_code == 200 and stored["id"] in [
                r["memory"]["id"]
                for r in found.json()["results"]
                if r["score_breakdown"]["vector_rank"] or r["score_breakdown"]["keyword_rank"]
            ]:
                break
            time.sleep(0.25)
        else:
            pytest.fail("the store made after the crash never became searchable")
        converged = time.monotonic() - killed
        print(
            f"\nPostgres SIGKILL → stores back in {stores_back:.1f}s ({failed} refused meanwhile), "
            f"the new memory searchable in {converged:.1f}s"
        )
        for memory_id in acknowledged:
            read = client.get(f"/api/memories/{memory_id}")
            assert read.status_code == 200, f"acknowledged {memory_id} lost: {read.text}"
        deadline = time.monotonic() + 30
        while client.get("/health").status_code != 200:
            assert time.monotonic() < deadline, client.get("/health").text
            time.sleep(0.5)

        # A service that starts while Postgres is down waits for it instead of exiting (an exit
        # would count towards the supervisor stopping the whole stack).
        supervisor.paused.set()
        os.kill(_postmaster_pid(postgres.data_dir), signal.SIGKILL)
        stack.kill_part("ingest")
        stack.start_part("ingest")
        # Meanwhile it listens and says it is starting, so the gateway can tell it from a crash.
        # Watched for longer than the pool's 30 s connect timeout: a service that gave up opening
        # its pool there would have exited by now.
        ingest_addr = f"127.0.0.1:{stack.config.grpc_ports['ingest']}"
        waiting = time.monotonic()
        seen_starting: float | None = None
        seen_by_gateway: float | None = None
        while time.monotonic() - waiting < 35:
            if seen_starting is None and _grpc_health(ingest_addr) == "NOT_SERVING":
                seen_starting = time.monotonic() - waiting
            if seen_by_gateway is None and seen_starting is not None:
                # The gateway's channel may still be in its reconnect backoff (at most 2 s).
                health = client.get("/health")
                assert health.status_code == 503
                if health.json()["dependencies"]["ingest"]["status"] == "starting":
                    seen_by_gateway = time.monotonic() - waiting
            time.sleep(0.5)
        assert seen_starting is not None, "ingest never answered health while Postgres was down"
        assert seen_by_gateway is not None, "the gateway never reported ingest as starting"
        print(
            f"ingest restarted without Postgres: health NOT_SERVING after {seen_starting:.1f}s, "
            f"/health says starting after {seen_by_gateway:.1f}s"
        )
        ingest = stack.process("ingest")
        assert ingest.poll() is None, f"ingest exited ({ingest.returncode}) without Postgres"
        resumed = time.monotonic()
        supervisor.paused.clear()
        note = {"content": "Ingest waited for the database."}
        until(
            lambda: client.post("/api/memories", json=note).status_code,
            what="stores came back (201) after ingest started without Postgres",
            seconds=CONVERGE_SECONDS,
            interval=0.25,
            retry_on=(httpx.TransportError,),
            accept=lambda status: status == 201,
        )
        assert ingest.poll() is None, "ingest restarted: it did not wait for Postgres"
        assert _grpc_health(ingest_addr) == "SERVING"
        assert client.get("/health").json()["dependencies"]["ingest"]["status"] == "ok"
        print(
            f"ingest started without Postgres waited; stores back "
            f"{time.monotonic() - resumed:.1f}s after Postgres was let back"
        )
