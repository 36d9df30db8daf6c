"""Generated requests (valid and invalid) to every operation of the keyed gateway, sent with
the all-namespace read-write key so they reach the routes' own validation and the services
behind them: none may get a 5xx.

Bounded by a few examples per operation and no shrinking, not by time: every operation is
exercised on any machine, and one that no request reached fails the test."""

from __future__ import annotations

import asyncio

from schemathesis.checks import not_a_server_error

from exocortex.testing.fuzz import fuzz_operations
from exocortex.testing.keyed import ADMIN, Keyed

MAX_EXAMPLES = 3


async def test_no_generated_request_gets_a_5xx(keyed: Keyed) -> None:
    # Blocking HTTP calls, so in a thread: the gateway under test runs on this event loop.
    report = await asyncio.to_thread(
        fuzz_operations,
        keyed.url,
        [not_a_server_error],
        max_examples=MAX_EXAMPLES,
        headers={"Authorization": f"Bearer {ADMIN}"},
    )
    print(f"fuzz: {report.cases} cases over {report.operations} operations")
    assert report.operations >= 30, sorted(report.cases_by_operation)
    assert not report.unexercised(), f"no generated request reached {report.unexercised()}"
    assert not report.failures, "\n\n".join(report.failures)
