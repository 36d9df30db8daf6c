"""A crash of embedded NATS heals: ``exo up`` starts it again on the same port and data, a
memory stored meanwhile is searchable (projected ahead of its event) and its event reaches
enrichment once NATS is back, and a gateway restarted while NATS is down serves reads at once
and says which part is missing."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest

from exocortex.core.runtime.stack import Stack
from exocortex.testing.wait import until

pytestmark = pytest.mark.e2e

Supervise = Callable[[Stack], AbstractContextManager[Any]]

CONVERGE_SECONDS = 60.0


def _pid_gone(pid: int) -> bool:
    """Neither running nor left as a zombie (an exited child nobody reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[-1].split()[0] == "X"


def _indexed_hits(results: list[dict[str, Any]]) -> set[str]:
    """Hits found by an index. A memory that is only in Postgres can still be served (as the
    arrival neighbour of a memory stored just before it), which proves nothing about the
    projection."""
    return {
        r["memory"]["id"]
        for r in results
        if r["score_breakdown"]["vector_rank"] or r["score_breakdown"]["keyword_rank"]
    }


def _wait_searchable(client: httpx.Client, memory_id: str, query: str) -> float:
    """Seconds until the memory is found by a search (fails after CONVERGE_SECONDS)."""
    started = time.monotonic()
    while time.monotonic() - started < CONVERGE_SECONDS:
        reply = client.post("/api/memories/search", json={"query": query})
        if reply.status_code == 200 and memory_id in _indexed_hits(reply.json()["results"]):
            return time.monotonic() - started
        time.sleep(0.25)
    pytest.fail(f"{memory_id} not searchable {CONVERGE_SECONDS:.0f}s after the crash")


def _wait_enriched(client: httpx.Client, memory_id: str, which: str) -> None:
    """Until the memory's event has reached enrichment (it went out once NATS was back)."""
    until(
        lambda: client.get(f"/api/memories/{memory_id}").json()["enrichment_status"],
        what=f"the memory {which} is enriched once NATS is back",
        seconds=CONVERGE_SECONDS,
        interval=0.25,
        retry_on=(httpx.TransportError,),
        accept=lambda status: status == "done",
    )


def _store(client: httpx.Client, content: str) -> dict[str, object]:
    reply = client.post("/api/memories", json={"content": content})
    assert reply.status_code == 201, reply.text
    body: dict[str, object] = reply.json()
    return body


def test_killed_nats_is_restarted_and_the_stack_catches_up(
    fault_stack: Stack, supervise: Supervise
) -> None:
    stack = fault_stack
    with (
        supervise(stack) as supervisor,
        httpx.Client(base_url=stack.gateway_url, timeout=30) as client,
    ):
        nats = stack.embedded_nats
        assert nats is not None
        assert nats.pid is not None
        port = nats.port

        # 1. Killed while the supervisor watches: back on its own; what was stored right after
        # the crash is searchable at once, and its event reaches enrichment once NATS is back.
        first_pid = nats.pid
        killed = time.monotonic()
        os.kill(first_pid, signal.SIGKILL)
        memory = _store(client, "Crash note: the sump pump in the cellar is checked every May.")
        waited = _wait_searchable(client, str(memory["id"]), "when is the sump pump checked?")
        assert waited < CONVERGE_SECONDS
        until(
            lambda: nats.pid,
            what="the supervisor starts nats-server again",
            seconds=CONVERGE_SECONDS,
            interval=0.2,
            accept=lambda pid: pid not in (None, first_pid),
        )
        _wait_enriched(client, str(memory["id"]), "stored during the outage")
        converged = time.monotonic() - killed
        assert nats.port == port
        assert _pid_gone(first_pid), "the killed nats-server was left a zombie"
        print(
            f"\nNATS SIGKILL → memory stored during the outage searchable in {waited:.1f}s, "
            f"enriched {converged:.1f}s after the crash"
        )

        # 2. Killed while the supervisor is slow to act; the gateway crashes meanwhile. Started
        # again during the outage, it serves reads and names NATS as the missing part.
        supervisor.paused.set()
        second_pid = nats.pid
        assert second_pid is not None
        os.kill(second_pid, signal.SIGKILL)
        killed = time.monotonic()
        deadline = killed + 10
        while client.get("/health").json()["dependencies"]["nats"]["status"] == "ok":
            assert time.monotonic() < deadline, "the gateway never noticed NATS was gone"
            time.sleep(0.2)
        during = _store(client, "Outage note: the attic window is closed before every storm.")
        # Searchable at once: the retrieval projects it ahead of its event.
        assert during["indexed"] is True

        stack.kill_part("gateway")
        stack.start_part("gateway")
        restarted = time.monotonic()
        health = until(
            lambda: client.get("/health"),
            what="the gateway serves while NATS is down",
            seconds=60,
            interval=0.2,
            retry_on=(httpx.TransportError,),
            accept=lambda reply: reply is not None,
        )
        serving = time.monotonic() - restarted
        print(f"gateway restarted during the NATS outage: serving in {serving:.1f}s")
        assert health.status_code == 503
        assert health.json()["status"] == "degraded"
        dependencies = health.json()["dependencies"]
        assert dependencies["nats"]["status"] == "down"
        assert dependencies["postgres"]["status"] == "ok"
        read = client.get(f"/api/memories/{during['id']}")
        assert read.status_code == 200, read.text
        assert client.post("/api/memories/search", json={"query": "sump pump"}).status_code == 200

        resumed = time.monotonic()
        supervisor.paused.clear()
        _wait_searchable(client, str(during["id"]), "when is the attic window closed?")
        # Its event, published once NATS is back, reaches enrichment: the stack caught up.
        _wait_enriched(client, str(during["id"]), "stored during the held restart")
        print(
            f"NATS back after a held restart → outage memory enriched "
            f"{time.monotonic() - resumed:.1f}s after the supervisor resumed"
        )
        assert nats.pid not in (None, second_pid)
        assert nats.port == port
        assert _pid_gone(second_pid), "the killed nats-server was left a zombie"
        deadline = time.monotonic() + 30
        while client.get("/health").status_code != 200:
            assert time.monotonic() < deadline, client.get("/health").text
            time.sleep(0.5)
