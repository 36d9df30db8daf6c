"""A store while NATS is down (stopped, not killed: a planned restart) still commits, and is
indexed once NATS is back. On the fault tests' shared stack."""

from __future__ import annotations

import time

import httpx
import pytest

from exocortex.core.runtime.stack import Stack

pytestmark = pytest.mark.e2e


def _search(client: httpx.Client, query: str) -> list[str]:
    reply = client.post("/api/memories/search", json={"query": query})
    assert reply.status_code == 200, reply.text
    return [r["memory"]["id"] for r in reply.json()["results"]]


def test_store_during_nats_outage_is_kept_and_indexed_later(fault_stack: Stack) -> None:
    stack = fault_stack
    with httpx.Client(base_url=stack.gateway_url, timeout=60) as client:
        nats = stack.embedded_nats
        assert nats is not None
        nats.stop()
        stored = client.post(
            "/api/memories",
            json={"content": "Outage note: the backup generator is tested every first Monday."},
        )
        # Committed and acknowledged, but it cannot be searchable yet.
        assert stored.status_code == 201, stored.text
        memory = stored.json()
        assert memory["indexed"] is False
        assert client.get(f"/api/memories/{memory['id']}").status_code == 200

        nats.start()
        deadline = time.monotonic() + 60
        found: list[str] = []
        while time.monotonic() < deadline:
            found = _search(client, "when is the backup generator tested?")
            if memory["id"] in found:
                break
            time.sleep(0.5)
        assert memory["id"] in found
