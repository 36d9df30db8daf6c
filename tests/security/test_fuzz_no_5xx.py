"""Generated requests (valid and invalid) to every operation of the keyed gateway, sent with
the all-namespace read-write key so they reach the routes' own validation and the services
behind them: none may get a 5xx.

Bounded: a few examples per operation, no shrinking, and a time budget of about two minutes
(operations not reached within it are left out, and too few reached fails the test)."""

from __future__ import annotations

import asyncio

from schemathesis.checks import not_a_server_error

from exocortex.testing.fuzz import fuzz_operations
from exocortex.testing.keyed import ADMIN, Keyed

MAX_EXAMPLES = 3
BUDGET_SECONDS = 120.0


async def test_no_generated_request_gets_a_5xx(keyed: Keyed) -> None:
    # Blocking HTTP calls, so in a thread: the gateway under test runs on this event loop.
    report = await asyncio.to_thread(
        fuzz_operations,
        keyed.url,
        [not_a_server_error],
        max_examples=MAX_EXAMPLES,
        headers={"Authorization": f"Bearer {ADMIN}"},
        budget_seconds=BUDGET_SECONDS,
    )
    print(f"fuzz: {report.cases} cases over {report.operations} operations")
    assert report.operations >= 30
    assert not report.failures, "\n\n".join(report.failures)
