"""When a failed event is delivered again, and when it is given up on (parked).

A handler fails for one of two reasons. Either the event itself cannot be handled (it would fail
the same way on every delivery: after a few tries it is parked in the dead-letter stream, so the
events behind it go on), or something it needs is away for a while: Postgres restarting, the
retrieval or embedding service starting up, a call timing out under load. An outage says nothing
about the event, and an outage longer than a few retries must not park every event that arrived
during it, so such failures are retried with a growing delay for much longer before the event is
parked."""

from __future__ import annotations

from dataclasses import dataclass

import grpc
import psycopg

from exocortex.core.errors import Unavailable

# The gRPC codes of a peer that is away, starting, or too slow to answer right now.
_TRANSIENT_CODES = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` says a dependency is away for now, rather than that the event is bad."""
    if isinstance(exc, Unavailable | psycopg.OperationalError | ConnectionError | TimeoutError):
        return True
    if isinstance(exc, grpc.aio.AioRpcError):
        return exc.code() in _TRANSIENT_CODES
    return False


@dataclass(frozen=True)
class RedeliveryPolicy:
    """``max_deliveries`` deliveries, ``retry_delay`` apart, for an event that fails on its own;
    for an outage, delays that double from ``retry_delay`` up to ``max_retry_delay`` until
    ``max_outage_deliveries`` (with the defaults: about an hour and a half of retries)."""

    max_deliveries: int
    retry_delay: float
    max_outage_deliveries: int = 200
    max_retry_delay: float = 30.0

    def delay(self, delivered: int, exc: BaseException) -> float | None:
        """Seconds until the next delivery, or None to park the event now."""
        if is_transient(exc):
            if delivered >= self.max_outage_deliveries:
                return None
            doubled: float = self.retry_delay * 2.0 ** min(max(delivered - 1, 0), 16)
            return min(doubled, max(self.max_retry_delay, self.retry_delay))
        if delivered >= self.max_deliveries:
            return None
        return self.retry_delay
