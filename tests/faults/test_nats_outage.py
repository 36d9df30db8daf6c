"""A store while NATS is down (stopped, not killed: a planned restart) still commits and is
searchable at once: the retrieval asked to wait for it projects it from Postgres itself. Its
event, published once NATS is back, then changes nothing, and enrichment catches up. On the
fault tests' shared stack."""

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
        # Committed, acknowledged and searchable: projected ahead of its event.
        assert stored.status_code == 201, stored.text
        memory = stored.json()
        assert memory["indexed"] is True
        assert client.get(f"/api/memories/{memory['id']}").status_code == 200
        assert memory["id"] in _search(client, "when is the backup generator tested?")

        nats.start()
        # The event goes out once NATS is back: enrichment gets it, and the projection it
        # asks for leaves the memory found, once.
        deadline = time.monotonic() + 60
        status = ""
        while time.monotonic() < deadline:
            status = client.get(f"/api/memories/{memory['id']}").json()["enrichment_status"]
            if status == "done":
                break
            time.sleep(0.5)
        assert status == "done", "the event published after the outage never reached enrichment"
        assert _search(client, "when is the backup generator tested?").count(memory["id"]) == 1
